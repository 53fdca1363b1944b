// An H-step rollout on the stages (sim/moreau_step.h, sim/moreau_step_vjp.h, sim/soft_step_vjp.h)
// of size class D and its VJP with the parameters' adjoints, from the host objects, for a model
// and options that fit D (notInStepModel<D> and notInStepOptions in sim/pack.h are ""): the
// multi-step gradients of system identification and gradcheck run the code the GPU runs. A
// non-finite step leaves Rollout::finite false. Rollout::modes is not recorded (left empty).
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

// gq[t], gv[t]: the adjoints of a loss's direct dependence on state t (an absent or empty entry
// counts as zero). Throws
// std::invalid_argument with notInStepVjp<D>'s reason for options whose VJP D's tape does not
// hold.
template <class D>
RolloutAdjoint stageRolloutVjp(const Model& model, const SimOptions& opt, const Rollout& r,
                               const MatX& targets, const std::vector<VecX>& gq,
                               const std::vector<VecX>& gv);

}  // namespace diffloco::sim
