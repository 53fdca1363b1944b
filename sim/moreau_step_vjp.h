// The VJP (reverse-mode adjoint) of the hard and smoothed fixed-size step: fixedStepRecord runs
// the forward step (the same code as fixedStep) and keeps what the backward reads in a fixed-size
// per-world tape; fixedStepVjp maps the adjoints of (q', v') to those of (q, v, qTarget), stage by
// stage in reverse (docs/simulator.md, "Gradients"), and the parameters' adjoints
// (sim/param_bar.h) when given a ParamBar. The stages are templates on
// kParams, so that the VJP without them (the training's, the GPU's) does none of their work and
// keeps no branch for them. Host and device code; no heap, no exceptions.
#pragma once

#include "sim/contact_stage_vjp.h"
#include "sim/moreau_step.h"
#include "sim/param_bar.h"
#include "sim/rigid_body_vjp.h"

namespace diffloco::sim {

// One world's tape of a hard or smoothed step (sized for MAXACTIVE contacts and MAXGSITER sweeps:
// tapeBytes in batch/cuda_batch.h).
template <class D>
struct StepTape {
  StepData<D> d;        // kinematics at q_mid, H's factor
  DynamicsTape<D> dyn;  // RNEA's velocities, accelerations, forces; CRBA's composite inertias
  Contacts<D> fc;       // feet, active set, Jacobians, Delassus matrix, impulses
  GsTape<D> gs;         // the Gauss-Seidel sweeps
  double u[D::NV];      // velocity without impulses
  double vNext[D::NV];
};

using FixedTape = StepTape<Quadruped>;  // transitional (sim/step_model.h)

// The hard or smoothed step of fixedStep, recording the tape. Returns false when the new state is
// not finite, and, recording nothing, for the soft model or more than MAXGSITER sweeps (which the
// tape cannot hold: sim/pack.h's notInStepVjp).
template <class D>
DL_HD bool fixedStepRecord(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                           const double* q, const double* v, const double* qTarget, double* qNext,
                           double* vNext, StepTape<D>& t) {
  if (o.model == FixedContact::Soft || o.iterations > D::MAXGSITER) return false;
  hardOrSmoothedStep(m, o, hf, q, v, qTarget, qNext, vNext, t.d, t.fc, t.u, &t.dyn, &t.gs);
  for (int k = 0; k < D::NV; ++k) t.vNext[k] = vNext[k];
  return allFinite(qNext, D::NQ) && allFinite(vNext, D::NV);
}

// Adjoints of the step's inputs; fixedStepVjp adds to them.
template <class D>
struct StateAdjoint {
  double q[D::NQ], v[D::NV], qTarget[D::NJSLOTS];  // qTarget: NJ entries used
};

using FixedAdjoint = StateAdjoint<Quadruped>;  // transitional (sim/step_model.h)

template <class D>
DL_HD void setZero(StateAdjoint<D>& a) {
  for (int k = 0; k < D::NQ; ++k) a.q[k] = 0;
  for (int k = 0; k < D::NV; ++k) a.v[k] = 0;
  for (int k = 0; k < D::NJ; ++k) a.qTarget[k] = 0;
}

// Adjoint of actuatorTorque: tauBar -> targetBar, qBar, qdBar and, with kParams, the gains'
// adjoints p->kp, p->kd (sim::actuatorTorqueVjp).
template <bool kParams = false, class D>
DL_HD void actuatorTorqueVjp(const FixedOptions& o, double effortLimit, double qTarget, double q,
                             double qd, double tauBar, double& targetBar, double& qBar,
                             double& qdBar, ParamBar<D>* p = nullptr) {
  const double effort = o.effort < effortLimit ? o.effort : effortLimit;
  const double tau = o.kp * (qTarget - q) - o.kd * qd;
  const double vmax = o.velocityLimit * (1.0 + effort / o.saturation);
  const bool speedClipped = qd < -vmax || qd > vmax;
  const double w = (qd < -vmax ? -vmax : vmax < qd ? vmax : qd) / o.velocityLimit;
  const double hiLine = o.saturation * (1.0 - w), loLine = o.saturation * (-1.0 - w);
  const double hi = hiLine < effort ? hiLine : effort;
  const double lo = loLine > -effort ? loLine : -effort;
  if (tau > hi) {
    // tau = hi: the speed-torque line if it is below the effort limit.
    if (hiLine < effort && !speedClipped) qdBar -= tauBar * o.saturation / o.velocityLimit;
  } else if (tau < lo) {
    if (loLine > -effort && !speedClipped) qdBar -= tauBar * o.saturation / o.velocityLimit;
  } else {
    targetBar += o.kp * tauBar;
    qBar -= o.kp * tauBar;
    qdBar -= o.kd * tauBar;
    if constexpr (kParams) {
      p->kp += (qTarget - q) * tauBar;
      p->kd -= qd * tauBar;
    }
  }
}

// Reverse of stepDynamics(q, v, qTarget, h) run in d and dyn, given the adjoint ubar of u, lambda
// = H^-1 ubar, and the adjoints already gathered on H (Hbar, NV x NV, consumed) and on the
// kinematics at q_mid (bar, consumed). Adds to out, and with kParams to p.
template <bool kParams = false, class D>
DL_HD_OUTLINE void stepDynamicsVjp(const StepModel<D>& m, const FixedOptions& o,
                                   const StepData<D>& d, const DynamicsTape<D>& dyn,
                                   const double* q, const double* v, const double* qTarget,
                                   double h, const double* u, const double* ubar,
                                   const double* lambda, double* Hbar, KinBar<D>& bar,
                                   StateAdjoint<D>& out, ParamBar<D>* p = nullptr) {
  double work[D::NV], dvbar[D::NV];
  // Reverse of stepDynamics: u = v - h H^-1 b, lambda = H^-1 ubar.
  for (int k = 0; k < D::NV; ++k) out.v[k] += ubar[k];
  for (int r = 0; r < D::NV; ++r)
    for (int c = 0; c < D::NV; ++c) Hbar[r * D::NV + c] += lambda[r] * (v[c] - u[c]);
  double bbar[D::NV];
  for (int k = 0; k < D::NV; ++k) bbar[k] = -h * lambda[k];
  // b = RNEA(q_mid, v) + damping v - tau.
  SInertia* inertiaBar = nullptr;
  if constexpr (kParams) inertiaBar = p->inertia;
  biasForcesVjp<kParams>(m, d, dyn, v, bbar, bar, out.v, inertiaBar);
  crbaVjp<kParams>(m, d, dyn, Hbar, bar, inertiaBar);
  double qMid[D::NQ], qmidBar[D::NQ];
  for (int k = 0; k < D::NV; ++k) work[k] = 0.5 * h * v[k];
  integrate<D>(q, work, qMid);
  for (int k = 0; k < D::NQ; ++k) qmidBar[k] = 0;
  forwardKinematicsVjp(m, d, qMid, bar, qmidBar);
  // q_mid = q (+) h/2 v.
  for (int k = 0; k < D::NV; ++k) dvbar[k] = 0;
  integrateVjp<D>(q, work, qmidBar, out.q, dvbar);
  for (int k = 0; k < D::NV; ++k) out.v[k] += 0.5 * h * dvbar[k];
  for (int j = 0; j < D::NJ; ++j) {
    const double bb = bbar[6 + j];
    out.v[6 + j] += m.damping[j] * bb;
    actuatorTorqueVjp<kParams>(o, m.effort[j], qTarget[j], q[7 + j], v[6 + j], -bb, out.qTarget[j],
                               out.q[7 + j], out.v[6 + j], p);
  }
}

// fixedStepVjp's body; with kParams it adds the parameters' adjoints to *params.
template <bool kParams, class D>
DL_HD_OUTLINE void stepVjpImpl(const StepModel<D>& m, const FixedOptions& o,
                               const HeightFieldView& hf, const double* q, const double* v,
                               const double* qTarget, const StepTape<D>& t, const double* gq,
                               const double* gv, StateAdjoint<D>& out, ParamBar<D>* params) {
  const double h = o.dt;
  const StepData<D>& d = t.d;
  const Contacts<D>& fc = t.fc;
  const double* u = t.u;
  const double* vn = t.vNext;
  KinBar<D> bar;
  setZero(bar);
  double Hbar[D::NV * D::NV];
  for (int k = 0; k < D::NV * D::NV; ++k) Hbar[k] = 0;

  // q' = q (+) h/2 (v + v').
  double dvbar[D::NV], work[D::NV], ubar[D::NV], lambda[D::NV];
  for (int k = 0; k < D::NV; ++k) {
    dvbar[k] = 0;
    work[k] = 0.5 * h * (v[k] + vn[k]);
  }
  integrateVjp<D>(q, work, gq, out.q, dvbar);
  for (int k = 0; k < D::NV; ++k) {
    ubar[k] = gv[k] + 0.5 * h * dvbar[k];  // v' = u + ...: u's adjoint starts as v''s
    out.v[k] += 0.5 * h * dvbar[k];
  }

  const int nc = fc.nc, mc = 3 * nc;
  if (mc > 0) {
    // v' = u + H^-1 J^T p.
    for (int k = 0; k < D::NV; ++k) lambda[k] = ubar[k];
    solveH(m, d, lambda);
    for (int r = 0; r < D::NV; ++r)
      for (int c = 0; c < D::NV; ++c) Hbar[r * D::NV + c] -= lambda[r] * (vn[c] - u[c]);
    double pbar[3 * D::MAXACTIVE];
    for (int r = 0; r < mc; ++r) {
      double s = 0;
      for (int k = 0; k < D::NV; ++k) s += fc.Jc[r][k] * lambda[k];
      pbar[r] = s;
    }
    // p = GaussSeidel(G, c, sigma).
    double GbT[3 * D::MAXACTIVE][3 * D::MAXACTIVE], cbar[3 * D::MAXACTIVE], sigmaBar[D::MAXACTIVE];
    double* muBar = nullptr;
    if constexpr (kParams) muBar = &params->mu;
    solveContactsVjp<kParams>(o, fc, t.gs, pbar, GbT, cbar, sigmaBar, muBar);
    // Gsym = Gbar + Gbar^T (in place: GbT becomes Gsym)
    for (int r = 0; r < mc; ++r)
      for (int c = r; c < mc; ++c) {
        const double s = GbT[r][c] + GbT[c][r];
        GbT[r][c] = s;
        GbT[c][r] = s;
      }
    const double(*Gsym)[3 * D::MAXACTIVE] = GbT;
    // G = J W with W = H^-1 J^T = L^-1 D^-1 Y, Y = L^-T J^T on each foot's dof path.
    double W[D::NV][3 * D::MAXACTIVE];
    for (int k = 0; k < D::NV; ++k)
      for (int c = 0; c < mc; ++c) W[k][c] = 0;
    for (int a = 0; a < nc; ++a) {
      const int foot = fc.active[a];
      for (int tt = 0; tt < m.footDofCount[foot]; ++tt)
        for (int r = 0; r < 3; ++r) W[m.footDofs[foot][tt]][3 * a + r] = fc.Yc[3 * a + r][tt];
    }
    for (int k = 0; k < D::NV; ++k) {
      const double inv = 1.0 / d.LD[k * D::NV + k];
      for (int c = 0; c < mc; ++c) W[k][c] = inv * W[k][c];
    }
    for (int k = 0; k < D::NV; ++k)
      for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i])
        for (int c = 0; c < mc; ++c) W[k][c] -= d.LD[k * D::NV + i] * W[i][c];
    // Jbar = p lambda^T + cbar u^T + Gsym W^T, on the columns contactGeometryVjp reads: the base
    // angular ones, the foot's path, and on a height field the base linear ones.
    double Jbar[3 * D::MAXACTIVE][D::NV];
    for (int r = 0; r < mc; ++r)
      for (int k = 0; k < D::NV; ++k) Jbar[r][k] = 0;
    for (int a = 0; a < nc; ++a) {
      int cols[D::NV], ncols = 0;
      for (int c = hf.heights ? 0 : 3; c < 6; ++c) cols[ncols++] = c;
      for (int i = m.footBody[fc.active[a]]; D::NJ > 0 && i > 0; i = m.parent[i])
        cols[ncols++] = 5 + i;
      for (int l = 0; l < ncols; ++l) {
        const int c = cols[l];
        for (int r = 0; r < 3; ++r) {
          double g = 0;
          for (int tt = 0; tt < mc; ++tt) g += Gsym[3 * a + r][tt] * W[c][tt];
          Jbar[3 * a + r][c] = fc.impulse[3 * a + r] * lambda[c] + cbar[3 * a + r] * u[c] + g;
        }
      }
    }
    // c = J u: u's adjoint gains J^T cbar, and H^-1 of it is lambda + W cbar.
    for (int k = 0; k < D::NV; ++k) {
      double s = 0, sw = 0;
      for (int r = 0; r < mc; ++r) {
        s += fc.Jc[r][k] * cbar[r];
        sw += W[k][r] * cbar[r];
      }
      ubar[k] += s;
      lambda[k] += sw;
    }
    // Hbar -= W Gbar W^T on H's tree-sparsity pattern, both triangles' share on (i, k).
    for (int k = 0; k < D::NV; ++k) {
      double WG[3 * D::MAXACTIVE];
      for (int c = 0; c < mc; ++c) {
        double s = 0;
        for (int tt = 0; tt < mc; ++tt) s += W[k][tt] * Gsym[tt][c];
        WG[c] = s;
      }
      double s = 0;
      for (int c = 0; c < mc; ++c) s += WG[c] * W[k][c];
      Hbar[k * D::NV + k] -= 0.5 * s;
      for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) {
        double si = 0;
        for (int c = 0; c < mc; ++c) si += WG[c] * W[i][c];
        Hbar[i * D::NV + k] -= si;
      }
    }
    // sigma = sigmoid(kappa d).
    double depthBar[D::MAXACTIVE];
    for (int a = 0; a < nc; ++a) {
      depthBar[a] = 0;
      if (o.model == FixedContact::Smoothed) {
        const double s = fc.sigma[a], ds = s * (1 - s);
        depthBar[a] = sigmaBar[a] * ds * o.kappa;
        if constexpr (kParams) params->kappa += sigmaBar[a] * ds * fc.contact[a].depth;
      }
    }
    V3* offsetBar = nullptr;
    if constexpr (kParams) offsetBar = params->footOffset;
    contactGeometryVjp<kParams>(m, d, fc, hf.heights != nullptr, Jbar, depthBar, bar, offsetBar);
  } else {
    for (int k = 0; k < D::NV; ++k) lambda[k] = ubar[k];
    solveH(m, d, lambda);
  }

  stepDynamicsVjp<kParams>(m, o, d, t.dyn, q, v, qTarget, h, u, ubar, lambda, Hbar, bar, out,
                           params);
}

// Given the adjoints gq (NQ), gv (NV) of (q', v') of the step fixedStepRecord taped at
// (q, v, qTarget), adds the adjoints of (q, v, qTarget) to out (the hard and smoothed models).
// hf only says whether the ground is a height field (the tape holds what was sampled).
template <class D>
DL_HD void fixedStepVjp(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                        const double* q, const double* v, const double* qTarget,
                        const StepTape<D>& t, const double* gq, const double* gv,
                        StateAdjoint<D>& out) {
  stepVjpImpl<false, D>(m, o, hf, q, v, qTarget, t, gq, gv, out, nullptr);
}
// The same, adding the parameters' adjoints to params too (sim::StepAdjoint::params).
template <class D>
DL_HD void fixedStepVjp(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                        const double* q, const double* v, const double* qTarget,
                        const StepTape<D>& t, const double* gq, const double* gv,
                        StateAdjoint<D>& out, ParamBar<D>& params) {
  stepVjpImpl<true>(m, o, hf, q, v, qTarget, t, gq, gv, out, &params);
}

}  // namespace diffloco::sim
