// sim::rollout and sim::rolloutVjp on the stages (sim/moreau_step.h, sim/moreau_step_vjp.h,
// sim/soft_step_vjp.h) of size class D, with the parameters' adjoints: the same contract and
// results (to round-off) for a model and options that fit D (notInStepModel<D> and
// notInStepOptions in sim/pack.h are ""), so that multi-step gradients (system identification)
// run the code the GPU runs. A non-finite step leaves Rollout::finite false, as sim::rollout
// does. Rollout::modes is not recorded (left empty): the stages do not form Data::mode.
// Instantiated for Quadruped and SingleBody.
#pragma once

#include <vector>

#include "sim/model.h"
#include "sim/options.h"
#include "sim/rollout_types.h"
#include "sim/step_model.h"

namespace diffloco::sim {

template <class D>
Rollout stageRollout(const Model& model, const SimOptions& opt, const VecX& q0, const VecX& v0,
                     const MatX& targets);

// gq[t], gv[t]: the adjoints of a loss's direct dependence on state t, as sim::rolloutVjp. Throws
// std::invalid_argument with notInStepVjp<D>'s reason for options whose VJP D's tape does not
// hold.
template <class D>
RolloutAdjoint stageRolloutVjp(const Model& model, const SimOptions& opt, const Rollout& r,
                               const MatX& targets, const std::vector<VecX>& gq,
                               const std::vector<VecX>& gv);

}  // namespace diffloco::sim
