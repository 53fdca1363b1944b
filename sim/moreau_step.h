// One simulation step: Moreau's midpoint time stepping (Algorithm 2 of the locomotion paper;
// docs/simulator.md derives it), host and device code on fixed-size data, no heap, no exceptions.
//   q_mid = q (+) dt/2 v;  b = RNEA(q_mid, v) + damping v - tau(q, v);  H = CRBA(q_mid) + armature
//   u = v - dt H^-1 b;  c = Jc u,  G = Jc H^-1 Jc^T;  p = GaussSeidel(G, c)  (hard or smoothed)
//   v' = u + H^-1 Jc^T p;  q' = q (+) dt/2 (v + v')
// The paper's eq. 10 prints c = Jc (v + dt H^-1 h); with h = b the impulse-free contact velocity is
// Jc (v - dt H^-1 b). The soft model replaces the solver by penalty forces (eq. 17-18) and takes
// softSubsteps sub-steps of the same scheme.
#pragma once

#include "sim/contact_stage.h"

namespace diffloco::sim {

// PD torque with the DC-motor envelope (sim::actuatorTorque).
DL_HD double actuatorTorque(const FixedOptions& o, double effortLimit, double qTarget, double q,
                            double qd) {
  const double effort = o.effort < effortLimit ? o.effort : effortLimit;
  const double tau = o.kp * (qTarget - q) - o.kd * qd;
  const double vmax = o.velocityLimit * (1.0 + effort / o.saturation);
  const double w = (qd < -vmax ? -vmax : vmax < qd ? vmax : qd) / o.velocityLimit;
  const double hiLine = o.saturation * (1.0 - w), loLine = o.saturation * (-1.0 - w);
  const double hi = hiLine < effort ? hiLine : effort;
  const double lo = loLine > -effort ? loLine : -effort;
  return tau < lo ? lo : hi < tau ? hi : tau;
}

// qOut = q (+) dv: base position plus dv[0:3], orientation times exp(dv[3:6]) (body frame),
// joints plus dv[6:]. qOut may alias q.
template <class D>
DL_HD void integrate(const double* q, const double* dv, double* qOut) {
  const double th = sqrt(dv[3] * dv[3] + dv[4] * dv[4] + dv[5] * dv[5]);
  const double half = 0.5 * th;
  const double k = th < 1e-6 ? 0.5 - th * th / 48.0 : sin(half) / th;
  const double bw = cos(half), bx = k * dv[3], by = k * dv[4], bz = k * dv[5];
  const double aw = q[3], ax = q[4], ay = q[5], az = q[6];
  double w = aw * bw - ax * bx - ay * by - az * bz;
  double x = aw * bx + ax * bw + ay * bz - az * by;
  double y = aw * by + ay * bw + az * bx - ax * bz;
  double z = aw * bz + az * bw + ax * by - ay * bx;
  const double n = sqrt(w * w + x * x + y * y + z * z);
  w /= n;
  x /= n;
  y /= n;
  z /= n;
  for (int j = 0; j < D::NJ; ++j) qOut[7 + j] = q[7 + j] + dv[6 + j];
  for (int r = 0; r < 3; ++r) qOut[r] = q[r] + dv[r];
  qOut[3] = w;
  qOut[4] = x;
  qOut[5] = y;
  qOut[6] = z;
}

// Actuator, q_mid, bias forces, H and its factor, u = v - h H^-1 (bias - tau + damping)
// (sim::stepDynamics).
template <class D>
DL_HD void stepDynamics(const StepModel<D>& m, const FixedOptions& o, StepData<D>& d,
                        const double* q, const double* v, const double* qTarget, double h,
                        double* u, DynamicsTape<D>* tape = nullptr) {
  double tauJoint[D::NJSLOTS], dq[D::NV], qMid[D::NQ];
  for (int j = 0; j < D::NJ; ++j)
    tauJoint[j] = actuatorTorque(o, m.effort[j], qTarget[j], q[7 + j], v[6 + j]);
  for (int k = 0; k < D::NV; ++k) dq[k] = 0.5 * h * v[k];
  integrate<D>(q, dq, qMid);
  forwardKinematics(m, d, qMid);
  biasForces(m, d, v, tape);
  for (int j = 0; j < D::NJ; ++j) d.tau[6 + j] += m.damping[j] * v[6 + j] - tauJoint[j];
  crba(m, d, tape);
  factorize(m, d);
  for (int k = 0; k < D::NV; ++k) u[k] = d.tau[k];
  solveH(m, d, u);
  for (int k = 0; k < D::NV; ++k) u[k] = v[k] - h * u[k];
}

DL_HD bool allFinite(const double* x, int n) {
  bool ok = true;
  for (int k = 0; k < n; ++k) ok = ok && fabs(x[k]) <= 1.7976931348623157e308;  // false for NaN
  return ok;
}

// The hard or smoothed step in the caller's d, fc and u (the tape's, or a plain step's scratch);
// with dyn and gs, records what fixedStepVjp reads.
template <class D>
DL_HD void hardOrSmoothedStep(const StepModel<D>& m, const FixedOptions& o,
                              const HeightFieldView& hf, const double* q, const double* v,
                              const double* qTarget, double* qNext, double* vNext, StepData<D>& d,
                              Contacts<D>& fc, double* u, DynamicsTape<D>* dyn, GsTape<D>* gs) {
  double work[D::NV];
  stepDynamics(m, o, d, q, v, qTarget, o.dt, u, dyn);
  collectContacts(m, o, d, hf, fc);
  if (fc.nc > 0) {
    contactJacobians(m, d, fc);
    delassus(m, d, fc);
    for (int r = 0; r < 3 * fc.nc; ++r) {
      double s = 0;
      for (int k = 0; k < D::NV; ++k) s += fc.Jc[r][k] * u[k];
      fc.c[r] = s;
    }
    solveContacts(o, fc, gs);
    // v' = u + H^-1 Jc^T p = u + L^-1 D^-1 Y p, Y = L^-T Jc^T living on the feet's dof paths
    for (int k = 0; k < D::NV; ++k) work[k] = 0;
    for (int a = 0; a < fc.nc; ++a) {
      const int foot = fc.active[a];
      for (int t = 0; t < m.footDofCount[foot]; ++t)
        work[m.footDofs[foot][t]] += fc.Yc[3 * a][t] * fc.impulse[3 * a] +
                                     fc.Yc[3 * a + 1][t] * fc.impulse[3 * a + 1] +
                                     fc.Yc[3 * a + 2][t] * fc.impulse[3 * a + 2];
    }
    for (int k = 0; k < D::NV; ++k) work[k] /= d.LD[k * D::NV + k];
    solveL(m, d, work);
    for (int k = 0; k < D::NV; ++k) vNext[k] = u[k] + work[k];
  } else {
    for (int k = 0; k < D::NV; ++k) vNext[k] = u[k];
  }
  for (int k = 0; k < D::NV; ++k) work[k] = 0.5 * o.dt * (v[k] + vNext[k]);
  integrate<D>(q, work, qNext);
}

// One sub-step of length h of the soft model from (q, v) into (qOut, vOut) in the caller's d, fc
// and u; qOut may alias q, vOut must not alias v. With dyn, records what the VJP reads.
template <class D>
DL_HD void softSubstep(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                       double h, const double* q, const double* v, const double* qTarget,
                       double* qOut, double* vOut, StepData<D>& d, Contacts<D>& fc, double* u,
                       DynamicsTape<D>* dyn) {
  double work[D::NV];
  stepDynamics(m, o, d, q, v, qTarget, h, u, dyn);
  collectContacts(m, o, d, hf, fc);
  contactJacobians(m, d, fc);
  softContactForce(o, fc, v, work);
  solveH(m, d, work);
  for (int k = 0; k < D::NV; ++k) vOut[k] = u[k] + h * work[k];
  for (int k = 0; k < D::NV; ++k) work[k] = 0.5 * h * (v[k] + vOut[k]);
  integrate<D>(q, work, qOut);
}

// What a step reports as it goes, for callers that read more than the new state (StageStepper:
// each sphere's impulse; gradcheck: the branches taken). Each (sub-)step of length h calls
// beforeSubstep with the state it starts from, then afterSubstep with its contact problem (and,
// for the hard and smoothed step, the solver's tape when the caller passed one). The default
// observes nothing and compiles away.
struct NoStepObserver {
  DL_HD void beforeSubstep(const double* q, const double* v) {}
  template <class D>
  DL_HD void afterSubstep(const Contacts<D>& fc, const GsTape<D>* gs, const double* v, double h) {}
};

// Advances (q, v) by o.dt with joint targets qTarget into (qNext, vNext), which must not alias
// q and v, in the caller's d and fc (gs, if given, records the Gauss-Seidel sweeps of the hard
// and smoothed step). Returns false when the new state is not finite.
template <class D, class Observer>
DL_HD bool fixedStep(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                     const double* q, const double* v, const double* qTarget, double* qNext,
                     double* vNext, StepData<D>& d, Contacts<D>& fc, GsTape<D>* gs,
                     Observer& observer) {
  double u[D::NV];
  if (o.model == FixedContact::Soft) {
    const int n = o.softSubsteps > 1 ? o.softSubsteps : 1;
    const double h = o.dt / n;
    double vPrev[D::NV];
    for (int k = 0; k < D::NQ; ++k) qNext[k] = q[k];
    for (int k = 0; k < D::NV; ++k) vNext[k] = v[k];
    for (int s = 0; s < n; ++s) {
      for (int k = 0; k < D::NV; ++k) vPrev[k] = vNext[k];
      observer.beforeSubstep(qNext, vPrev);
      softSubstep<D>(m, o, hf, h, qNext, vPrev, qTarget, qNext, vNext, d, fc, u, nullptr);
      observer.afterSubstep(fc, static_cast<const GsTape<D>*>(nullptr), vPrev, h);
    }
  } else {
    observer.beforeSubstep(q, v);
    hardOrSmoothedStep<D>(m, o, hf, q, v, qTarget, qNext, vNext, d, fc, u, nullptr, gs);
    observer.afterSubstep(fc, static_cast<const GsTape<D>*>(gs), v, o.dt);
  }
  return allFinite(qNext, D::NQ) && allFinite(vNext, D::NV);
}

// The same with its own scratch, observing nothing.
template <class D>
DL_HD bool fixedStep(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                     const double* q, const double* v, const double* qTarget, double* qNext,
                     double* vNext) {
  StepData<D> d;
  Contacts<D> fc;
  NoStepObserver none;
  return fixedStep<D>(m, o, hf, q, v, qTarget, qNext, vNext, d, fc, nullptr, none);
}

}  // namespace diffloco::sim
