// Hyper-parameters of SHAC and PPO as written under `shac:` / `ppo:` in a training config. Plain
// data with a Drake-style visit() (train/config.h reads and writes them strictly from YAML).
// Defaults are the walk task's (locomotion paper, Table 6); configs/velocity_anymal_shac.yaml sets
// Table 9's.
#pragma once

#include <string>
#include <vector>

namespace diffloco::algorithms {

struct ShacConfig {
  int iterations = 1000;
  int numEnvs = 64;
  int horizon = 32;  // short horizon T
  double gamma = 0.99;
  double lambda = 0.95;  // TD(lambda) of the critic targets ("value estimation")
  double actorLr = 2e-3;
  double criticLr = 2e-3;
  // "exponential": lr_i = lr_0 decay^i (Table 6); "linear": from lr_0 at the first iteration to
  // lr_final at the last (Table 9); "cosine": the same ends along half a cosine; "constant".
  std::string lrSchedule = "exponential";
  double actorLrDecay = 0.995;
  double criticLrDecay = 0.997;
  double actorLrFinal = 1e-5;
  double criticLrFinal = 1e-5;
  std::vector<double> adamBetas{0.7, 0.95};  // SHAC reference (algorithms.md 1.8)
  // Soft update of the target critic after each iteration: target = alpha target + (1 - alpha)
  // critic (alpha weighs the old target; Table 6: 0.2).
  double targetAlpha = 0.2;
  int criticIterations = 16;   // epochs over the window's data
  int criticMinibatches = 4;
  double actorGradNorm = 1.0;   // max global norm (<= 0: no clipping)
  double criticGradNorm = 10.0;
  double rewardScale = 1.0;  // multiplies the rewards the losses see (not the logged returns)

  template <class V>
  void visit(V& v) {
    v.field("iterations", iterations, "training iterations (total, also when resuming)",
            V::between(1, 1e8));
    v.field("num_envs", numEnvs, "parallel environments", V::between(1, 65536));
    // At most 1000: the window's whole graph through the simulator is held in memory.
    v.field("horizon", horizon, "short horizon: env steps per iteration", V::between(1, 1000));
    v.field("gamma", gamma, "discount factor", V::between(0, 1));
    v.field("lambda", lambda, "TD(lambda) of the critic targets", V::between(0, 1));
    v.field("actor_lr", actorLr, "actor learning rate (start)", V::greater(0));
    v.field("critic_lr", criticLr, "critic learning rate (start)", V::greater(0));
    v.field("lr_schedule", lrSchedule, "learning-rate schedule",
            V::oneOf({"exponential", "linear", "cosine", "constant"}));
    v.field("actor_lr_decay", actorLrDecay, "exponential schedule: factor per iteration",
            V::openLow(0, 1));
    v.field("critic_lr_decay", criticLrDecay, "exponential schedule: factor per iteration",
            V::openLow(0, 1));
    v.field("actor_lr_final", actorLrFinal,
            "linear and cosine schedules: actor rate at the last iteration", V::atLeast(0));
    v.field("critic_lr_final", criticLrFinal,
            "linear and cosine schedules: critic rate at the last iteration", V::atLeast(0));
    v.field("adam_betas", adamBetas, "Adam (beta1, beta2) of both networks",
            V::halfOpen(0, 1).sized(2));
    v.field("target_alpha", targetAlpha,
            "target critic soft update: target = alpha target + (1 - alpha) critic",
            V::between(0, 1));
    v.field("critic_iterations", criticIterations, "critic epochs per iteration", V::atLeast(1));
    v.field("critic_minibatches", criticMinibatches, "critic minibatches per epoch",
            V::atLeast(1));
    v.field("actor_grad_norm", actorGradNorm, "max actor gradient norm (0: no clipping)",
            V::atLeast(0));
    v.field("critic_grad_norm", criticGradNorm, "max critic gradient norm (0: no clipping)",
            V::atLeast(0));
    v.field("reward_scale", rewardScale, "reward multiplier inside the losses", V::greater(0));
  }
};

struct PpoConfig {
  int iterations = 1000;
  int numEnvs = 2048;
  int rollout = 24;  // env steps per iteration
  double learningRate = 1e-3;
  std::string schedule = "adaptive";  // "adaptive" (KL-driven, rsl_rl) or "fixed"
  double desiredKl = 0.01;
  double gamma = 0.99;
  double lambda = 0.95;  // GAE
  double clip = 0.2;
  bool clippedValueLoss = true;
  double valueLossCoef = 1.0;
  double entropyCoef = 0.0;
  int epochs = 5;
  int minibatches = 4;
  double maxGradNorm = 1.0;
  std::vector<double> adamBetas{0.9, 0.999};
  // The first iterations fit the critic only: a run warm-started from a policy file, whose critic
  // starts fresh, would otherwise move the actor along the advantages of an untrained critic.
  int criticWarmupIterations = 0;

  template <class V>
  void visit(V& v) {
    v.field("iterations", iterations, "training iterations (total, also when resuming)",
            V::between(1, 1e8));
    v.field("num_envs", numEnvs, "parallel environments", V::between(1, 65536));
    v.field("rollout", rollout, "env steps per env per iteration", V::between(1, 10000));
    v.field("learning_rate", learningRate, "Adam learning rate (start)", V::greater(0));
    v.field("schedule", schedule, "learning-rate schedule", V::oneOf({"adaptive", "fixed"}));
    v.field("desired_kl", desiredKl, "adaptive schedule: target KL per minibatch", V::greater(0));
    v.field("gamma", gamma, "discount factor", V::between(0, 1));
    v.field("lambda", lambda, "GAE lambda", V::between(0, 1));
    v.field("clip", clip, "ratio clip epsilon (also the value clip, in value units)",
            V::greater(0));
    v.field("clipped_value_loss", clippedValueLoss, "clip the value loss like the ratio");
    v.field("value_loss_coef", valueLossCoef, "weight of the value loss", V::atLeast(0));
    v.field("entropy_coef", entropyCoef, "weight of the entropy bonus", V::atLeast(0));
    v.field("epochs", epochs, "learning epochs per iteration", V::atLeast(1));
    v.field("minibatches", minibatches, "minibatches per epoch", V::atLeast(1));
    v.field("max_grad_norm", maxGradNorm, "max gradient norm, actor and critic each (0: none)",
            V::atLeast(0));
    v.field("adam_betas", adamBetas, "Adam (beta1, beta2)", V::halfOpen(0, 1).sized(2));
    v.field("critic_warmup_iterations", criticWarmupIterations,
            "iterations at the start that update the critic only (the actor and the adaptive "
            "rate stay as they are): for init_from a policy file, whose critic starts fresh",
            V::atLeast(0));
  }
};

}  // namespace diffloco::algorithms
