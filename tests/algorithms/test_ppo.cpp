// PPO (rsl_rl formulation) on the tiny env (point_env.h): time-outs bootstrap from the terminal
// observation's value, terminations from 0; the stored log-probabilities equal the recomputed ones
// (the normaliser is frozen through the rollout and the update); the KL-adaptive learning rate;
// save/load continues bit for bit; and it learns.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "algorithms/ppo.h"
#include "algorithms/shac.h"
#include "checkpoint_bytes.h"
#include "point_env.h"

using namespace diffloco;
using namespace diffloco::algorithms;
using diffloco::testing::checkpointBytes;
using diffloco::testing::PointEnv;
using diffloco::testing::readCheckpoint;
using torch::Tensor;

namespace {

PpoConfig tinyConfig() {
  PpoConfig c;
  c.iterations = 100;
  c.rollout = 8;
  c.epochs = 3;
  c.minibatches = 2;
  return c;
}

policies::PolicyConfig tinyPolicy() {
  policies::PolicyConfig p;
  p.actorHidden = {16, 16};
  p.criticHidden = {16};
  p.initStd = 0.5;
  return p;
}

}  // namespace

TEST(Ppo, BootstrapValuesAtResets) {
  PointEnv env(3, 4);
  Ppo ppo(env, tinyConfig(), tinyPolicy(), 1);
  ppo.actor()->normalizer()->update(torch::randn({50, 2}) + 0.3);  // non-trivial statistics
  env.setState(torch::tensor({{0.5f, -0.3f}, {-0.8f, 0.1f}, {0.2f, 0.9f}}),
               torch::tensor({0, 2, 0}, torch::kLong));
  env.setTerminateAt(torch::tensor({-1, -1, 3}, torch::kLong));
  env.clearRecords();
  EXPECT_FALSE(env.differentiable());
  const double count = ppo.actor()->normalizer()->count();
  const Ppo::Rollout ro = ppo.rollout();
  EXPECT_EQ(ppo.actor()->normalizer()->count(), count);  // frozen during the rollout
  auto value = [&](const Tensor& obs) {
    torch::NoGradGuard g;
    return ppo.critic()->forward(ppo.actor()->normalize(obs));
  };
  const int T = 8;
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < 3; ++e) {
      const float next = ro.nextValues[t][e].item<float>();
      if (env.terminatedSeen[t][e].item<bool>()) {
        EXPECT_EQ(next, 0.0f) << t << "," << e;
      } else if (env.truncatedSeen[t][e].item<bool>()) {
        // The state before the reset, not the reset state nor the current one.
        EXPECT_NEAR(next, value(env.terminalSeen[t]).index({e}).item<float>(), 1e-6)
            << t << "," << e;
        EXPECT_GT(std::abs(next - ro.values[t][e].item<float>()), 1e-6);
      } else if (t + 1 < T) {
        EXPECT_NEAR(next, ro.values[t + 1][e].item<float>(), 1e-6) << t << "," << e;
      }
    }
  EXPECT_TRUE(env.truncatedSeen[1][1].item<bool>());
  EXPECT_TRUE(env.terminatedSeen[2][2].item<bool>());
}

TEST(Ppo, StoredLogProbabilitiesEqualRecomputedOnes) {
  PointEnv env(16, 10);
  Ppo ppo(env, tinyConfig(), tinyPolicy(), 2);
  ppo.iterate();  // the normaliser now has statistics; they stay frozen through the next rollout
  const Ppo::Rollout ro = ppo.rollout();
  torch::NoGradGuard g;
  const Tensor logp =
      policies::gaussianLogProb(ro.actions, ppo.actor()->mean(ro.obs), ppo.actor()->logStd());
  EXPECT_TRUE(torch::allclose(logp, ro.logProbs, 1e-5, 1e-5));
  // and the stored inputs are the raw observations normalised with those statistics
  EXPECT_TRUE(torch::allclose(ppo.actor()->normalize(ro.rawObs), ro.obs));
}

TEST(Ppo, AdaptiveLearningRate) {
  PointEnv env(16, 10);
  PpoConfig c = tinyConfig();
  c.desiredKl = 1e-12;  // every minibatch overshoots: the rate falls by 1.5 per minibatch
  Ppo shrink(env, c, tinyPolicy(), 3);
  shrink.iterate();
  shrink.iterate();
  EXPECT_LT(shrink.learningRate(), c.learningRate / 1.4);
  EXPECT_GE(shrink.learningRate(), 1e-5);
  PointEnv env2(16, 10);
  c.desiredKl = 100;  // never reached: the rate grows to the cap 1e-2
  Ppo grow(env2, c, tinyPolicy(), 3);
  for (int i = 0; i < 3; ++i) grow.iterate();
  EXPECT_DOUBLE_EQ(grow.learningRate(), 1e-2);
  c.schedule = "fixed";
  PointEnv env3(16, 10);
  Ppo fixed(env3, c, tinyPolicy(), 3);
  fixed.iterate();
  EXPECT_EQ(fixed.learningRate(), c.learningRate);
}

