// `diffloco toy grad-norm`: the locomotion paper's Figure 5 (left), the mean norm of the gradient
// of the return with respect to the actions against the horizon, for both robots with a fixed
// random policy.
//
// The paper plots "the mean gradient norm during training" without defining it further. We
// measure the quantity it is about, the size of the first-order gradient a SHAC window produces,
// without the training around it (documented choice):
//
//   g_e = || d(sum_{t<H} r_t,e) / d(a_0,e, ..., a_{H-1},e) ||_2
//
// for env e, where r_t,e is the env's (undiscounted, weighted) reward of env step t of a window of
// H env steps and a_t,e in R^12 the action the env receives. The policy stays in the loop, as in
// SHAC: a_t = pi(o_t) + delta_t with delta_t = 0 a leaf, so d/d(delta_t) is the total derivative
// with respect to the action of step t, through the simulator and through the policy's reaction to
// every later observation (the closed-loop derivative). The plotted value is the mean of g_e over
// envs and windows; the median and the maximum are written too. No critic terminal value, no
// discount, no normalisation by H or N.
//
// Policy: the actor of the SHAC configs (policies::Actor, MLP (128, 64, 32), ELU, LayerNorm, tanh
// squash) in double precision with PyTorch's default initialisation from torch::manual_seed(seed),
// observation normaliser left at its initial state (mean 0, var 1: the identity); the env receives
// the deterministic action tanh(mean(o_t)) (no sampling noise). Envs: differentiable mode, the
// task as in training (randomisation on), reset once with `seed`; windows follow one another along
// the same trajectories (detach() at each window start, as SHAC does); envs that terminate reset
// inside a window, which cuts their gradient there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace diffloco::envs {
class LocomotionEnv;
}
namespace diffloco::policies {
class Actor;
}

namespace diffloco::experiments {

struct GradNormCase {
  std::string label;  // column prefix in the CSV, legend
  std::string task;   // configs/tasks/<task>.yaml (or a path)
};

struct GradNormOptions {
  std::vector<GradNormCase> cases{{"quadruped", "walk"}, {"anymal", "velocity"}};
  std::vector<int> horizons{4, 8, 16, 32, 64};
  int envs = 64;    // parallel envs per case
  int windows = 8;  // consecutive windows per horizon (a fresh env for every horizon)
  std::uint64_t seed = 0;
  int threads = 2;  // simulator threads
};

struct GradNormStat {
  double mean = 0, median = 0, max = 0;
  std::int64_t samples = 0;  // envs x windows
  std::int64_t resets = 0;   // env resets inside the windows
};

struct GradNormResult {
  GradNormOptions options;
  std::vector<std::vector<GradNormStat>> stats;  // [case][horizon]
};

GradNormResult runGradNorm(const GradNormOptions& options);

// Per-env gradient norms g_e of one window of `horizon` env steps from the env's current state
// (the env must be differentiable; it is detached first and left at the window's end). `resets`,
// if given, receives the number of env resets inside the window.
std::vector<double> windowGradNorms(envs::LocomotionEnv& env, policies::Actor& actor, int horizon,
                                    std::int64_t* resets = nullptr);

// The actor used by the toy, for an env of the given sizes, initialised from torch::manual_seed.
policies::Actor makeGradNormActor(int numObs, int numActions, std::uint64_t seed);

// grad_norm.csv: horizon, then <label>_mean, _median, _max, _resets, _mean_over_h (mean / H) per
// case.
std::string writeGradNormCsv(const GradNormResult& r, const std::string& dir);
// grad_norm.png (and grad_norm.gp) with gnuplot, log-log against the horizon: mean and median
// (left), mean / H (right).
std::string plotGradNorm(const GradNormResult& r, const std::string& dir);

}  // namespace diffloco::experiments
