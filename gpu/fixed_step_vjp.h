// The VJP (reverse-mode adjoint) of the hard and smoothed fixed-size step: fixedStepRecord runs
// the forward step (the same code as fixedStep) and keeps what the backward reads in a fixed-size
// per-world tape; fixedStepVjp maps the adjoints of (q', v') to those of (q, v, qTarget) with
// the formulas and order of sim::stepVjp (sim/step_vjp.cpp explains them), and the parameters'
// adjoints (gpu/fixed_param_bar.h) when given a FixedParamBar. The stages are templates on
// kParams, so that the VJP without them (the training's, the GPU's) does none of their work and
// keeps no branch for them. Host and device code; no heap, no exceptions.
#pragma once

#include "gpu/fixed_contact_vjp.h"
#include "gpu/fixed_dynamics_vjp.h"
#include "gpu/fixed_param_bar.h"
#include "gpu/fixed_step.h"

namespace diffloco::gpu {

// One world's tape of a hard or smoothed step (sized for MAXACTIVE contacts: tapeBytes in
// gpu/cuda_batch.h).
struct FixedTape {
  FixedData d;            // kinematics at q_mid, H's factor
  FixedDynamicsTape dyn;  // RNEA's velocities, accelerations, forces; CRBA's composite inertias
  FixedContacts fc;       // feet, active set, Jacobians, Delassus matrix, impulses
  FixedGsTape gs;         // the Gauss-Seidel sweeps
  double u[NV];           // velocity without impulses
  double vNext[NV];
};

// The hard or smoothed step of fixedStep, recording the tape. Returns false when the new state is
// not finite, and when a contact set overflowed (then (qNext, vNext) = (q, v)), for the soft
// model or more than MAXGSITER sweeps (which the tape cannot hold).
DL_HD bool fixedStepRecord(const FixedModel& m, const FixedOptions& o, const HeightFieldView& hf,
                           const double* q, const double* v, const double* qTarget, double* qNext,
                           double* vNext, FixedTape& t) {
  if (o.model == FixedContact::Soft || o.iterations > MAXGSITER) return false;
  if (!hardOrSmoothedStep(m, o, hf, q, v, qTarget, qNext, vNext, t.d, t.fc, t.u, &t.dyn, &t.gs))
    return false;
  for (int k = 0; k < NV; ++k) t.vNext[k] = vNext[k];
  return allFinite(qNext, NQ) && allFinite(vNext, NV);
}

// Adjoints of the step's inputs; fixedStepVjp adds to them.
struct FixedAdjoint {
  double q[NQ], v[NV], qTarget[NJ];
};

DL_HD void setZero(FixedAdjoint& a) {
  for (int k = 0; k < NQ; ++k) a.q[k] = 0;
  for (int k = 0; k < NV; ++k) a.v[k] = 0;
  for (int k = 0; k < NJ; ++k) a.qTarget[k] = 0;
}

// Adjoint of actuatorTorque: tauBar -> targetBar, qBar, qdBar and, with kParams, the gains'
// adjoints p->kp, p->kd (sim::actuatorTorqueVjp).
template <bool kParams = false>
DL_HD void actuatorTorqueVjp(const FixedOptions& o, double effortLimit, double qTarget, double q,
                             double qd, double tauBar, double& targetBar, double& qBar,
                             double& qdBar, FixedParamBar* p = nullptr) {
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
// kinematics at q_mid (bar, consumed). Adds to out, and with kParams to p (sim's dynamicsVjp in
// sim/step_vjp.cpp).
template <bool kParams = false>
DL_HD_OUTLINE void stepDynamicsVjp(const FixedModel& m, const FixedOptions& o, const FixedData& d,
                                   const FixedDynamicsTape& dyn, const double* q, const double* v,
                                   const double* qTarget, double h, const double* u,
                                   const double* ubar, const double* lambda, double* Hbar,
                                   FixedKinBar& bar, FixedAdjoint& out,
                                   FixedParamBar* p = nullptr) {
  double work[NV], dvbar[NV];
  // Reverse of stepDynamics: u = v - h H^-1 b, lambda = H^-1 ubar.
  for (int k = 0; k < NV; ++k) out.v[k] += ubar[k];
  for (int r = 0; r < NV; ++r)
    for (int c = 0; c < NV; ++c) Hbar[r * NV + c] += lambda[r] * (v[c] - u[c]);
  double bbar[NV];
  for (int k = 0; k < NV; ++k) bbar[k] = -h * lambda[k];
  // b = RNEA(q_mid, v) + damping v - tau.
  SInertia* inertiaBar = nullptr;
  if constexpr (kParams) inertiaBar = p->inertia;
  biasForcesVjp<kParams>(m, d, dyn, v, bbar, bar, out.v, inertiaBar);
  crbaVjp<kParams>(m, d, dyn, Hbar, bar, inertiaBar);
  double qMid[NQ], qmidBar[NQ];
  for (int k = 0; k < NV; ++k) work[k] = 0.5 * h * v[k];
  integrate(q, work, qMid);
  for (int k = 0; k < NQ; ++k) qmidBar[k] = 0;
  forwardKinematicsVjp(m, d, qMid, bar, qmidBar);
  // q_mid = q (+) h/2 v.
  for (int k = 0; k < NV; ++k) dvbar[k] = 0;
  integrateVjp(q, work, qmidBar, out.q, dvbar);
  for (int k = 0; k < NV; ++k) out.v[k] += 0.5 * h * dvbar[k];
  for (int j = 0; j < NJ; ++j) {
    const double bb = bbar[6 + j];
    out.v[6 + j] += m.damping[j] * bb;
    actuatorTorqueVjp<kParams>(o, m.effort[j], qTarget[j], q[7 + j], v[6 + j], -bb, out.qTarget[j],
                               out.q[7 + j], out.v[6 + j], p);
  }
}

// fixedStepVjp's body; with kParams it adds the parameters' adjoints to *params.
template <bool kParams>
DL_HD_OUTLINE void stepVjpImpl(const FixedModel& m, const FixedOptions& o,
                               const HeightFieldView& hf, const double* q, const double* v,
                               const double* qTarget, const FixedTape& t, const double* gq,
                               const double* gv, FixedAdjoint& out, FixedParamBar* params) {
  const double h = o.dt;
  const FixedData& d = t.d;
  const FixedContacts& fc = t.fc;
  const double* u = t.u;
  const double* vn = t.vNext;
  FixedKinBar bar;
  setZero(bar);
  double Hbar[NV * NV];
  for (int k = 0; k < NV * NV; ++k) Hbar[k] = 0;

  // q' = q (+) h/2 (v + v').
  double dvbar[NV], work[NV], ubar[NV], lambda[NV];
  for (int k = 0; k < NV; ++k) {
    dvbar[k] = 0;
    work[k] = 0.5 * h * (v[k] + vn[k]);
  }
  integrateVjp(q, work, gq, out.q, dvbar);
  for (int k = 0; k < NV; ++k) {
    ubar[k] = gv[k] + 0.5 * h * dvbar[k];  // v' = u + ...: u's adjoint starts as v''s
    out.v[k] += 0.5 * h * dvbar[k];
  }

  const int nc = fc.nc, mc = 3 * nc;
  if (mc > 0) {
    // v' = u + H^-1 J^T p.
    for (int k = 0; k < NV; ++k) lambda[k] = ubar[k];
    solveH(m, d, lambda);
    for (int r = 0; r < NV; ++r)
      for (int c = 0; c < NV; ++c) Hbar[r * NV + c] -= lambda[r] * (vn[c] - u[c]);
    double pbar[3 * MAXACTIVE];
    for (int r = 0; r < mc; ++r) {
      double s = 0;
      for (int k = 0; k < NV; ++k) s += fc.Jc[r][k] * lambda[k];
      pbar[r] = s;
    }
    // p = GaussSeidel(G, c, sigma).
    double GbT[3 * MAXACTIVE][3 * MAXACTIVE], cbar[3 * MAXACTIVE], sigmaBar[MAXACTIVE];
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
    const double(*Gsym)[3 * MAXACTIVE] = GbT;
    // G = J W with W = H^-1 J^T = L^-1 D^-1 Y, Y = L^-T J^T on each foot's dof path.
    double W[NV][3 * MAXACTIVE];
    for (int k = 0; k < NV; ++k)
      for (int c = 0; c < mc; ++c) W[k][c] = 0;
    for (int a = 0; a < nc; ++a) {
      const int foot = fc.active[a];
      for (int tt = 0; tt < m.footDofCount[foot]; ++tt)
        for (int r = 0; r < 3; ++r) W[m.footDofs[foot][tt]][3 * a + r] = fc.Yc[3 * a + r][tt];
    }
    for (int k = 0; k < NV; ++k) {
      const double inv = 1.0 / d.LD[k * NV + k];
      for (int c = 0; c < mc; ++c) W[k][c] = inv * W[k][c];
    }
    for (int k = 0; k < NV; ++k)
      for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i])
        for (int c = 0; c < mc; ++c) W[k][c] -= d.LD[k * NV + i] * W[i][c];
    // Jbar = p lambda^T + cbar u^T + Gsym W^T, on the columns contactGeometryVjp reads: the base
    // angular ones, the foot's path, and on a height field the base linear ones.
    double Jbar[3 * MAXACTIVE][NV];
    for (int r = 0; r < mc; ++r)
      for (int k = 0; k < NV; ++k) Jbar[r][k] = 0;
    for (int a = 0; a < nc; ++a) {
      int cols[NV], ncols = 0;
      for (int c = hf.heights ? 0 : 3; c < 6; ++c) cols[ncols++] = c;
      for (int i = m.footBody[fc.active[a]]; i > 0; i = m.parent[i]) cols[ncols++] = 5 + i;
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
    for (int k = 0; k < NV; ++k) {
      double s = 0, sw = 0;
      for (int r = 0; r < mc; ++r) {
        s += fc.Jc[r][k] * cbar[r];
        sw += W[k][r] * cbar[r];
      }
      ubar[k] += s;
      lambda[k] += sw;
    }
    // Hbar -= W Gbar W^T on H's tree-sparsity pattern, both triangles' share on (i, k).
    for (int k = 0; k < NV; ++k) {
      double WG[3 * MAXACTIVE];
      for (int c = 0; c < mc; ++c) {
        double s = 0;
        for (int tt = 0; tt < mc; ++tt) s += W[k][tt] * Gsym[tt][c];
        WG[c] = s;
      }
      double s = 0;
      for (int c = 0; c < mc; ++c) s += WG[c] * W[k][c];
      Hbar[k * NV + k] -= 0.5 * s;
      for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) {
        double si = 0;
        for (int c = 0; c < mc; ++c) si += WG[c] * W[i][c];
        Hbar[i * NV + k] -= si;
      }
    }
    // sigma = sigmoid(kappa d).
    double depthBar[MAXACTIVE];
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
    for (int k = 0; k < NV; ++k) lambda[k] = ubar[k];
    solveH(m, d, lambda);
  }

