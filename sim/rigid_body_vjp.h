// Adjoints of RNEA (bias forces) and CRBA on fixed-size data, their loops run backwards; with
// kParams the bodies' inertia parameters' adjoints too (inertiaBar, NB entries), which the
// instantiation without them leaves out entirely. Each function ADDS to its outputs. The adjoint
// of a force is handled as a motion and vice versa, which is what the transposes of the spatial
// maps amount to: (X^T as a force map)^T = X as a motion map, (X as a motion map)^T = X^T as a
// force map. Host and device code.
#pragma once

#include "sim/rigid_body_kinematics_vjp.h"

namespace diffloco::sim {

DL_HD SMotion asMotion(const SForce& f) {
  return {f.f, f.n};
}
DL_HD SForce asForce(const SMotion& m) {
  return {m.v, m.w};
}

// out = xApply(E, r, m): adds the adjoint of E given the output adjoint.
DL_HD void applyEbar(const V3& r, const SMotion& m, const SMotion& outBar, M3& Ebar) {
  addTo(Ebar, outer(outBar.v, m.v - cross(r, m.w)));
  addTo(Ebar, outer(outBar.w, m.w));
}

// out = xApplyTranspose(E, r, f): adds the adjoint of E given the output adjoint.
DL_HD void applyTransposeEbar(const V3& r, const SForce& f, const SForce& outBar, M3& Ebar) {
  addTo(Ebar, outer(f.f, outBar.f + cross(outBar.n, r)));
  addTo(Ebar, outer(f.n, outBar.n));
}

// out = I * a: adds the adjoint of the inertia's parameters (sim's inertiaTimesBar).
DL_HD void inertiaTimesBar(const SMotion& a, const SForce& outBar, SInertia& Ib) {
  Ib.m += dot(outBar.f, a.v);
  Ib.h += cross(outBar.f, a.w) + cross(a.v, outBar.n);
  addTo(Ib.Io, outer(outBar.n, a.w));
}

// Adjoint of biasForces run at (d's configuration, v): tauBar -> bar, vbar and, with kParams,
// inertiaBar.
template <bool kParams = false, class D>
DL_HD_OUTLINE void biasForcesVjp(const StepModel<D>& m, const StepData<D>& d,
                                 const DynamicsTape<D>& t, const double* v, const double* tauBar,
                                 KinBar<D>& bar, double* vbar, SInertia* inertiaBar = nullptr) {
  SForce fb[D::NB];
  SMotion vb[D::NB], ab[D::NB];
  for (int i = 0; i < D::NB; ++i) {
    fb[i] = {zero3(), zero3()};
    vb[i] = ab[i] = {zero3(), zero3()};
  }
  const M3& R0 = d.R[0];
  const V3 tb0 = v3(tauBar[0], tauBar[1], tauBar[2]);
  fb[0].f = mulT(R0, tb0);
  fb[0].n = v3(tauBar[3], tauBar[4], tauBar[5]);
  addTo(bar.R[0], outer(tb0, t.f[0].f));

  // Inward pass, root to leaves: tau_i = axis . n_i, then f_parent += X_i^T f_i.
  for (int i = 1; i < D::NB; ++i) {
    const SForce fpb = fb[m.parent[i]];
    const SMotion x = xApply(d.E[i], m.treeR[i], asMotion(fpb));
    fb[i].f += x.v;
    fb[i].n += x.w;
    applyTransposeEbar(m.treeR[i], t.f[i], fpb, bar.E[i]);
    fb[i].n += tauBar[5 + i] * m.axis[i];
  }

  // Outward pass, leaves to root.
  for (int i = D::NB - 1; i >= 0; --i) {
    const SInertia& I = m.inertia[i];
    const SMotion& vi = t.vel[i];
    // f_i = I a_i + v_i x* (I v_i).
    const SMotion fbm = asMotion(fb[i]);
    const SForce Ifb = inertiaTimes(I, fbm);
    ab[i].v += Ifb.f;
    ab[i].w += Ifb.n;
    if constexpr (kParams) inertiaTimesBar(t.acc[i], fb[i], inertiaBar[i]);
    const SForce Iv = inertiaTimes(I, vi);
    vb[i].v += cross(Iv.f, fb[i].n);
    vb[i].w += cross(Iv.f, fb[i].f) + cross(Iv.n, fb[i].n);
    const SMotion vxf = crossMotion(vi, fbm);  // (v x*)^T fbar = -v x fbar
    const SForce tt = inertiaTimes(I, vxf);
    vb[i].v -= tt.f;
    vb[i].w -= tt.n;
    if constexpr (kParams) inertiaTimesBar(vi, SForce{-vxf.v, -vxf.w}, inertiaBar[i]);
    if (i == 0) break;

    const int lam = m.parent[i];
    const M3& E = d.E[i];
    const V3& r = m.treeR[i];
    const V3& axis = m.axis[i];
    const double qd = v[5 + i];
    // a_i = X a_parent + v_i x (axis qd).
    const SForce xa = xApplyTranspose(E, r, asForce(ab[i]));
    ab[lam].v += xa.f;
    ab[lam].w += xa.n;
    applyEbar(r, t.acc[lam], ab[i], bar.E[i]);
    vb[i].v += qd * cross(axis, ab[i].v);
    vb[i].w += qd * cross(axis, ab[i].w);
    double qdb = dot(ab[i].v, cross(vi.v, axis)) + dot(ab[i].w, cross(vi.w, axis));
    // v_i = X v_parent + axis qd.
    const SForce xv = xApplyTranspose(E, r, asForce(vb[i]));
    vb[lam].v += xv.f;
    vb[lam].w += xv.n;
    applyEbar(r, t.vel[lam], vb[i], bar.E[i]);
    qdb += dot(axis, vb[i].w);
    vbar[5 + i] += qdb;
  }

  // Base: v0 = (R0^T v_lin, w); a0 = (-R0^T g - w x v0.v, 0).
  const SMotion& v0 = t.vel[0];
  subFrom(bar.R[0], outer(m.gravity, ab[0].v));
  vb[0].w += cross(ab[0].v, v0.v);
  vb[0].v += cross(v0.w, ab[0].v);
  const V3 vl = mul(R0, vb[0].v);
  for (int r = 0; r < 3; ++r) vbar[r] += vl[r];
  addTo(bar.R[0], outer(v3(v[0], v[1], v[2]), vb[0].v));
  for (int r = 0; r < 3; ++r) vbar[3 + r] += vb[0].w[r];
}

template <class D>
DL_HD double hAt(const double* H, int r, int c) {
  return H[r * D::NV + c];
}

// Adjoint of crba: Hbar (NV x NV row-major; both triangles count) -> bar and, with kParams,
// inertiaBar. Each column's force chain is recomputed (the same operations as
// crba) instead of taped.
template <bool kParams = false, class D>
DL_HD_OUTLINE void crbaVjp(const StepModel<D>& m, const StepData<D>& d, const DynamicsTape<D>& t,
                           const double* Hbar, KinBar<D>& bar, SInertia* inertiaBar = nullptr) {
  SInertia Icb[D::NB];
  for (int i = 0; i < D::NB; ++i) {
    Icb[i].m = 0;
    Icb[i].h = zero3();
    for (int k = 0; k < 9; ++k) Icb[i].Io.e[k] = 0;
  }
  const M3& R0 = d.R[0];

  // Base block: [m I, -R [h]x; [h]x R^T, Io].
  {
    const SInertia& I0 = t.Ic[0];
    Icb[0].m += hAt<D>(Hbar, 0, 0) + hAt<D>(Hbar, 1, 1) + hAt<D>(Hbar, 2, 2);
    M3 Rhb;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Rhb(r, c) = -hAt<D>(Hbar, r, 3 + c) - hAt<D>(Hbar, 3 + c, r);
    addTo(bar.R[0], mulNT(Rhb, skew(I0.h)));
    Icb[0].h += skewVjp(mulTN(R0, Rhb));
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Icb[0].Io(r, c) += hAt<D>(Hbar, 3 + r, 3 + c);
  }

  // Columns: each column's force chain, run backwards.
  for (int i = D::NB - 1; i > 0; --i) {
    const int k = 5 + i;
    const V3& axis = m.axis[i];
    int path[D::NB];  // body i and its ancestors but the base
    int np = 0;
    for (int j = i; j > 0; j = m.parent[j]) path[np++] = j;
    SForce F[D::NB];  // F[0] = Ic_i S_i in body i; F[l + 1] = F[l] one level up
    F[0] = {-cross(t.Ic[i].h, axis), mul(t.Ic[i].Io, axis)};
    for (int l = 0; l < np; ++l) F[l + 1] = xApplyTranspose(d.E[path[l]], m.treeR[path[l]], F[l]);

    // Base entries: H[0:3, k] = R0 F.f, H[3:6, k] = F.n (and the symmetric row).
    SForce Fb;
    const V3 hb =
        v3(hAt<D>(Hbar, 0, k) + hAt<D>(Hbar, k, 0), hAt<D>(Hbar, 1, k) + hAt<D>(Hbar, k, 1),
           hAt<D>(Hbar, 2, k) + hAt<D>(Hbar, k, 2));
    Fb.f = mulT(R0, hb);
    addTo(bar.R[0], outer(hb, F[np].f));
    Fb.n = v3(hAt<D>(Hbar, 3, k) + hAt<D>(Hbar, k, 3), hAt<D>(Hbar, 4, k) + hAt<D>(Hbar, k, 4),
              hAt<D>(Hbar, 5, k) + hAt<D>(Hbar, k, 5));
    for (int l = np - 1; l >= 0; --l) {
      const int j = path[l];
      applyTransposeEbar(m.treeR[j], F[l], Fb, bar.E[j]);
      Fb = asForce(xApply(d.E[j], m.treeR[j], asMotion(Fb)));
      const double hkj =
          l == 0 ? hAt<D>(Hbar, k, k) : hAt<D>(Hbar, k, 5 + j) + hAt<D>(Hbar, 5 + j, k);
      Fb.n += hkj * m.axis[j];
    }
    Icb[i].h += cross(Fb.f, axis);
    addTo(Icb[i].Io, outer(Fb.n, axis));
  }

  // Composite inertias, root to leaves: Ic_parent += Ic_i.toParent(X_i).
  for (int i = 1; i < D::NB; ++i) {
    const int lam = m.parent[i];
    const M3& E = d.E[i];
    const SInertia& I = t.Ic[i];
    const SInertia& ob = Icb[lam];
    const V3& r = m.treeR[i];
    const double tr = ob.Io(0, 0) + ob.Io(1, 1) + ob.Io(2, 2);
    Icb[i].m += ob.m + dot(ob.h, r) + tr * dot(r, r) - dot(r, mul(ob.Io, r));
    M3 sym;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) sym(a, b) = ob.Io(a, b) + ob.Io(b, a);
    const V3 hpb = ob.h + (2.0 * tr) * r - mul(sym, r);
    Icb[i].h += mul(E, hpb);
    addTo(bar.E[i], outer(I.h, hpb));
    addTo(Icb[i].Io, mulNT(mul(E, ob.Io), E));
    addTo(bar.E[i], mul(mul(I.Io, E), sym));
  }
  if constexpr (kParams)
    for (int i = 0; i < D::NB; ++i) {
      inertiaBar[i].m += Icb[i].m;
      inertiaBar[i].h += Icb[i].h;
      addTo(inertiaBar[i].Io, Icb[i].Io);
    }
}

}  // namespace diffloco::sim
