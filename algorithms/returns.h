// Return estimators shared by SHAC (TD(lambda) critic targets) and PPO (GAE), over [T, N] tensors
// (time-major, one column per env).
//
// Both take the value of the *next* state explicitly, nextValues[t] = V'(s_{t+1}):
//   - an env that goes on: the value of the state reached;
//   - an env that was truncated (time limit): the value of its terminal observation, i.e. the
//     state before the reset (rsl_rl adds gamma V(s_t) instead, its issues #20 and #151);
//   - an env that terminated: 0.
// dones[t] marks the end of a segment (terminated or truncated at step t); the recursions never
// look across it. The last row is always treated as a segment end (the window's end: the value
// there is the bootstrap).
#pragma once

#include <torch/torch.h>

namespace diffloco::algorithms {

// TD(lambda) targets, SHAC's critic targets (algorithms.md 1.6): inside a segment
//   y_t = r_t + gamma ((1 - lambda) V'_t + lambda y_{t+1}),   at a segment end  y_t = r_t + gamma V'_t,
// i.e. the lambda-return truncated at the segment end.
torch::Tensor lambdaReturns(const torch::Tensor& rewards, const torch::Tensor& nextValues,
                            const torch::Tensor& dones, double gamma, double lambda);

// Generalised advantage estimation (rsl_rl's compute_returns with the terminal-value fix):
//   delta_t = r_t + gamma V'_t - V_t,   A_t = delta_t + gamma lambda (1 - done_t) A_{t+1}.
// Returns the advantages; the value targets are advantages + values.
torch::Tensor gaeAdvantages(const torch::Tensor& rewards, const torch::Tensor& values,
                            const torch::Tensor& nextValues, const torch::Tensor& dones,
                            double gamma, double lambda);

}  // namespace diffloco::algorithms
