// Adaptive step-size integration of the soft (penalty) contact model behind the fixed env-step
// interface: DiffMJX ("Hard contacts with soft gradients", Sec. 3.2 and App. B.2). The env step
// still advances (q, v) by opt.dt; inside it an embedded Runge-Kutta pair with a PI step-size
// controller takes as many steps as the stiffness of the moment needs: a few long ones in flight,
// many short ones while a foot is pressed into the k >= 1e5 penalty wall.
//
// Continuous dynamics (the soft model without its time stepping), x = (q, v) in R^(nq + nv):
//   qdot = (v[0:3], 0.5 quat (x) (0, w), v[6:])      base velocity in world, w = v[3:6] in base
//   vdot = H(q)^-1 (tau(q, v) + Jc(q)^T f(q, v) - b(q, v))
// with tau the PD actuator (targets constant over the env step), f the penalty forces of eq. 17-18
// (the same law as the fixed sub-stepping in step.cpp), b = RNEA bias forces + joint damping.
// Kinematics and dynamics are evaluated at the configuration with its quaternion normalised, so an
// RK stage whose quaternion has drifted off the unit sphere still sees a rotation; the quaternion
// rate uses the raw quaternion (the exact flow keeps |quat| constant, as quat . (quat (x) (0, w)) =
// 0). The quaternion is renormalised after every accepted step, and the backward differentiates
// that too.
//
// Integrator: Dormand-Prince 5(4) (Hairer's DOPRI5 tableau, first same as last), the error of the
// 4th-order embedded solution measured in Hairer's RMS norm with per-component scale atol + rtol
// max(|x|, |x_new|). Controller (Soderlind's PI in Diffrax's parametrisation, DiffMJX's P = 0.2,
// I = 0.4): h_new = h * clamp(0.9 err_n^-(P + I)/5 err_(n-1)^(P/5), 0.2, 10) after an accepted
// step (no growth right after a rejection), h_new = h * max(0.2, 0.9 err^-1/5) after a rejected one.
// The first step of every env step comes from Hairer's starting-step estimate (one extra dynamics
// evaluation) unless AdaptiveOptions::initialStep is set: the env step is then a pure function of
// (q, v, qTarget), which the backward pass relies on when it re-runs the forward.
//
// Contact events. The penalty force has kinks: at touchdown/lift-off (depth 0: the Jacobian
// jumps by k = 1e5 N/m), at the viscous/Coulomb friction switch and at the approach/recede switch
// of the damping. The error controller sees them only through the state's local error, but an RK
// step whose stages straddle one differentiates the wrong branch for part of the step: the
// gradient's error is then first order in that step's size (on DiffMJX's point mass, O(1) at
// rtol 1e-6). With AdaptiveOptions::locateContacts (the default) a step whose stages straddle a
// switch (rk::footSwitches) is retaken, shortened to end on the switch (cubic Hermite estimate for
// a depth, linear for the others; at most 8 retakes, counted as rejections), so every accepted step
// integrates one smooth piece and the gradient converges with the tolerance (point mass: 1e-5 at
// rtol 1e-6). A stage that sits on a switch (within the dead band contactEventTol) is
// differentiated on the side of the rest of its step (ContactSides).
//
// Touchdown saltation. The approach damping makes the normal force jump from 0 to kd |v_n| at
// touchdown, so the exact flow's derivative has a jump term there (the saltation matrix) that no
// step's VJP contains, however small the steps (the fixed sub-stepping at any step size lacks it
// too: 3% of the gradient in the robot drop of `diffloco toy robot-drop`). With events located the
// touchdown is a step boundary, and the backward adds the term there (AdaptiveOptions::saltation):
// the gradient is then that of the continuous model (checked against central differences of the
// live integration). With softKd = 0 the right-hand side is continuous and there is no such term.
//
// Limits: a step the controller wants below minStep is taken at minStep and accepted even if its
// error test fails (Data::adaptive.minStepHit). After maxSteps attempts (accepted + rejected) the
// rest of the env step is taken as ONE step, accepted unchecked (Data::adaptive.capHit, and
// Data::adaptiveCapHits counts such env steps for the caller to report); a state that then blows
// up comes back non-finite like any failed step.
//
// Backward (discretise-then-optimise, as DiffMJX): the accepted step sizes are treated as
// constants. The step-size controller is not differentiated: its sizes are piecewise-smooth
// functions of the state whose derivatives multiply the local error, O(tolerance), and
// differentiating accept/reject decisions is meaningless (event step sizes are functions of the
// state too, but with the force continuous across a kink moving a step boundary changes nothing to
// first order; across the touchdown jump the saltation term is exactly that first-order change).
// The gradient is thus the exact gradient of the frozen-step integration (rkIntegrate) plus the
// saltation terms, which the tests check against finite differences. Each RK step's VJP chains the
// VJPs of its six stages (softDynamicsVjp: the forward-dynamics adjoint from sim/adjoint.h's
// building blocks, through d(H^-1 z) = -H^-1 dH H^-1 z) and of the renormalisation. Memory is
// bounded by recomputation: the backward re-runs the adaptive forward from the env step's inputs
// and keeps only the accepted steps' start states and sizes, (nq + nv + 1) doubles per accepted
// step (adaptiveCheckpointBytes: 304 bytes for an 18-DoF robot; 6-20 KB per 5 ms env step in the
// ANYmal drop); each RK step's stages are recomputed when the reverse sweep reaches it, in seven
// scratch Data reused from step to step (~19 KB each). Nothing is kept between the forward and the
// backward but the env step's inputs, as for the other models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/data.h"
#include "sim/options.h"
#include "sim/step_vjp.h"

