// A trajectory of H steps and its adjoints: what sim::stageRollout and its VJP (sim/stage_rollout.h)
// exchange with their callers (gradcheck, the toys, system identification), and the bookkeeping
// every rollout VJP shares (defined in sim/stage_rollout.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model.h"
#include "sim/param_grad.h"

namespace diffloco::sim {

struct Rollout {
  std::vector<VecX> q, v;               // H + 1 states
  std::vector<std::uint64_t> modes;  // per step: a fingerprint of the smooth piece the step was on
  bool finite = true;
};

// Adjoints of (q0, v0), of every step's targets (nj x H) and of the parameters, given the
// adjoints of the final state.
struct RolloutAdjoint {
  VecX q0, v0;
  MatX targets;
  ParamGrad params;
};

// The bookkeeping every rollout VJP shares: the adjoint it starts from (zero over H steps, the
// final state's direct adjoints gq[H], gv[H] added), and state t's direct adjoints added to the
// adjoint flowing back (an absent or empty entry counts as zero).
RolloutAdjoint startRolloutAdjoint(const Model& model, int H, const std::vector<VecX>& gq,
                                   const std::vector<VecX>& gv);
void addDirectAdjoint(RolloutAdjoint& out, int t, const std::vector<VecX>& gq,
                      const std::vector<VecX>& gv);

}  // namespace diffloco::sim
