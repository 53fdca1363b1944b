// SHAC, Short-Horizon Actor-Critic (Xu et al. 2022; reference/algorithms.md 1), as used by the
// locomotion paper (Tables 6 and 9).
//
// One iteration:
//  1. Rollout of `horizon` steps of every env in the differentiable mode, from the state the last
//     iteration left (the graph is cut there with env.detach()). Actions are reparameterised
//     samples of the actor's Gaussian, squashed by tanh when configured.
//  2. Actor loss: minus the discounted rewards of each segment plus the discounted value of where
//     it ends, summed over segments and divided by horizon * numEnvs (algorithms.md 1.4):
//       L = -1/(T N) sum_segments [ sum_k gamma^k r_{t0+k} + gamma^{len} V_target(s_end) ].
//     A segment ends at a reset inside the window or at the window's end. The value is that of the
//     target critic on the state reached, with its autograd history (the gradient flows through
//     the value into the simulator; the target critic's parameters are frozen): at a truncation
//     (time limit) the env's terminal observation, i.e. the state before the reset; at a
//     termination 0; for a state with non-finite or huge (|x| > 1e6) observations 0.
//     The actor's mean and the target critic's values are fused operations on the networks'
//     flat buffers (policies/fused_mlp.h): the modules' values, a few operations instead of ~25.
//  3. Back-propagation through the window, actor gradient clipping, Adam.
//  4. Critic: TD(lambda) targets from the window's (detached) rewards and target-critic values,
//     `critic_iterations` epochs of `critic_minibatches` shuffled minibatches of MSE (loss and
//     gradient in one fused pass, policies/mlp_regression.h), gradient clipping, Adam.
//  5. Target critic: target = alpha target + (1 - alpha) critic.
//  6. Observation normaliser: the window's observations are merged in (frozen until then).
//
// The critic reads the actor's normalised observations, or, where the env has them
// (VecEnv::numCriticObs() > 0: the task's critic_observations), its own with their own
// normaliser (an asymmetric actor-critic): the value at a segment's end, through which the
// gradient flows, is then that of the critic's observations of the state reached.
//
// Where the reference implementation (NVlabs/DiffRL) has a known flaw this one differs, each
// noted where it is done: shuffled critic minibatches (the reference takes contiguous time slices,
// so each minibatch holds a few consecutive steps only); non-finite losses or gradients skip the
// update and are reported (the reference silently replaces NaN critic gradients by 0 and raises on
// the actor's); separate actor and critic clipping norms (Table 6: 1 and 10; the reference uses
// one); the linear schedule reaches its final rate; each observation enters the normaliser once;
// truncation comes from the env's flag, not an algorithm-side step counter; done handling is
// vectorised; the target critic accumulates no gradients.
#pragma once

#include <memory>

#include "algorithms/algorithm.h"
#include "algorithms/config.h"
#include "policies/fused_mlp.h"
#include "policies/mlp_regression.h"

namespace diffloco::algorithms {

class Shac : public Algorithm {
 public:
  // Switches env to the differentiable mode. Network initialisation draws from torch's global
  // generator, seeded here with `seed`.
  // comm: the world of a data-parallel run (algorithm.h); rank 0's initial networks are used.
  Shac(envs::VecEnv& env, const ShacConfig& config, const policies::PolicyConfig& policy,
       std::uint64_t seed, distributed::Communicator comm = {});

  IterationStats iterate() override;
  int totalIterations() const override { return config_.iterations; }
  policies::Actor& actor() override { return actor_; }
  std::vector<std::string> scalarKeys() const override;
  std::int64_t stepsPerIteration() const override {
    return static_cast<std::int64_t>(config_.horizon) * env_.numEnvs();
  }
  std::string name() const override { return "shac"; }
  void save(torch::serialize::OutputArchive& a) override;
  void load(torch::serialize::InputArchive& a) override;

  policies::Critic& critic() { return critic_; }
  policies::Critic& targetCritic() { return target_; }
  // The critic's own observations' normaliser (null when it reads the actor's inputs).
  policies::ObservationNormalizer& criticNormalizer() { return criticNorm_; }
  const ShacConfig& config() const { return config_; }

  // The actor loss of one window from the env's current state (steps 1-2), with its graph, and
  // what the critic update needs; exposed for tests.
  struct Window {
    torch::Tensor actorLoss;   // scalar, with history
    torch::Tensor obs;         // [T, N, O] normalised inputs, detached
    torch::Tensor rawObs;      // [T, N, O] raw observations (normaliser update)
    // [T, N, C] the critic's normalised inputs, detached: obs, or the critic's own observations
    torch::Tensor criticObs;
    torch::Tensor rawCriticObs;  // [T, N, C] the critic's own raw observations (or undefined)
    torch::Tensor rewards;     // [T, N] scaled rewards, detached
    torch::Tensor dones;       // [T, N] bool: segment ends (the last row is true)
    torch::Tensor nextValues;  // [T, N] target-critic value of the state reached (0: terminated)
  };
  Window rollout();

 protected:
  void loadNetworks(torch::serialize::InputArchive& a) override;

 private:
  struct CriticFit;
  // Step 3: back-propagation through the window w, clipping and Adam; returns the world's loss,
  // sets the gradient's norm (left as it was when the loss is not finite), notes skipped updates.
  double updateActor(Window& w, double& norm, IterationStats& s);
  // Step 4 on the critic's thread: its epochs of minibatches on inputs x and targets.
  CriticFit fitCritic(const torch::Tensor& x, const torch::Tensor& targets);

  ShacConfig config_;
  policies::Actor actor_{nullptr};
  policies::Critic critic_{nullptr}, target_{nullptr};
  // The critic's own observations' normaliser (null: it reads the actor's normalised inputs).
  policies::ObservationNormalizer criticNorm_{nullptr};
  std::unique_ptr<FlatAdam> actorOpt_, criticOpt_;
  // The critic's loss and gradient in one fused pass (policies/mlp_regression.h), not autograd.
  std::unique_ptr<policies::MlpRegression> criticFit_;
  // The actor's mean and the target critic in the rollout as one autograd operation each over
  // their flat buffers (policies/fused_mlp.h): the same networks, without ~25 tensor operations
  // per step of the window.
  std::unique_ptr<policies::FusedMlp> actorMean_, targetValue_;
  torch::Tensor targetFlat_;  // the target critic's parameters, flat (policies are views)
  distributed::Communicator criticComm_;  // the critic thread's collectives
};

}  // namespace diffloco::algorithms