  stepDynamicsVjp<kParams>(m, o, d, t.dyn, q, v, qTarget, h, u, ubar, lambda, Hbar, bar, out,
                           params);
}

// Given the adjoints gq (NQ), gv (NV) of (q', v') of the step fixedStepRecord taped at
// (q, v, qTarget), adds the adjoints of (q, v, qTarget) to out (sim::stepVjp, hard and smoothed).
// hf only says whether the ground is a height field (the tape holds what was sampled).
DL_HD void fixedStepVjp(const FixedModel& m, const FixedOptions& o, const HeightFieldView& hf,
                        const double* q, const double* v, const double* qTarget, const FixedTape& t,
                        const double* gq, const double* gv, FixedAdjoint& out) {
  stepVjpImpl<false>(m, o, hf, q, v, qTarget, t, gq, gv, out, nullptr);
}
// The same, adding the parameters' adjoints to params too (sim::StepAdjoint::params).
DL_HD void fixedStepVjp(const FixedModel& m, const FixedOptions& o, const HeightFieldView& hf,
                        const double* q, const double* v, const double* qTarget, const FixedTape& t,
                        const double* gq, const double* gv, FixedAdjoint& out,
                        FixedParamBar& params) {
  stepVjpImpl<true>(m, o, hf, q, v, qTarget, t, gq, gv, out, &params);
}

}  // namespace diffloco::gpu
