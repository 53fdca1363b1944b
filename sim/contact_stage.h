// Sphere contact for the fixed-size step (feet and leg spheres): geometry against the ground
// (sim/ground.h), the contact Jacobian rows of the spheres in the problem, the soft model's
// penalty law, and for the hard and smoothed models the Delassus blocks and the Gauss-Seidel solve
// (docs/simulator.md derives them; the choices are explained where they are made).
#pragma once

#include "sim/ground.h"
#include "sim/rigid_body.h"

namespace diffloco::sim {

template <class D>
struct Contacts {
  // The spheres in the problem, in sphere order (feet, then leg spheres): which sphere, and its
  // depth, frame and point.
  int active[D::MAXACTIVE];
  FixedSphereContact contact[D::MAXACTIVE];
  int nc;
  double Jc[3 * D::MAXACTIVE][D::NV];            // rows (normal, t1, t2) per active contact
  double Yc[3 * D::MAXACTIVE][D::MAXPATH];       // L^-T Jc^T on each active sphere's dof path
  double G[3 * D::MAXACTIVE][3 * D::MAXACTIVE];  // Delassus matrix Jc H^-1 Jc^T
  double c[3 * D::MAXACTIVE];                    // contact velocity without impulses
  double impulse[3 * D::MAXACTIVE];
  double sigma[D::MAXACTIVE];
};

// What the solver's VJP reads of up to D::MAXGSITER sweeps: per update, in order, the contact's
// impulse before it, the s it used and whether the stick branch was taken.
template <class D>
struct GsTape {
  M3 Ginv[D::MAXACTIVE];
  V3 pOld[D::MAXGSITER * D::MAXACTIVE], s[D::MAXGSITER * D::MAXACTIVE];
  bool stick[D::MAXGSITER * D::MAXACTIVE];
  double impulseRaw[3 * D::MAXACTIVE];  // after the sweeps, before the sigmoid scaling
};

using FixedContacts = Contacts<Quadruped>;  // transitional (sim/step_model.h)
using FixedGsTape = GsTape<Quadruped>;

// A sphere's centre in the world.
template <class D>
DL_HD V3 sphereCentre(const StepModel<D>& m, const StepData<D>& d, int j) {
  const int b = m.footBody[j];
  return mul(d.R[b], m.footOffset[j]) + d.p[b];
}

// Each sphere's contact against the ground and the ones that enter the problem, in sphere order,
// in one pass: a foot from o.footEntry, a leg sphere from o.legEntry, settled by depthUpperBound
// on a height field when that is below its entry. Every sphere fits (MAXACTIVE = MAXSPHERES).
template <class D>
DL_HD void collectContacts(const StepModel<D>& m, const FixedOptions& o, const StepData<D>& d,
                           const HeightFieldView& hf, Contacts<D>& fc) {
  static_assert(D::MAXACTIVE == D::MAXSPHERES, "a contact set must not overflow");
  fc.nc = 0;
  for (int j = 0; j < m.nspheres; ++j) {
    const bool leg = D::MAXLEG > 0 && j >= D::NFEET;
    const double entry = leg ? o.legEntry : o.footEntry;
    const V3 centre = sphereCentre(m, d, j);
    if (leg && hf.heights && depthUpperBound(hf, centre, m.footRadius[j], o.closestTerrain) < entry)
      continue;
    const FixedSphereContact c = sphereContact(hf, centre, m.footRadius[j], o.closestTerrain);
    if (!(c.depth >= entry)) continue;
    fc.active[fc.nc] = j;
    fc.contact[fc.nc++] = c;
  }
}

// Rows of frame^T J(point) for each active foot.
template <class D>
DL_HD void contactJacobians(const StepModel<D>& m, const StepData<D>& d, Contacts<D>& fc) {
  for (int a = 0; a < fc.nc; ++a) {
    const int j = fc.active[a];
    const FixedSphereContact& c = fc.contact[a];
    double J[3][D::NV];
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) J[r][k] = 0;
    // D::NJ > 0: a single body has no joints, and the constant lets the compiler drop the loop.
    for (int i = m.footBody[j]; D::NJ > 0 && i > 0; i = m.parent[i]) {
      const V3 col = cross(mul(d.R[i], m.axis[i]), c.point - d.p[i]);
      for (int r = 0; r < 3; ++r) J[r][5 + i] = col[r];
    }
    const M3 base = mul(skew(c.point - d.p[0]), d.R[0]);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) {
        J[r][k] = r == k ? 1.0 : 0.0;
        J[r][3 + k] = -base(r, k);
      }
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k)
        fc.Jc[3 * a + r][k] =
            c.frame(0, r) * J[0][k] + c.frame(1, r) * J[1][k] + c.frame(2, r) * J[2][k];
  }
}