TEST(Ppo, SaveLoadContinuesBitForBit) {
  torch::set_num_threads(1);
  PointEnv envA(8, 7, 11), envB(8, 7, 11);
  PpoConfig c = tinyConfig();
  Ppo a(envA, c, tinyPolicy(), 5);
  a.iterate();
  const std::string bytes = checkpointBytes(a);
  c.learningRate = 0.5;  // overwritten by the checkpoint's adaptive rate
  Ppo b(envB, c, tinyPolicy(), 77);
  b.load(*readCheckpoint(bytes));
  EXPECT_EQ(b.learningRate(), a.learningRate());
  envB.setState(envA.observations(), envA.episodeLength());
  envA.seed(9), envB.seed(9);
  a.iterate();
  b.iterate();
  const auto pa = a.actor()->parameters(), pb = b.actor()->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
  EXPECT_TRUE(a.critic()->parameters()[0].equal(b.critic()->parameters()[0]));
  EXPECT_EQ(a.learningRate(), b.learningRate());
}

TEST(Ppo, WarmStartTakesNetworksOnlyAndChecksTheAlgorithm) {
  torch::set_num_threads(1);
  PointEnv envA(8, 7, 11), envB(8, 7, 11);
  PpoConfig c = tinyConfig();
  Ppo a(envA, c, tinyPolicy(), 5);
  a.iterate();
  const std::string bytes = checkpointBytes(a);
  c.learningRate = 0.5;  // a warm start keeps the new run's rate
  Ppo b(envB, c, tinyPolicy(), 77);
  b.loadWarmStart(*readCheckpoint(bytes));
  EXPECT_EQ(b.iteration(), 0);
  EXPECT_EQ(b.learningRate(), 0.5);
  const auto pa = a.actor()->parameters(), pb = b.actor()->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
  EXPECT_TRUE(a.critic()->parameters()[0].equal(b.critic()->parameters()[0]));

  // A PPO checkpoint is not a SHAC warm start.
  PointEnv envS(8, 7, 11);
  ShacConfig sc;
  sc.horizon = 4;
  Shac shac(envS, sc, tinyPolicy(), 5);
  try {
    shac.loadWarmStart(*readCheckpoint(bytes));
    FAIL() << "a PPO checkpoint must not warm-start SHAC";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'ppo'"), std::string::npos) << e.what();
  }
}

TEST(Ppo, LearnsToHoldThePointAtTheOrigin) {
  torch::set_num_threads(1);
  PointEnv env(64, 40, 3);
  PpoConfig c = tinyConfig();
  c.rollout = 16;
  c.gamma = 0.95;
  Ppo ppo(env, c, tinyPolicy(), 6);
  for (int i = 0; i < 60; ++i) ppo.iterate();
  EXPECT_GT(ppo.episodes().meanReturn(), 30) << "mean return " << ppo.episodes().meanReturn();
}

// An env with critic observations: the values (and the truncations' bootstrap) are the critic's
// of its own observations through its own normaliser; an iteration merges them into it, and a
// checkpoint carries it.
TEST(Ppo, CriticReadsTheEnvsCriticObservations) {
  torch::set_num_threads(1);
  PointEnv env(3, 4);
  env.setCriticObservations(true);
  Ppo ppo(env, tinyConfig(), tinyPolicy(), 1);
  ASSERT_TRUE(ppo.criticNormalizer());
  EXPECT_EQ(ppo.critic()->parameters()[0].size(1), 3);
  ppo.iterate();
  EXPECT_EQ(ppo.criticNormalizer()->count(), 8 * 3);
  env.setState(torch::tensor({{0.5f, -0.3f}, {-0.8f, 0.1f}, {0.2f, 0.9f}}),
               torch::tensor({0, 2, 0}, torch::kLong));
  env.clearRecords();
  const Ppo::Rollout ro = ppo.rollout();
  auto value = [&](const Tensor& x) {
    torch::NoGradGuard g;
    return ppo.critic()->forward(ppo.criticNormalizer()(PointEnv::criticOf(x)));
  };
  EXPECT_EQ(ro.criticObs.sizes(), torch::IntArrayRef({8, 3, 3}));
  EXPECT_TRUE(torch::allclose(ro.values[0],
                              value(torch::tensor({{0.5f, -0.3f}, {-0.8f, 0.1f}, {0.2f, 0.9f}})),
                              1e-6, 1e-6));
  ASSERT_TRUE(env.truncatedSeen[1][1].item<bool>());
  EXPECT_NEAR(ro.nextValues[1][1].item<float>(), value(env.terminalSeen[1]).index({1}).item<float>(),
              1e-6);
  PointEnv envB(3, 4);
  envB.setCriticObservations(true);
  Ppo b(envB, tinyConfig(), tinyPolicy(), 77);
  b.load(*readCheckpoint(checkpointBytes(ppo)));
  EXPECT_TRUE(torch::equal(b.criticNormalizer()->var(), ppo.criticNormalizer()->var()));
}
