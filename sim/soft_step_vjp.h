// The VJP of the soft model's fixed-size step (fixed sub-steps): the forward keeps only each
// sub-step's starting state, and the reverse sweep recomputes one sub-step at a time with its tape
// before running that sub-step's adjoint, so the tape stays one sub-step long. Host and device
// code; no heap, no exceptions.
#pragma once

#include "sim/moreau_step_vjp.h"

namespace diffloco::sim {

// One world's scratch of the soft VJP: one sub-step's tape and the starting states of up to
// D::MAXSOFTSUBSTEPS sub-steps.
template <class D>
struct SoftTape {
  StepData<D> d;
  DynamicsTape<D> dyn;
  Contacts<D> fc;
  double u[D::NV];
  double q[D::MAXSOFTSUBSTEPS + 1][D::NQ], v[D::MAXSOFTSUBSTEPS + 1][D::NV];
};

using FixedSoftTape = SoftTape<Quadruped>;  // transitional (sim/step_model.h)

// Reverse of the penalty law (softForce) on the given branches: the force's adjoint fb ->
// depthBar, vcBar and, with kParams, the coefficients' adjoints in p (added).
template <bool kParams = false, class D>
DL_HD void softForceVjp(const FixedOptions& o, double depth, const V3& vc, bool approaching,
                        bool viscous, const V3& f, V3 fb, double& depthBar, V3& vcBar,
                        ParamBar<D>* p = nullptr) {
  if (viscous) {
    vcBar[1] -= o.softKf * fb[1];
    vcBar[2] -= o.softKf * fb[2];
    if constexpr (kParams) p->softKf -= vc[1] * fb[1] + vc[2] * fb[2];
  } else {  // f_t = -mu f_n e, e = v_t / |v_t|
    const double vt = norm2(vc[1], vc[2]);
    const double e1 = vc[1] / vt, e2 = vc[2] / vt;
    const double proj = fb[1] * e1 + fb[2] * e2;
    fb[0] -= o.mu * proj;  // from here on the normal force's adjoint, friction's included
    if constexpr (kParams) p->mu -= f[0] * proj;
    const double k = -o.mu * f[0] / vt;
    vcBar[1] += k * (fb[1] - proj * e1);
    vcBar[2] += k * (fb[2] - proj * e2);
  }
  depthBar += o.softKp * fb[0];
  if constexpr (kParams) p->softKp += depth * fb[0];
  if (approaching) {
    if constexpr (kParams) p->softKd -= vc[0] * fb[0];
    vcBar[0] -= o.softKd * fb[0];
  }
}

// Adjoint of F = sum_a J_a^T f_a(depth_a, J_a v) over the contacts in contact, each force on the
// branches the rules pick (softForce; by default the forward's), given F's adjoint Fbar: sets Jbar
// (3 rows a contact) and depthBar (one a contact), adds to vBar and, with kParams, to *p.
template <bool kParams, class D, class Branches = ForwardBranches>
DL_HD void penaltyForcesVjp(const FixedOptions& o, const Contacts<D>& fc, const double* v,
                            const double* Fbar, double (*Jbar)[D::NV], double* depthBar,
                            double* vBar, ParamBar<D>* p, const Branches& branches = Branches{}) {
  for (int r = 0; r < 3 * fc.nc; ++r)
    for (int k = 0; k < D::NV; ++k) Jbar[r][k] = 0;
  for (int a = 0; a < fc.nc; ++a) depthBar[a] = 0;
  for (int a = 0; a < fc.nc; ++a) {
    const int sphere = fc.active[a];
    const double dep = fc.contact[a].depth;
    if (!branches.inContact(sphere, dep)) continue;
    V3 vc, fb;
    for (int r = 0; r < 3; ++r) {
      double sv = 0, sf = 0;
      for (int k = 0; k < D::NV; ++k) {
        sv += fc.Jc[3 * a + r][k] * v[k];
        sf += fc.Jc[3 * a + r][k] * Fbar[k];
      }
      vc[r] = sv;
      fb[r] = sf;
    }
    const bool approaching = branches.approaching(sphere, vc[0]);
    const double fn = o.softKp * dep - (approaching ? o.softKd * vc[0] : 0.0);
    const bool viscous = branches.viscous(sphere, o.mu * fn, o.softKf * norm2(vc[1], vc[2]));
    const V3 f = softForce(o, dep, vc, sphere, branches);
    V3 vcb = zero3();
    softForceVjp<kParams>(o, dep, vc, approaching, viscous, f, fb, depthBar[a], vcb, p);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) Jbar[3 * a + r][k] += f[r] * Fbar[k] + vcb[r] * v[k];
    for (int k = 0; k < D::NV; ++k)
      vBar[k] +=
          fc.Jc[3 * a][k] * vcb[0] + fc.Jc[3 * a + 1][k] * vcb[1] + fc.Jc[3 * a + 2][k] * vcb[2];
  }
}