// The branches of the penalty law at a contact, as the forward picks them: in contact at
// depth >= 0, the approach damping while v_n < 0, viscous friction while kf |v_t| <= mu f_n. A
// caller that differentiates a contact sitting on a switch on a chosen side passes its own rules
// (sim/soft_dynamics.h's ContactSides); the sphere's index says which contact it is.
struct ForwardBranches {
  DL_HD bool inContact(int, double depth) const { return depth >= 0; }
  DL_HD bool approaching(int, double vn) const { return vn < 0; }
  DL_HD bool viscous(int, double muFn, double kfVt) const { return kfVt <= muFn; }
};

// Penalty force of eq. 17-18 in contact coordinates (normal, t1, t2) at depth and contact velocity
// vc, on the branches the rules pick: f_n = kp d - kd v_n (approaching) or kp d; f_t = -kf v_t
// (viscous) or -mu f_n v_t / |v_t| (Coulomb). docs/simulator.md derives it.
template <class Branches = ForwardBranches>
DL_HD V3 softForce(const FixedOptions& o, double depth, const V3& vc, int sphere = 0,
                   const Branches& branches = Branches{}) {
  const bool approaching = branches.approaching(sphere, vc[0]);
  const double fn = o.softKp * depth - (approaching ? o.softKd * vc[0] : 0.0);
  const bool viscous = branches.viscous(sphere, o.mu * fn, o.softKf * norm2(vc[1], vc[2]));
  const double k = viscous ? o.softKf : o.mu * fn / norm2(vc[1], vc[2]);
  return v3(fn, -k * vc[1], -k * vc[2]);
}

// Generalized penalty force sum_a Jc_a^T f_a at velocity v, into out.
template <class D>
DL_HD void softContactForce(const FixedOptions& o, const Contacts<D>& fc, const double* v,
                            double* out) {
  for (int k = 0; k < D::NV; ++k) out[k] = 0;
  for (int a = 0; a < fc.nc; ++a) {
    const double dep = fc.contact[a].depth;
    if (dep < 0) continue;
    V3 vc;
    for (int r = 0; r < 3; ++r) {
      double s = 0;
      for (int k = 0; k < D::NV; ++k) s += fc.Jc[3 * a + r][k] * v[k];
      vc[r] = s;
    }
    const V3 f = softForce(o, dep, vc);
    for (int k = 0; k < D::NV; ++k)
      out[k] += fc.Jc[3 * a][k] * f[0] + fc.Jc[3 * a + 1][k] * f[1] + fc.Jc[3 * a + 2][k] * f[2];
  }
}

// Yc = L^-T Jc^T along each foot's dof path and G = Yc D^-1 Yc^T.
template <class D>
DL_HD void delassus(const StepModel<D>& m, const StepData<D>& d, Contacts<D>& fc) {
  for (int a = 0; a < fc.nc; ++a) {
    const int foot = fc.active[a];
    const unsigned char* P = m.footDofs[foot];
    const int n = m.footDofCount[foot];
    for (int t = 0; t < n; ++t)
      for (int r = 0; r < 3; ++r) fc.Yc[3 * a + r][t] = fc.Jc[3 * a + r][P[t]];
    for (int t = n - 1; t > 0; --t)
      for (int s2 = t - 1; s2 >= 0; --s2) {
        const double l = d.LD[P[t] * D::NV + P[s2]];
        for (int r = 0; r < 3; ++r) fc.Yc[3 * a + r][s2] -= l * fc.Yc[3 * a + r][t];
      }
  }
  for (int a = 0; a < fc.nc; ++a) {
    const unsigned char* Pa = m.footDofs[fc.active[a]];
    for (int b = a; b < fc.nc; ++b) {
      const int n = m.footCommon[fc.active[a]][fc.active[b]];
      double g[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
      for (int t = 0; t < n; ++t) {
        const double dt = d.LD[Pa[t] * D::NV + Pa[t]];
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) g[r][s] += fc.Yc[3 * a + r][t] * fc.Yc[3 * b + s][t] / dt;
      }
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          fc.G[3 * a + r][3 * b + s] = g[r][s];
          fc.G[3 * b + s][3 * a + r] = g[r][s];
        }
    }
  }
}

DL_HD V3 proxFrictionCone(const V3& p, double mu) {
  if (p[0] <= 0) return zero3();
  const double tn = norm2(p[1], p[2]);
  const double lim = mu * p[0];
  if (tn <= lim) return p;
  const double s = lim / tn;
  return v3(p[0], s * p[1], s * p[2]);
}