namespace diffloco::sim {

Integrator parseIntegrator(const std::string& name);  // "fixed" | "adaptive"; throws invalid_argument
const char* toString(Integrator i);

// xdot = f(x) of the soft model at x = (q, v). Leaves in `data` the quantities of x that
// softDynamicsVjp reads: the normalised configuration (data.qMid), kinematics, bias forces, H and
// its factor, foot geometry and contact Jacobians, vdot (data.u). footForce (3 per foot: normal,
// tangent x, tangent y), if given, receives the penalty forces. Returns a fingerprint of the
// piecewise branches taken (actuator clips, penalty regimes; see Data::mode).
std::uint64_t softDynamics(const Model& model, const SimOptions& opt, Data& data,
                           const Eigen::Ref<const VecX>& x, const Eigen::Ref<const VecX>& qTarget,
                           Eigen::Ref<VecX> xdot, VecX* footForce = nullptr);

// The side of each kink of the penalty force on which a stage that sits on it is differentiated.
// Kinds (rk::footSwitches): 0 contact (depth 0), 1 viscous/Coulomb friction, 2 approach/recede
// damping. Bit a of known[k] set: foot a's switch k, when its value is within tol[k] of 0, takes
// the side bit a of on[k]; otherwise (and farther from the switch) the forward's rule applies. A
// stage on a located switch (the end of an event step, the start of the next) takes the side of
// the rest of its RK step: the one-sided limit of the Jacobian over that step's interval.
struct ContactSides {
  std::uint32_t known[3] = {0, 0, 0}, on[3] = {0, 0, 0};
  double tol[3] = {0, 0, 0};
};

// Adjoint of softDynamics: adds to xBar (nq + nv) and to out.qTarget / out.params the adjoints of
// its inputs given xdotBar. `data` must hold softDynamics(x) (nothing run in it since); `ws` is
// the scratch (any Data's workspace() not in use by another thread, `data`'s own included).
void softDynamicsVjp(const Model& model, const SimOptions& opt, const Data& data,
                     const Eigen::Ref<const VecX>& x, const Eigen::Ref<const VecX>& qTarget,
                     const Eigen::Ref<const VecX>& xdotBar, Eigen::Ref<VecX> xBar, StepAdjoint& out,
                     Workspace& ws, const ContactSides& sides = {});

// The adaptive env step (step() dispatches here for the soft model with integrator = adaptive).
// `steps`, if given, receives the accepted step sizes. Statistics go to data.adaptive.
bool adaptiveStep(const Model& model, const SimOptions& opt, Data& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, Eigen::Ref<VecX> qNext,
                  Eigen::Ref<VecX> vNext, std::vector<double>* steps = nullptr);

// The same Dormand-Prince steps with the given sizes and no error control (each followed by the
// quaternion renormalisation): the map that the backward pass differentiates. With the sizes an
// adaptiveStep accepted, it reproduces that step's result (to rounding).
bool rkIntegrate(const Model& model, const SimOptions& opt, Data& data,
                 const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                 Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext);

// Adjoint of rkIntegrate: adds to out the adjoints of (q, v, qTarget, parameters). With
// locateContacts it also takes switches that stages sit on from the side of their step, and adds
// the touchdown saltation at step boundaries where a foot touches down (see above); with
// locateContacts = false it is the plain derivative of rkIntegrate.
void rkIntegrateVjp(const Model& model, const SimOptions& opt, Data& data,
                    const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                    const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                    const Eigen::Ref<const VecX>& gqNext, const Eigen::Ref<const VecX>& gvNext,
                    StepAdjoint& out);

// Adjoint of adaptiveStep with its accepted step sizes frozen (stepVjp dispatches here): re-runs
// the adaptive forward keeping the checkpoints, then rkIntegrateVjp's reverse sweep over them.
void adaptiveStepVjp(const Model& model, const SimOptions& opt, Data& data,
                     const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
                     const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out);

// Process-wide report of env steps that hit AdaptiveOptions::maxSteps (Data::adaptive.capHit),
// for callers that log (sim/ has no logger): the handler, if set, is called from the stepping
// thread (pool workers included: it must be thread-safe) with the step's options and statistics,
// by every adaptiveStep that hits the cap, forward or re-run inside the backward pass.
// adaptiveCapHitsTotal() counts those calls since program start.
using AdaptiveCapHandler = void (*)(const SimOptions& opt, const Data::AdaptiveStats& stats);
void setAdaptiveCapHandler(AdaptiveCapHandler handler);
long long adaptiveCapHitsTotal();

// Bytes the backward pass of one env step holds for its checkpoints: (nq + nv + 1) doubles per
// accepted step. (Per step it also reuses seven scratch Data and 3 x 6 state-sized vectors.)
std::size_t adaptiveCheckpointBytes(const Model& model, int acceptedSteps);

}  // namespace diffloco::sim
