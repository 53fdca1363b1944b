// The vectorised environment contract, close to rsl_rl's VecEnv (reference/ecosystem.md): a batch
// of N environments stepped together; observations and rewards are [N, .] tensors.
//
// Two modes:
//  - differentiable: observations, rewards and the terminal observations carry autograd history
//    through the simulator (envs/sim_function.h) back to the actions and to the state at the last
//    detach(). SHAC calls detach() at the start of every window.
//  - sampling (the default): no autograd at all; the simulator is stepped in place (PPO rollouts,
//    evaluation).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace diffloco::envs {

struct StepExtras {
  // Observations of the states the step reached, before any reset ([N, obs], with history in the
  // differentiable mode). Rows of envs that did not reset equal the returned observations; rows of
  // envs that reset hold their last observation, for bootstrapping the value of truncated episodes.
  torch::Tensor terminalObs;
  // The critic's observations of the same states (VecEnv::numCriticObs() > 0; else undefined).
  torch::Tensor terminalCriticObs;
  torch::Tensor resetIds;  // [k] int64: envs reset in this step (terminated or truncated)
  // Weighted reward terms of this step, [N, T], detached: rewards = row sums; column i is the
  // term VecEnv::rewardNames()[i].
  torch::Tensor rewardTerms;
  // Scalars for logging, rsl_rl style: "Episode/rew_<term>" (mean over the episodes that ended in
  // this step of the per-episode sum), "Episode/length_s", "Env/sim_failures" (worlds whose step
  // went non-finite in this step: reset and counted as terminated). Episode keys appear only in
  // steps where episodes ended.
  std::map<std::string, double> log;
};

struct StepResult {
  torch::Tensor obs;         // [N, obs]: observations after resets (the next policy input)
  // [N, criticObs]: the critic's observations after resets (numCriticObs() > 0; else undefined)
  torch::Tensor criticObs;
  torch::Tensor rewards;     // [N]
  torch::Tensor terminated;  // [N] bool: a termination term fired or the simulator failed
  torch::Tensor truncated;   // [N] bool: time limit reached (and not terminated)
  StepExtras extras;
};

class VecEnv {
 public:
  virtual ~VecEnv() = default;

  virtual int numEnvs() const = 0;
  virtual int numObs() const = 0;
  virtual int numActions() const = 0;
  virtual int maxEpisodeLength() const = 0;                         // env steps
  virtual double envDt() const = 0;                                 // seconds per env step
  virtual const std::vector<std::string>& rewardNames() const = 0;  // reward terms, in order
  // The critic's own observations (an asymmetric actor-critic: rsl_rl's privileged observations,
  // Isaac Lab's "critic" group): their size, 0 when the critic reads the policy's observations.
  virtual int numCriticObs() const { return 0; }

  // Resets every env; returns the observations.
  virtual torch::Tensor reset() = 0;
  // Current observations (those returned by the last reset or step).
  virtual torch::Tensor observations() const = 0;
  // The critic's observations of the same states [N, numCriticObs()] (undefined when it has none).
  virtual torch::Tensor criticObservations() const { return {}; }
  // Applies actions [N, numActions] (any floating dtype) for one env step.
  virtual StepResult step(const torch::Tensor& actions) = 0;

  virtual void setDifferentiable(bool on) = 0;
  virtual bool differentiable() const = 0;
  // Cuts the autograd history: the current state and observations become leaves.
  virtual void detach() = 0;

  // Env steps since each env's last reset, [N] int64 (rsl_rl's episode_length_buf).
  virtual torch::Tensor episodeLength() const = 0;
  // Reseeds every random draw of the env (resets, commands, noise, pushes, randomisation).
  virtual void seed(std::uint64_t seed) = 0;
};

}  // namespace diffloco::envs
