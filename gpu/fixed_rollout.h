// sim::rollout and sim::rolloutVjp on the fixed-size step (sim/moreau_step.h,
// sim/moreau_step_vjp.h, sim/soft_step_vjp.h), with the parameters' adjoints: the same contract and
// results (to round-off) for a robot and options that fit the fixed path (sim::notInStepModel and
// sim::notInStepOptions in sim/pack.h are ""), so that multi-step gradients (system identification) run
// the code the GPU runs. A step whose contact set or tape is larger than the fixed arrays is taken
// by sim::step or sim::stepVjp in `data`, as BatchSim does. Rollout::modes is not recorded (left
// empty): the fixed step does not form Data::mode.
#pragma once

#include <vector>

#include "sim/rollout.h"

namespace diffloco::gpu {

sim::Rollout fixedRollout(const sim::Model& model, const sim::SimOptions& opt, sim::Data& data,
                          const sim::VecX& q0, const sim::VecX& v0, const sim::MatX& targets);

// gq[t], gv[t]: the adjoints of a loss's direct dependence on state t, as sim::rolloutVjp.
sim::RolloutAdjoint fixedRolloutVjp(const sim::Model& model, const sim::SimOptions& opt,
                                    sim::Data& data, const sim::Rollout& r,
                                    const sim::MatX& targets, const std::vector<sim::VecX>& gq,
                                    const std::vector<sim::VecX>& gv);

}  // namespace diffloco::gpu