// fixedSoftStepVjp's body; with kParams it adds the parameters' adjoints to *params.
template <bool kParams, class D>
DL_HD_OUTLINE bool softStepVjpImpl(const StepModel<D>& m, const FixedOptions& o,
                                   const HeightFieldView& hf, const double* q, const double* v,
                                   const double* qTarget, const double* gq, const double* gv,
                                   SoftTape<D>& t, StateAdjoint<D>& out, ParamBar<D>* params) {
  const int n = o.softSubsteps > 1 ? o.softSubsteps : 1;
  if (n > D::MAXSOFTSUBSTEPS) return false;
  const double h = o.dt / n;
  for (int k = 0; k < D::NQ; ++k) t.q[0][k] = q[k];
  for (int k = 0; k < D::NV; ++k) t.v[0][k] = v[k];
  for (int s = 0; s < n; ++s)
    softSubstep<D>(m, o, hf, h, t.q[s], t.v[s], qTarget, t.q[s + 1], t.v[s + 1], t.d, t.fc, t.u,
                   nullptr);
  const bool finite = allFinite(t.q[n], D::NQ) && allFinite(t.v[n], D::NV);

  double qBar[D::NQ], vBar[D::NV];
  for (int k = 0; k < D::NQ; ++k) qBar[k] = gq[k];
  for (int k = 0; k < D::NV; ++k) vBar[k] = gv[k];
  StateAdjoint<D> local;
  setZero(local);
  for (int s = n - 1; s >= 0; --s) {
    const double* qs0 = t.q[s];
    const double* vs0 = t.v[s];
    const double* v1 = t.v[s + 1];
    {  // the sub-step again, with its tape (the same code as the forward above)
      double qo[D::NQ], vo[D::NV];
      softSubstep(m, o, hf, h, qs0, vs0, qTarget, qo, vo, t.d, t.fc, t.u, &t.dyn);
    }
    const StepData<D>& d = t.d;
    const Contacts<D>& fc = t.fc;
    KinBar<D> bar;
    setZero(bar);
    double Hbar[D::NV * D::NV];
    for (int k = 0; k < D::NV * D::NV; ++k) Hbar[k] = 0;
    for (int k = 0; k < D::NQ; ++k) local.q[k] = 0;
    for (int k = 0; k < D::NV; ++k) local.v[k] = 0;

    // q1 = q0 (+) h/2 (v0 + v1).
    double dvbar[D::NV], work[D::NV], v1Bar[D::NV], lambda[D::NV], Fbar[D::NV];
    for (int k = 0; k < D::NV; ++k) {
      dvbar[k] = 0;
      work[k] = 0.5 * h * (vs0[k] + v1[k]);
    }
    integrateVjp<D>(qs0, work, qBar, local.q, dvbar);
    for (int k = 0; k < D::NV; ++k) {
      v1Bar[k] = vBar[k] + 0.5 * h * dvbar[k];
      local.v[k] += 0.5 * h * dvbar[k];
    }
    // v1 = u + h H^-1 F, F = sum_a J_a^T f_a.
    for (int k = 0; k < D::NV; ++k) lambda[k] = v1Bar[k];
    solveH(m, d, lambda);
    for (int r = 0; r < D::NV; ++r)
      for (int c = 0; c < D::NV; ++c) Hbar[r * D::NV + c] -= lambda[r] * (v1[c] - t.u[c]);
    for (int k = 0; k < D::NV; ++k) Fbar[k] = h * lambda[k];
    double Jbar[3 * D::MAXACTIVE][D::NV], depthBar[D::MAXACTIVE];
    penaltyForcesVjp<kParams>(o, fc, vs0, Fbar, Jbar, depthBar, local.v, params);
    V3* offsetBar = nullptr;
    if constexpr (kParams) offsetBar = params->footOffset;
    contactGeometryVjp<kParams>(m, d, fc, hf.heights != nullptr, Jbar, depthBar, bar, offsetBar);
    stepDynamicsVjp<kParams>(m, o, d, t.dyn, qs0, vs0, qTarget, h, t.u, v1Bar, lambda, Hbar, bar,
                             local, params);
    for (int k = 0; k < D::NQ; ++k) qBar[k] = local.q[k];
    for (int k = 0; k < D::NV; ++k) vBar[k] = local.v[k];
  }
  for (int k = 0; k < D::NQ; ++k) out.q[k] += qBar[k];
  for (int k = 0; k < D::NV; ++k) out.v[k] += vBar[k];
  for (int k = 0; k < D::NJ; ++k) out.qTarget[k] += local.qTarget[k];
  return finite;
}

// Adds to out the adjoints of (q, v, qTarget) of fixedStep's soft step given those of (q', v')
// (gq, gv). Returns false (out unchanged) when the step has more than MAXSOFTSUBSTEPS sub-steps
// (sim/pack.h's notInStepVjp), and false with the adjoints added when a state on the way is not
// finite.
template <class D>
DL_HD bool fixedSoftStepVjp(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                            const double* q, const double* v, const double* qTarget,
                            const double* gq, const double* gv, SoftTape<D>& t,
                            StateAdjoint<D>& out) {
  return softStepVjpImpl<false, D>(m, o, hf, q, v, qTarget, gq, gv, t, out, nullptr);
}
// The same, adding the parameters' adjoints to params too (unchanged where out is).
template <class D>
DL_HD bool fixedSoftStepVjp(const StepModel<D>& m, const FixedOptions& o, const HeightFieldView& hf,
                            const double* q, const double* v, const double* qTarget,
                            const double* gq, const double* gv, SoftTape<D>& t,
                            StateAdjoint<D>& out, ParamBar<D>& params) {
  return softStepVjpImpl<true>(m, o, hf, q, v, qTarget, gq, gv, t, out, &params);
}

}  // namespace diffloco::sim
