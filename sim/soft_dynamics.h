// The soft model's continuous dynamics x' = f(x), x = (q, v), the right-hand side an adaptive
// integrator takes steps of, and its VJP, on fixed-size data (host and device code, no heap):
//   q' = (v[0:3], 0.5 quat (x) (0, w), v[6:])      w = v[3:6] (base axes), quat the raw one
//   v' = H(q^)^-1 (sum_a Ja(q^)^T f_a(q^, v) - b(q^, v))
// q^ is q with its quaternion normalised (a Runge-Kutta stage off the unit sphere still sees a
// rotation), b = RNEA(q^, v) + damping v - tau(q^, v) with the joint targets held, and f_a the
// penalty law of eq. 17-18 (softForce) on every sphere at or below the ground. Every sphere is in
// the tape's contact set, in sphere order, touching or not: an integrator locates a touchdown
// from the depths of those that do not touch yet.
#pragma once

#include "sim/soft_step_vjp.h"

namespace diffloco::sim {

// What softDynamics leaves for its VJP: the dynamics at q^ (kinematics, H's factor, b in d.tau),
// every sphere's contact, and v'.
template <class D>
struct SoftDynamicsTape {
  StepData<D> d;
  DynamicsTape<D> dyn;
  Contacts<D> fc;
  double vdot[D::NV];
};

// The side of each kink of the penalty law on which a contact that sits on it is differentiated,
// as softDynamicsVjp's branch rules (ForwardBranches' interface). Kinds: 0 contact (depth 0),
// 1 viscous/Coulomb friction (mu f_n - kf |v_t|), 2 approach/recede damping (-v_n). Bit s of
// known[k] set: sphere s's switch k, when its value is within tol[k] of 0, takes the side bit s of
// on[k]; otherwise, and farther from the switch, the forward's rule applies. An adaptive
// integrator gives a stage on a located switch the side of the rest of its step: the one-sided
// limit of the Jacobian over that step (sim/adaptive.h).
struct ContactSides {
  unsigned known[3] = {0, 0, 0}, on[3] = {0, 0, 0};
  double tol[3] = {0, 0, 0};
  DL_HD bool side(int k, int sphere, double value, bool forwardRule) const {
    return fabs(value) <= tol[k] && (known[k] >> sphere & 1u) ? (on[k] >> sphere & 1u) != 0
                                                              : forwardRule;
  }
  DL_HD bool inContact(int sphere, double depth) const {
    return side(0, sphere, depth, depth >= 0);
  }
  DL_HD bool approaching(int sphere, double vn) const { return side(2, sphere, -vn, vn < 0); }
  // A contact held on its switch may have f_n slightly below 0; one that does not slide has no
  // Coulomb branch.
  DL_HD bool viscous(int sphere, double muFn, double kfVt) const {
    return kfVt == 0 || side(1, sphere, muFn - kfVt, kfVt <= (muFn > 0 ? muFn : 0.0));
  }
};

// o with every sphere entering the contact set whatever its depth.
DL_HD FixedOptions everySphere(FixedOptions o) {
  o.footEntry = o.legEntry = -1e300;
  return o;
}

// xdot = f(x) (NQ + NV entries each) with the joints driven to qTarget.
template <class D>
DL_HD void softDynamics(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                        const double* x, const double* qTarget, double* xdot,
                        SoftDynamicsTape<D>& t) {
  const double* q = x;
  const double* v = x + D::NQ;
  const FixedOptions every = everySphere(o);
  // With a zero step, stepDynamics leaves the dynamics at q^ = q (+) 0 (its quaternion normalised):
  // kinematics, H factored, d.tau = b.
  double u[D::NV];
  stepDynamics(m, every, t.d, q, v, qTarget, 0.0, u, &t.dyn);
  collectContacts(m, every, t.d, hf, t.fc);
  contactJacobians(m, t.d, t.fc);
  softContactForce(o, t.fc, v, t.vdot);
  for (int k = 0; k < D::NV; ++k) t.vdot[k] -= t.d.tau[k];
  solveH(m, t.d, t.vdot);
  const double* quat = q + 3;
  const double* w = v + 3;
  for (int r = 0; r < 3; ++r) xdot[r] = v[r];
  xdot[3] = 0.5 * (-quat[1] * w[0] - quat[2] * w[1] - quat[3] * w[2]);
  xdot[4] = 0.5 * (quat[0] * w[0] + quat[2] * w[2] - quat[3] * w[1]);
  xdot[5] = 0.5 * (quat[0] * w[1] - quat[1] * w[2] + quat[3] * w[0]);
  xdot[6] = 0.5 * (quat[0] * w[2] + quat[1] * w[1] - quat[2] * w[0]);
  for (int j = 0; j < D::NJ; ++j) xdot[7 + j] = v[6 + j];
  for (int k = 0; k < D::NV; ++k) xdot[D::NQ + k] = t.vdot[k];
}

// Adds to xBar (NQ + NV) and qTargetBar (NJ), and with kParams to *params, the adjoints of
// softDynamics' inputs given xdotBar, from the tape softDynamics(x) left. Each penalty force is
// differentiated on the branches the rules pick (by default the forward's; ContactSides).
template <bool kParams = false, class D, class Branches = ForwardBranches>
DL_HD_OUTLINE void softDynamicsVjp(const StepModel<D>& m, const FixedOptions& o,
                                   const HeightFieldView& hf, const double* x,
                                   const double* qTarget, const SoftDynamicsTape<D>& t,
                                   const double* xdotBar, double* xBar, double* qTargetBar,
                                   ParamBar<D>* params = nullptr,
                                   const Branches& branches = Branches{}) {
  const double* q = x;
  const double* v = x + D::NQ;
  double* qBar = xBar;
  double* vBar = xBar + D::NQ;
  const StepData<D>& d = t.d;
  const Contacts<D>& fc = t.fc;

  // q' = (v_lin, 0.5 quat (x) (0, w), v_joints).
  for (int r = 0; r < 3; ++r) vBar[r] += xdotBar[r];
  for (int j = 0; j < D::NJ; ++j) vBar[6 + j] += xdotBar[7 + j];
  {
    const double* quat = q + 3;
    const double* w = v + 3;
    const double* pb = xdotBar + 3;
    const double negW[4] = {0, -w[0], -w[1], -w[2]};
    const double conj[4] = {quat[0], -quat[1], -quat[2], -quat[3]};
    double qb[4], wb[4];
    quatMul(pb, negW, qb);
    quatMul(conj, pb, wb);
    for (int r = 0; r < 4; ++r) qBar[3 + r] += 0.5 * qb[r];
    for (int r = 0; r < 3; ++r) vBar[3 + r] += 0.5 * wb[1 + r];
  }

  // v' = H^-1 z, z = F - b: lambda = H^-1 v'bar is z's adjoint, Hbar = -lambda v'^T.
  double lambda[D::NV], Hbar[D::NV * D::NV], bbar[D::NV];
  for (int k = 0; k < D::NV; ++k) lambda[k] = xdotBar[D::NQ + k];
  solveH(m, d, lambda);
  for (int r = 0; r < D::NV; ++r)
    for (int c = 0; c < D::NV; ++c) Hbar[r * D::NV + c] = -lambda[r] * t.vdot[c];
  for (int k = 0; k < D::NV; ++k) bbar[k] = -lambda[k];

  // F = sum_a Ja^T f_a(depth_a, Ja v).
  KinBar<D> bar;
  setZero(bar);
  double Jbar[3 * D::MAXACTIVE][D::NV], depthBar[D::MAXACTIVE];
  penaltyForcesVjp<kParams>(o, fc, v, lambda, Jbar, depthBar, vBar, params, branches);
  V3* offsetBar = nullptr;
  SInertia* inertiaBar = nullptr;
  if constexpr (kParams) {
    offsetBar = params->footOffset;
    inertiaBar = params->inertia;
  }
  contactGeometryVjp<kParams>(m, d, fc, hf.heights != nullptr, Jbar, depthBar, bar, offsetBar);

  // b = RNEA(q^, v) + damping v - tau(q^, v), H = CRBA(q^), q^ = q (+) 0.
  biasForcesVjp<kParams>(m, d, t.dyn, v, bbar, bar, vBar, inertiaBar);
  crbaVjp<kParams>(m, d, t.dyn, Hbar, bar, inertiaBar);
  double zero[D::NV], qn[D::NQ], qnBar[D::NQ], dvbar[D::NV];
  for (int k = 0; k < D::NV; ++k) zero[k] = dvbar[k] = 0;
  for (int k = 0; k < D::NQ; ++k) qnBar[k] = 0;
  integrate<D>(q, zero, qn);
  forwardKinematicsVjp(m, d, qn, bar, qnBar);
  for (int j = 0; j < D::NJ; ++j) {
    const double bb = bbar[6 + j];
    vBar[6 + j] += m.damping[j] * bb;
    actuatorTorqueVjp<kParams>(o, m.effort[j], qTarget[j], q[7 + j], v[6 + j], -bb, qTargetBar[j],
                               qnBar[7 + j], vBar[6 + j], params);
  }
  integrateVjp<D>(q, zero, qnBar, qBar, dvbar);
}

}  // namespace diffloco::sim