// One contact's update given s = sum_k G_jk p_k + c_j, the others fixed. The r-factor: the
// paper's scalar variants (eq. 13, Algorithms 1 and 2) are not scale-invariant, and on ANYmal
// standing on four feet every scalar choice left the impulses 2.6-3.1 % off after 10 sweeps (G_jj is
// badly conditioned: a light shank moves easily sideways, hardly along the leg). So:
//  1. the exact local solve p* = p_j - G_jj^-1 s; inside the friction cone the contact sticks and
//     p* is its exact solution;
//  2. otherwise it slides, and the prox step takes a per-component r: 1 / G_jj,nn on the normal,
//     1 / lambda_max of the 2x2 tangential block on both tangents; its fixed point is Coulomb's law
//     (zero normal velocity, friction opposite the sliding velocity at mu p_n).
DL_HD V3 gaussSeidelUpdate(const V3& p, const V3& s, const M3& Gjj, const M3& Ginv, double mu,
                           bool* stuck = nullptr) {
  const V3 stick = p - mul(Ginv, s);
  const bool isStick = stick[0] > 0 && norm2(stick[1], stick[2]) <= mu * stick[0];
  if (stuck) *stuck = isStick;
  if (isStick) return stick;
  const double a = Gjj(1, 1), b = Gjj(1, 2), dd = Gjj(2, 2);
  const double lmax = 0.5 * (a + dd) + sqrt(0.25 * (a - dd) * (a - dd) + b * b);
  const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
  return proxFrictionCone(v3(p[0] - rn * s[0], p[1] - rt * s[1], p[2] - rt * s[2]), mu);
}

template <class D>
DL_HD M3 gBlock(const Contacts<D>& fc, int a, int b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = fc.G[3 * a + i][3 * b + j];
  return r;
}

// Gauss-Seidel with the friction-cone prox from the eq. 11 guess; the
// smoothed model scales the impulses by sigmoid(depth kappa). With a tape (o.iterations <=
// MAXGSITER), records what the VJP reads.
template <class D>
DL_HD void solveContacts(const FixedOptions& o, Contacts<D>& fc, GsTape<D>* tape = nullptr) {
  const bool smooth = o.model == FixedContact::Smoothed;
  M3 Ginv[D::MAXACTIVE];
  for (int a = 0; a < fc.nc; ++a) {
    fc.sigma[a] = smooth ? 1.0 / (1.0 + exp(-(fc.contact[a].depth * o.kappa))) : 1.0;
    Ginv[a] = inverse3(gBlock(fc, a, a));
    if (tape) tape->Ginv[a] = Ginv[a];
    const V3 p = -mul(Ginv[a], v3(fc.c[3 * a], fc.c[3 * a + 1], fc.c[3 * a + 2]));
    for (int r = 0; r < 3; ++r) fc.impulse[3 * a + r] = p[r];
  }
  int update = 0;
  for (int it = 0; it < o.iterations; ++it)
    for (int j = 0; j < fc.nc; ++j, ++update) {
      V3 s = v3(fc.c[3 * j], fc.c[3 * j + 1], fc.c[3 * j + 2]);
      for (int k = 0; k < fc.nc; ++k) {
        const double w = k == j ? 1.0 : fc.sigma[k];
        for (int r = 0; r < 3; ++r)
          s[r] += w * (fc.G[3 * j + r][3 * k] * fc.impulse[3 * k] +
                       fc.G[3 * j + r][3 * k + 1] * fc.impulse[3 * k + 1] +
                       fc.G[3 * j + r][3 * k + 2] * fc.impulse[3 * k + 2]);
      }
      const V3 pOld = v3(fc.impulse[3 * j], fc.impulse[3 * j + 1], fc.impulse[3 * j + 2]);
      bool stuck = false;
      const V3 p =
          gaussSeidelUpdate(pOld, s, gBlock(fc, j, j), Ginv[j], o.mu, tape ? &stuck : nullptr);
      if (tape) {
        tape->pOld[update] = pOld;
        tape->s[update] = s;
        tape->stick[update] = stuck;
      }
      for (int r = 0; r < 3; ++r) fc.impulse[3 * j + r] = p[r];
    }
  if (tape)
    for (int r = 0; r < 3 * fc.nc; ++r) tape->impulseRaw[r] = fc.impulse[r];
  if (smooth)
    for (int a = 0; a < fc.nc; ++a)
      for (int r = 0; r < 3; ++r) fc.impulse[3 * a + r] *= fc.sigma[a];
}

}  // namespace diffloco::sim
