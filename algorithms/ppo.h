// PPO in rsl_rl's formulation (reference/algorithms.md 3): GAE, clipped surrogate, clipped value
// loss, entropy bonus, KL-adaptive learning rate, epochs x minibatches, gradient clipping; the
// locomotion paper's baseline (Table 6).
//
// Differences from rsl_rl, each a fix of a known flaw (algorithms.md 4 and 6):
//  - Time-outs bootstrap from the value of the env's terminal observation (the state before the
//    reset), not from V(s_t) (rsl_rl #20, #151).
//  - A fresh minibatch permutation every epoch (rsl_rl draws one and reuses it: #26, #148).
//  - The observation normaliser is frozen during the rollout and the update and then merged with
//    the rollout's observations: stored inputs, old log-probabilities and the update all see the
//    same statistics, so the ratio is exactly 1 on the first minibatch (rsl_rl HEAD re-normalises
//    with moved statistics).
//  - The Gaussian's std is exp(log-std): it cannot become negative (rsl_rl #33, #124).
//  - The adaptive learning rate is part of the checkpoint and restored on resume (rsl_rl #221).
//  - A non-finite loss or gradient skips that minibatch and is reported (rsl_rl raises at best).
// Actor and critic gradients are clipped separately to max_grad_norm, as in rsl_rl HEAD, so that
// large value gradients do not shrink the policy step.
// The critic reads the actor's normalised observations, or its own with their own normaliser where
// the env has them (VecEnv::numCriticObs() > 0, rsl_rl's privileged observations).
#pragma once

#include <memory>

#include "algorithms/algorithm.h"
#include "algorithms/config.h"

namespace diffloco::algorithms {

class Ppo : public Algorithm {
 public:
  // Switches env to the sampling mode. Network initialisation draws from torch's global generator,
  // seeded here with `seed`.
  // comm: the world of a data-parallel run (algorithm.h); rank 0's initial networks are used,
  // advantages are normalised with the world's mean and deviation and the adaptive learning
  // rate follows the world's mean KL.
  Ppo(envs::VecEnv& env, const PpoConfig& config, const policies::PolicyConfig& policy,
      std::uint64_t seed, distributed::Communicator comm = {});

  IterationStats iterate() override;
  int totalIterations() const override { return config_.iterations; }
  policies::Actor& actor() override { return actor_; }
  std::vector<std::string> scalarKeys() const override;
  std::int64_t stepsPerIteration() const override {
    return static_cast<std::int64_t>(config_.rollout) * env_.numEnvs();
  }
  std::string name() const override { return "ppo"; }
  void save(torch::serialize::OutputArchive& a) override;
  void load(torch::serialize::InputArchive& a) override;

  policies::Critic& critic() { return critic_; }
  // The critic's own observations' normaliser (null when it reads the actor's inputs).
  policies::ObservationNormalizer& criticNormalizer() { return criticNorm_; }
  double learningRate() const { return lr_; }

  // The rollout buffers ([T, N, ...], detached), exposed for tests.
  struct Rollout {
    torch::Tensor obs, rawObs, actions, logProbs, means, values, rewards, dones, nextValues;
    // The critic's normalised and raw inputs where it reads its own observations (criticObs:
    // obs otherwise; rawCriticObs undefined)
    torch::Tensor criticObs, rawCriticObs;
    torch::Tensor logStd;  // [A] during the rollout
  };
  Rollout rollout();

 protected:
  void loadNetworks(torch::serialize::InputArchive& a) override;

 private:
  struct Samples;
  struct UpdateSums;
  // The rollout's samples flattened, with the normalised advantages and the value targets.
  Samples samples(const Rollout& ro);
  // The adaptive schedule: the rate from this minibatch's KL(old || new) before its step.
  void adaptLearningRate(const torch::Tensor& oldMean, const torch::Tensor& oldLogStd,
                         const torch::Tensor& mean, int64_t size, UpdateSums& sums);
  // One minibatch (rows idx of d, `size` of the world's samples): the clipped surrogate, the
  // value loss and the entropy, their gradients summed over the ranks, clipping and Adam (the
  // actor's once past ppo.critic_warmup_iterations).
  void updateMinibatch(const Samples& d, const torch::Tensor& idx, int64_t size,
                       const torch::Tensor& oldLogStd, UpdateSums& sums, IterationStats& s);

  PpoConfig config_;
  policies::Actor actor_{nullptr};
  policies::Critic critic_{nullptr};
  // The critic's own observations' normaliser (null: it reads the actor's normalised inputs).
  policies::ObservationNormalizer criticNorm_{nullptr};
  // Actor and critic each with their own flat Adam (same rate): Adam is per element, so this is
  // one Adam over both, and each network's gradient is clipped on its own.
  std::unique_ptr<FlatAdam> actorOpt_, criticOpt_;
  double lr_;  // the adaptive schedule's current rate
};

}  // namespace diffloco::algorithms
