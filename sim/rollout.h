// A trajectory of H steps and its reverse pass: the building block of multi-step gradients
// (gradcheck, the toys, system identification). Stores the H + 1 states (49 doubles per step for
// an 18-DoF robot) and recomputes each step inside its VJP.
#pragma once

#include <vector>

#include "sim/rollout_types.h"
#include "sim/step_vjp.h"

namespace diffloco::sim {

// Runs H = targets.cols() steps from (q0, v0) with joint targets targets.col(t).
Rollout rollout(const Model& model, const SimOptions& opt, Data& data, const VecX& q0,
                const VecX& v0, const MatX& targets);

// Adjoints of (q0, v0), of every step's targets (nj x H) and of the parameters (RolloutAdjoint,
// sim/rollout_types.h), given the adjoints of the final state.
RolloutAdjoint rolloutVjp(const Model& model, const SimOptions& opt, Data& data, const Rollout& r,
                          const MatX& targets, const VecX& gqFinal, const VecX& gvFinal);
// The same for a loss on every state of the trajectory (multi-step prediction errors): gq[t], gv[t]
// are the adjoints of the loss's direct dependence on state t (t = 0..H; an empty vector counts
// as zero). They are added to the adjoint flowing back through the steps, so the result includes
// gq[0], gv[0] in q0, v0.
RolloutAdjoint rolloutVjp(const Model& model, const SimOptions& opt, Data& data, const Rollout& r,
                          const MatX& targets, const std::vector<VecX>& gq,
                          const std::vector<VecX>& gv);

}  // namespace diffloco::sim
