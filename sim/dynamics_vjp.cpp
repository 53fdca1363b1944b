// Adjoints of RNEA (bias forces) and CRBA, by running their loops backwards. Conventions of
// sim/spatial.h; the adjoint of a force is handled as a motion and vice versa, which is what the
// transposes of the spatial maps amount to:
//   (X^T as a force map)^T = X as a motion map, and (X as a motion map)^T = X^T as a force map.
#include "sim/adjoint.h"
#include "sim/workspace.h"

namespace diffloco::sim {
namespace {

// out = X.apply(m): adds the adjoint of E given the output adjoint.
void applyEbar(const Transform& X, const Motion& m, const Motion& outBar, Mat3& Ebar) {
  Ebar += outBar.v * (m.v - X.r.cross(m.w)).transpose() + outBar.w * m.w.transpose();
}

// out = X.applyTranspose(f): adds the adjoint of E given the output adjoint.
void applyTransposeEbar(const Transform& X, const Force& f, const Force& outBar, Mat3& Ebar) {
  Ebar += f.f * (outBar.f + outBar.n.cross(X.r)).transpose() + f.n * outBar.n.transpose();
}

Motion asMotion(const Force& f) { return {f.f, f.n}; }
Force asForce(const Motion& m) { return {m.v, m.w}; }

// out = I * a: adds the adjoint of the inertia's parameters.
void inertiaTimesBar(const Motion& a, const Force& outBar, InertiaBar& Ib) {
  Ib.m += outBar.f.dot(a.v);
  Ib.h += outBar.f.cross(a.w) + a.v.cross(outBar.n);
  Ib.Io += outBar.n * a.w.transpose();
}

Vec3 skewVjp(const Mat3& S) {
  return Vec3(S(2, 1) - S(1, 2), S(0, 2) - S(2, 0), S(1, 0) - S(0, 1));
}

}  // namespace

void biasForcesVjp(const Model& model, const Data& data, const Eigen::Ref<const VecX>& v,
                   const Eigen::Ref<const VecX>& tauBar, KinematicsBar& bar, Eigen::Ref<VecX> vbar,
                   DynamicsVjpScratch& scratch) {
  const int nb = model.nbodies();
  const Mat3& R0 = data.R[0];
  // The caller's scratch: no allocation per call.
  std::vector<Force>& fb = scratch.fb;
  std::vector<Motion>& vb = scratch.vb;
  std::vector<Motion>& ab = scratch.ab;
  fb.assign(nb, Force{});
  vb.assign(nb, Motion{});
  ab.assign(nb, Motion{});

  // tau_base = (R0 f0.f, f0.n).
  fb[0].f = R0.transpose() * tauBar.head<3>();
  fb[0].n = tauBar.segment<3>(3);
  bar.R[0] += tauBar.head<3>() * data.f[0].f.transpose();

  // Inward pass, root to leaves: tau_i = axis . n_i, then f_parent += X_i^T f_i.
  for (int i = 1; i < nb; ++i) {
    const Body& b = model.bodies[i];
    const Force& fpb = fb[b.parent];
    fb[i] += asForce(data.X[i].apply(asMotion(fpb)));
    applyTransposeEbar(data.X[i], data.f[i], fpb, bar.E[i]);
    fb[i].n += b.axis * tauBar[5 + i];
  }

  // Outward pass, leaves to root.
  for (int i = nb - 1; i >= 0; --i) {
    const Body& b = model.bodies[i];
    const Inertia& I = b.inertia;
    const Motion& vi = data.vel[i];
    // f_i = I a_i + v_i x* (I v_i).
    const Motion fbm = asMotion(fb[i]);
    ab[i] += Motion{I.m * fbm.v - I.h.cross(fbm.w), I.h.cross(fbm.v) + I.Io * fbm.w};
    inertiaTimesBar(data.acc[i], fb[i], bar.inertia[i]);
    const Force Iv = I * vi;
    vb[i].v += Iv.f.cross(fb[i].n);
    vb[i].w += Iv.f.cross(fb[i].f) + Iv.n.cross(fb[i].n);
    const Motion vxf = cross(vi, fbm);  // (v x*)^T fbar = -v x fbar
    const Force t = I * vxf;
    vb[i].v -= t.f;
    vb[i].w -= t.n;
    inertiaTimesBar(vi, Force{-vxf.v, -vxf.w}, bar.inertia[i]);
    if (i == 0) break;

    const Transform& X = data.X[i];
    const double qd = v[5 + i];
    const Motion& vp = data.vel[b.parent];
    const Motion& ap = data.acc[b.parent];
    // a_i = X a_parent + v_i x (axis qd).
    ab[b.parent] += asMotion(X.applyTranspose(asForce(ab[i])));
    applyEbar(X, ap, ab[i], bar.E[i]);
    vb[i].v += qd * b.axis.cross(ab[i].v);
    vb[i].w += qd * b.axis.cross(ab[i].w);
    double qdb = ab[i].v.dot(vi.v.cross(b.axis)) + ab[i].w.dot(vi.w.cross(b.axis));
    // v_i = X v_parent + axis qd.
    vb[b.parent] += asMotion(X.applyTranspose(asForce(vb[i])));
    applyEbar(X, vp, vb[i], bar.E[i]);
    qdb += b.axis.dot(vb[i].w);
    vbar[5 + i] += qdb;
  }

  // Base: v0 = (R0^T v_lin, w); a0 = (-R0^T g - w x v0.v, 0).
  const Motion& v0 = data.vel[0];
  bar.R[0] -= model.gravity * ab[0].v.transpose();
  vb[0].w += ab[0].v.cross(v0.v);
  vb[0].v += v0.w.cross(ab[0].v);
  vbar.head<3>() += R0 * vb[0].v;
  bar.R[0] += v.head<3>() * vb[0].v.transpose();
  vbar.segment<3>(3) += vb[0].w;
}

void crbaVjp(const Model& model, const Data& data, const MatX& Hbar, KinematicsBar& bar,
             DynamicsVjpScratch& scratch) {
  const int nb = model.nbodies();
  std::vector<InertiaBar>& Icb = scratch.Icb;
  Icb.assign(nb, InertiaBar{});
  const Mat3& R0 = data.R[0];

  // Base block: [m I, -R [h]x; [h]x R^T, Io].
  {
    const Inertia& I0 = data.Ic[0];
    Icb[0].m += Hbar.topLeftCorner<3, 3>().trace();
    const Mat3 Rhb = -Hbar.block<3, 3>(0, 3) - Hbar.block<3, 3>(3, 0).transpose();
    bar.R[0] += Rhb * skew(I0.h).transpose();
    Icb[0].h += skewVjp(R0.transpose() * Rhb);
    Icb[0].Io += Hbar.block<3, 3>(3, 3);
  }

  // Columns: each column's force chain (kept by crba in data.crbaF), run backwards.
  const Force* chain = data.crbaF.data();
  std::vector<int>& path = scratch.path;  // body i and its ancestors but the base
  for (int i = nb - 1; i > 0; --i) {
    const int k = 5 + i;
    const Vec3& axis = model.bodies[i].axis;
    path.clear();
    for (int j = i; j > 0; j = model.bodies[j].parent) path.push_back(j);
    const int m = static_cast<int>(path.size());
    const Force* F = chain;  // F[0] = Ic_i S_i in body i; F[l + 1] = F[l] one level up
    chain += m + 1;

    // Base entries: H[0:3, k] = R0 F.f, H[3:6, k] = F.n (and the symmetric row).
    Force Fb;
    const Vec3 hb = Hbar.block<3, 1>(0, k) + Hbar.block<1, 3>(k, 0).transpose();
    Fb.f = R0.transpose() * hb;
    bar.R[0] += hb * F[m].f.transpose();
    Fb.n = Hbar.block<3, 1>(3, k) + Hbar.block<1, 3>(k, 3).transpose();
    for (int l = m - 1; l >= 0; --l) {
      const int j = path[l];
      applyTransposeEbar(data.X[j], F[l], Fb, bar.E[j]);
      Fb = asForce(data.X[j].apply(asMotion(Fb)));
      // F[l] is expressed in body path[l]; it sets H(k, dof of path[l]).
      const double hkj = l == 0 ? Hbar(k, k) : Hbar(k, 5 + j) + Hbar(5 + j, k);
      Fb.n += model.bodies[j].axis * hkj;
    }
    Icb[i].h += Fb.f.cross(axis);
    Icb[i].Io += Fb.n * axis.transpose();
  }

  // Composite inertias, root to leaves: Ic_parent += Ic_i.toParent(X_i).
  for (int i = 1; i < nb; ++i) {
    const int lam = model.bodies[i].parent;
    const Transform& X = data.X[i];
    const Inertia& I = data.Ic[i];
    const InertiaBar& ob = Icb[lam];
    const Vec3& r = X.r;
    const double tr = ob.Io.trace();
    Icb[i].m += ob.m + ob.h.dot(r) + tr * r.squaredNorm() - r.dot(ob.Io * r);
    const Vec3 hpb = ob.h + 2.0 * tr * r - (ob.Io + ob.Io.transpose()) * r;
    Icb[i].h += X.E * hpb;
    bar.E[i] += I.h * hpb.transpose();
    Icb[i].Io += X.E * ob.Io * X.E.transpose();
    bar.E[i] += I.Io * X.E * (ob.Io + ob.Io.transpose());
  }
  for (int i = 0; i < nb; ++i) {
    bar.inertia[i].m += Icb[i].m;
    bar.inertia[i].h += Icb[i].h;
    bar.inertia[i].Io += Icb[i].Io;
  }
}

}  // namespace diffloco::sim
