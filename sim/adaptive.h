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
// on every sphere (the law of the fixed sub-stepping), b = RNEA bias forces + joint damping: the
// stages' softDynamics (sim/soft_dynamics.h) on the model packed for its size class (Quadruped or
// SingleBody, sim/step_model.h; a model of neither is refused), packed once per env step.
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
// differentiated on the side of the rest of its step (sim/soft_dynamics.h's ContactSides).
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
// error test fails (AdaptiveStats::minStepHit). After maxSteps attempts (accepted + rejected) the
// rest of the env step is taken as ONE step, accepted unchecked (AdaptiveStats::capHit, and
// AdaptiveData::adaptiveCapHits counts such env steps for the caller to report); a state that then
// blows up comes back non-finite like any failed step.
//
// Backward (discretise-then-optimise, as DiffMJX): the accepted step sizes are treated as
// constants. The step-size controller is not differentiated: its sizes are piecewise-smooth
// functions of the state whose derivatives multiply the local error, O(tolerance), and
// differentiating accept/reject decisions is meaningless (event step sizes are functions of the
// state too, but with the force continuous across a kink moving a step boundary changes nothing to
// first order; across the touchdown jump the saltation term is exactly that first-order change).
// The gradient is thus the exact gradient of the frozen-step integration (rkIntegrate) plus the
// saltation terms, which the tests check against finite differences. Each RK step's VJP chains the
// VJPs of its six stages (softDynamicsVjp: the forward-dynamics adjoint, through
// d(H^-1 z) = -H^-1 dH H^-1 z) and of the renormalisation. Memory is bounded by recomputation:
// the backward re-runs the adaptive forward from the env step's inputs and keeps only the accepted
// steps' start states and sizes, (nq + nv + 1) doubles per accepted step
// (adaptiveCheckpointBytes: 304 bytes for an 18-DoF robot; 6-20 KB per 5 ms env step in the ANYmal
// drop); each RK step's stages are recomputed when the reverse sweep reaches it, into seven
// stage tapes reused from step to step (adaptiveTapeBytes). Nothing is kept between the forward
// and the backward but the env step's inputs, as for the other models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/options.h"
#include "sim/param_grad.h"

namespace diffloco::sim {

Integrator parseIntegrator(const std::string& name);  // "fixed" | "adaptive"; throws invalid_argument
const char* toString(Integrator i);

// Statistics of one adaptive env step.
struct AdaptiveStats {
  int accepted = 0, rejected = 0, evaluations = 0;  // steps and dynamics evaluations
  int events = 0;                   // accepted steps that end on a located contact switch
  double minStep = 0, maxStep = 0;  // smallest and largest accepted step [s]
  bool capHit = false;      // maxSteps reached: the rest of the env step was one unchecked step
  bool minStepHit = false;  // a step at minStep failed the error test and was accepted anyway
};

// One world's results of the last adaptive env step besides its state, and the integrator's
// scratch (made on first use, for the model's size class): one per world or thread.
struct AdaptiveData {
  explicit AdaptiveData(const Model& model);
  ~AdaptiveData();
  AdaptiveData(AdaptiveData&&) noexcept;
  AdaptiveData& operator=(AdaptiveData&&) noexcept;

  AdaptiveStats adaptive;
  // Env steps that hit AdaptiveOptions::maxSteps, counted over calls (never reset here: the caller
  // reads, reports and clears it).
  long long adaptiveCapHits = 0;
  VecX footImpulse;  // 3 per sphere (normal, t1, t2): the penalty impulse over the env step
  VecX depth;        // each sphere's depth at the env step's end state
  // A fingerprint of the piecewise branches the env step's stages took (actuator clips, penalty
  // regimes): two integrations with the same fingerprint are on the same smooth piece.
  std::uint64_t mode = 0;
  void mixMode(std::uint64_t value) { mode = (mode ^ value) * 0x100000001b3ull; }

  struct Scratch {  // one size class's (sim/adaptive_rk.h)
    virtual ~Scratch() = default;
  };
  std::unique_ptr<Scratch> scratch;
};

// Adjoints of an env step's inputs.
struct StepAdjoint {
  VecX q, v, qTarget;  // (nq, nv, nj)
  ParamGrad params;
  explicit StepAdjoint(const Model& model)
      : q(VecX::Zero(model.nq())), v(VecX::Zero(model.nv())), qTarget(VecX::Zero(model.nj())) {
    params.setZero(model);
  }
  void setZero(const Model& model) {
    q.setZero();
    v.setZero();
    qTarget.setZero();
    params.setZero(model);
  }
};

// The adaptive env step of opt.dt from (q, v) with the joints driven to qTarget (the soft model;
// opt.contact.integrator is not read). `steps`, if given, receives the accepted step sizes.
// Statistics go to data. False when the new state is not finite. Throws std::invalid_argument
// for a model of no size class.
bool adaptiveStep(const Model& model, const SimOptions& opt, AdaptiveData& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, Eigen::Ref<VecX> qNext,
                  Eigen::Ref<VecX> vNext, std::vector<double>* steps = nullptr);

// The same Dormand-Prince steps with the given sizes and no error control (each followed by the
// quaternion renormalisation): the map that the backward pass differentiates. With the sizes an
// adaptiveStep accepted, it reproduces that step's result (to rounding).
bool rkIntegrate(const Model& model, const SimOptions& opt, AdaptiveData& data,
                 const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                 Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext);

// Adds to out the adjoints of adaptiveStep's inputs (q, v, qTarget, parameters) given those of
// (qNext, vNext), its accepted step sizes frozen: re-runs the adaptive forward keeping the
// checkpoints, then the reverse sweep over them. With locateContacts it also takes switches that
// stages sit on from the side of their step, and adds the touchdown saltation at step boundaries
// where a sphere touches down (see above); with locateContacts = false it is the plain derivative
// of rkIntegrate with those sizes.
void adaptiveStepVjp(const Model& model, const SimOptions& opt, AdaptiveData& data,
                     const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
                     const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out);

// Bytes the backward pass of one env step holds for its checkpoints: (nq + nv + 1) doubles per
// accepted step.
std::size_t adaptiveCheckpointBytes(const Model& model, int acceptedSteps);
// Bytes of the stage tapes it reuses from RK step to RK step (seven: six stages and one for a
// touchdown), for the model's size class.
std::size_t adaptiveTapeBytes(const Model& model);

}  // namespace diffloco::sim
