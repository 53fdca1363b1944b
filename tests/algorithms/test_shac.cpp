// SHAC on a tiny differentiable env (point_env.h): the actor loss against a hand computation with
// resets inside the window (a truncation bootstrapping from its terminal observation, a
// termination bootstrapping 0), its gradient against central finite differences (the value of
// the truncated env's terminal observation keeps its autograd history), the critic targets, the
// target network update, save/load, and that it learns.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>

#include "algorithms/returns.h"
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

ShacConfig tinyConfig(int horizon) {
  ShacConfig c;
  c.iterations = 100;
  c.horizon = horizon;
  c.criticIterations = 4;
  c.criticMinibatches = 2;
  return c;
}

policies::PolicyConfig tinyPolicy() {
  policies::PolicyConfig p;
  p.actorHidden = {16, 16};
  p.criticHidden = {16};
  p.squash = "tanh";
  p.initStd = 0.5;
  return p;
}

// Three envs, horizon 6, 4-step episodes: env 0 is truncated at t = 3; env 1 starts at step 2 and
// is truncated at t = 1; env 2 terminates at its 3rd step (t = 2).
void arrange(PointEnv& env) {
  env.setState(torch::tensor({{0.5f, -0.3f}, {-0.8f, 0.1f}, {0.2f, 0.9f}}),
               torch::tensor({0, 2, 0}, torch::kLong));
  env.setTerminateAt(torch::tensor({-1, -1, 3}, torch::kLong));
  env.seed(5);
  env.clearRecords();
}

// SHAC's actor loss by hand from what env recorded over a window of T steps: per env, the
// discounted rewards of each segment plus gamma^len times value(terminal observations) at its end
// (0 after a termination), summed and divided by T N. `segmentsEndingInside` counts the segments
// that end before the window does.
double handActorLoss(const PointEnv& env, int T, double gamma,
                     const std::function<Tensor(const Tensor&)>& value,
                     int* segmentsEndingInside = nullptr) {
  const int64_t n = env.numEnvs();
  double total = 0;
  for (int64_t e = 0; e < n; ++e) {
    double acc = 0, disc = 1;
    for (int t = 0; t < T; ++t) {
      acc += disc * env.rewardsSeen[t][e].item<float>();
      const bool term = env.terminatedSeen[t][e].item<bool>();
      const bool trunc = env.truncatedSeen[t][e].item<bool>();
      if (term || trunc || t == T - 1) {
        const double v = term ? 0.0 : value(env.terminalSeen[t]).index({e}).item<float>();
        total += acc + gamma * disc * v;
        if (segmentsEndingInside && t < T - 1) ++*segmentsEndingInside;
        acc = 0, disc = 1;
      } else {
        disc *= gamma;
      }
    }
  }
  return -total / static_cast<double>(T * n);
}

}  // namespace

TEST(Shac, ActorLossMatchesHandComputation) {
  PointEnv env(3, 4);
  const int T = 6;
  Shac shac(env, tinyConfig(T), tinyPolicy(), 1);
  arrange(env);
  const Shac::Window w = shac.rollout();
  ASSERT_EQ(env.rewardsSeen.size(), static_cast<size_t>(T));
  // The same loss from the recorded rewards and terminal observations.
  const double gamma = shac.config().gamma;
  auto value = [&](const Tensor& obs) {
    torch::NoGradGuard g;
    return shac.targetCritic()->forward(shac.actor()->normalize(obs));
  };
  int segmentsEndingInside = 0;
  const double expected = handActorLoss(env, T, gamma, value, &segmentsEndingInside);
  // env 1's truncation at t = 1, env 2's termination at t = 2, env 0's truncation at t = 3
  EXPECT_EQ(segmentsEndingInside, 3);
  EXPECT_TRUE(env.truncatedSeen[1][1].item<bool>());
  EXPECT_TRUE(env.truncatedSeen[3][0].item<bool>());
  EXPECT_TRUE(env.terminatedSeen[2][2].item<bool>());
  EXPECT_NEAR(w.actorLoss.item<double>(), expected, 1e-5 * std::abs(expected));
  // Critic data: segment ends, bootstrap values (0 after the termination).
  EXPECT_TRUE(w.dones[1][1].item<bool>() && w.dones[2][2].item<bool>());
  EXPECT_TRUE(w.dones[T - 1].all().item<bool>());
  EXPECT_EQ(w.nextValues[2][2].item<float>(), 0.0f);
  EXPECT_NEAR(w.nextValues[1][1].item<float>(), value(env.terminalSeen[1]).index({1}).item<float>(),
              1e-6);
}

// The gradient reaches the actor through the env steps, the rewards and the target critic's value
// of the terminal observations, including the truncated env's (detaching it changes the gradient
// by far more than the tolerance); with critic observations, through those.
static void expectGradientMatchesFiniteDifferences(bool ownCritic) {
  PointEnv env(3, 4);
  env.setCriticObservations(ownCritic);
  const int T = 6;
  Shac shac(env, tinyConfig(T), tinyPolicy(), 2);
  auto loss = [&] {
    arrange(env);
    shac.generator().set_current_seed(99);
    return shac.rollout().actorLoss;
  };
  // The parameters' gradients are views into the optimiser's flat gradient, where the fused
  // actor's backward accumulates: zeroed, not replaced.
  for (auto& p : shac.actor()->parameters()) p.mutable_grad().zero_();
  loss().backward();
  // The output layer's bias and the log-std, every action dimension.
  std::vector<std::pair<Tensor*, int64_t>> probes;
  std::vector<Tensor> keep;
  for (auto& p : shac.actor()->named_parameters())
    if (p.key() == "log_std" || p.key() == "mlp.net.4.bias") keep.push_back(p.value());
  for (auto& t : keep)
    for (int64_t i = 0; i < t.numel(); ++i) probes.emplace_back(&t, i);
  ASSERT_EQ(probes.size(), 4u);
  const double h = 1e-2;
  for (auto& [p, i] : probes) {
    const double g = p->grad().view(-1)[i].item<double>();
    double fd;
    {
      torch::NoGradGuard ng;
      const float x0 = p->view(-1)[i].item<float>();
      p->view(-1)[i] = x0 + h;
      const double lp = loss().item<double>();
      p->view(-1)[i] = x0 - h;
      const double lm = loss().item<double>();
      p->view(-1)[i] = x0;
      fd = (lp - lm) / (2 * h);
    }
    EXPECT_NEAR(g, fd, 2e-3 * std::max(1.0, std::abs(fd))) << "parameter entry " << i;
  }
}

TEST(Shac, GradientMatchesFiniteDifferences) {
  expectGradientMatchesFiniteDifferences(false);
}

TEST(Shac, GradientMatchesFiniteDifferencesThroughTheCriticsObservations) {
  expectGradientMatchesFiniteDifferences(true);
}

TEST(Shac, IterationUpdatesCriticTargetAndNormaliser) {
  PointEnv env(8, 10);
  ShacConfig c = tinyConfig(5);
  c.targetAlpha = 0.25;
  Shac shac(env, c, tinyPolicy(), 3);
  const Tensor target0 = shac.targetCritic()->parameters()[0].detach().clone();
  const Tensor actor0 = shac.actor()->parameters()[1].detach().clone();
  const IterationStats s = shac.iterate();
  EXPECT_EQ(shac.iteration(), 1);
  EXPECT_EQ(s.envSteps, 40);
  EXPECT_EQ(s.skippedUpdates, 0);
  EXPECT_FALSE(shac.actor()->parameters()[1].equal(actor0));
  // target = 0.25 target + 0.75 critic
  const Tensor expected = 0.25 * target0 + 0.75 * shac.critic()->parameters()[0].detach();
  EXPECT_TRUE(torch::allclose(shac.targetCritic()->parameters()[0], expected, 1e-6, 1e-7));
  EXPECT_FALSE(shac.targetCritic()->parameters()[0].requires_grad());
  EXPECT_EQ(shac.actor()->normalizer()->count(), 40);  // each observation of the window once
  for (const auto& k : shac.scalarKeys()) EXPECT_TRUE(s.scalars.count(k)) << k;
  EXPECT_NEAR(s.scalars.at("Loss/learning_rate_actor"), c.actorLr, 1e-15);
}

TEST(Shac, LearningRateSchedules) {
  EXPECT_DOUBLE_EQ(scheduledLearningRate("exponential", 2e-3, 0.995, 0, 10, 1000),
                   2e-3 * std::pow(0.995, 10));
  EXPECT_DOUBLE_EQ(scheduledLearningRate("linear", 5e-3, 0, 1e-5, 0, 101), 5e-3);
  EXPECT_DOUBLE_EQ(scheduledLearningRate("linear", 5e-3, 0, 1e-5, 100, 101), 1e-5);
  EXPECT_DOUBLE_EQ(scheduledLearningRate("linear", 5e-3, 0, 1e-5, 50, 101), (5e-3 + 1e-5) / 2);
  EXPECT_DOUBLE_EQ(scheduledLearningRate("cosine", 5e-3, 0, 1e-5, 0, 101), 5e-3);
  EXPECT_NEAR(scheduledLearningRate("cosine", 5e-3, 0, 1e-5, 100, 101), 1e-5, 1e-18);
  EXPECT_NEAR(scheduledLearningRate("cosine", 5e-3, 0, 1e-5, 50, 101), (5e-3 + 1e-5) / 2, 1e-18);
  // a quarter of the way: lr_final + (lr0 - lr_final) (1 + cos(pi / 4)) / 2
  EXPECT_NEAR(scheduledLearningRate("cosine", 5e-3, 0, 1e-5, 25, 101),
              1e-5 + (5e-3 - 1e-5) * (1 + std::sqrt(0.5)) / 2, 1e-18);
  EXPECT_DOUBLE_EQ(scheduledLearningRate("constant", 1e-3, 0.5, 0, 10, 100), 1e-3);
}

TEST(Shac, NonFiniteLossSkipsTheUpdate) {
  PointEnv env(4, 10);
  ShacConfig c = tinyConfig(4);
  c.rewardScale = 1e38;  // the float loss overflows to inf
  Shac shac(env, c, tinyPolicy(), 4);
  const Tensor before = shac.actor()->parameters()[1].detach().clone();
  const IterationStats s = shac.iterate();
  EXPECT_GT(s.skippedUpdates, 0);
  EXPECT_NE(s.skippedWhat.find("actor"), std::string::npos) << s.skippedWhat;
  EXPECT_TRUE(shac.actor()->parameters()[1].equal(before));
}

TEST(Shac, SaveLoadContinuesBitForBit) {
  torch::set_num_threads(1);
  PointEnv envA(6, 7, 11), envB(6, 7, 11);
  Shac a(envA, tinyConfig(4), tinyPolicy(), 5);
  a.iterate();
  a.iterate();
  Shac b(envB, tinyConfig(4), tinyPolicy(), 77);  // other initial weights
  b.load(*readCheckpoint(checkpointBytes(a)));
  EXPECT_EQ(b.iteration(), 2);
  envB.setState(envA.observations(), envA.episodeLength());
  envA.seed(9), envB.seed(9);
  a.iterate();
  b.iterate();
  const auto pa = a.actor()->parameters(), pb = b.actor()->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
  EXPECT_TRUE(a.critic()->parameters()[0].equal(b.critic()->parameters()[0]));
  EXPECT_TRUE(a.targetCritic()->parameters()[0].equal(b.targetCritic()->parameters()[0]));
  EXPECT_EQ(a.actor()->normalizer()->count(), b.actor()->normalizer()->count());
}

// A warm start takes the networks and the normaliser only: the run starts at iteration 0 with
// its own optimiser; another algorithm's or another architecture's checkpoint is refused.
TEST(Shac, WarmStartTakesNetworksOnly) {
  torch::set_num_threads(1);
  PointEnv envA(6, 7, 11), envB(6, 7, 11);
  Shac a(envA, tinyConfig(4), tinyPolicy(), 5);
  a.iterate();
  a.iterate();
  const std::string bytes = checkpointBytes(a);
  Shac b(envB, tinyConfig(4), tinyPolicy(), 77);  // other initial weights
  const auto pb0 = b.actor()->parameters()[0].clone();
  b.loadWarmStart(*readCheckpoint(bytes));
  EXPECT_EQ(b.iteration(), 0);
  EXPECT_FALSE(b.actor()->parameters()[0].equal(pb0));
  const auto pa = a.actor()->parameters(), pb = b.actor()->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
  EXPECT_TRUE(a.critic()->parameters()[0].equal(b.critic()->parameters()[0]));
  EXPECT_TRUE(a.targetCritic()->parameters()[0].equal(b.targetCritic()->parameters()[0]));
  EXPECT_EQ(a.actor()->normalizer()->count(), b.actor()->normalizer()->count());
  // The loaded values live in the optimiser's buffers: an iteration trains them.
  b.iterate();
  EXPECT_EQ(b.iteration(), 1);
  EXPECT_FALSE(b.actor()->parameters()[0].equal(a.actor()->parameters()[0]));

  policies::PolicyConfig wider = tinyPolicy();
  wider.actorHidden = {32, 16};
  PointEnv envC(6, 7, 11);
  Shac c(envC, tinyConfig(4), wider, 5);
  EXPECT_THROW(c.loadWarmStart(*readCheckpoint(bytes)), std::runtime_error);
}

TEST(Shac, LearnsToHoldThePointAtTheOrigin) {
  // Reward 1 - |x|^2 per step, 40-step episodes from x ~ U(-1, 1)^2: doing nothing earns about
  // 40 (1 - 2/3) = 13; moving to the origin within a few steps earns close to 40.
  torch::set_num_threads(1);
  PointEnv env(32, 40, 3);
  ShacConfig c = tinyConfig(8);
  c.actorLr = 5e-3;
  c.gamma = 0.95;  // values of ~20: the critic keeps up within the test's 60 iterations
  c.criticIterations = 16;
  c.criticMinibatches = 4;
  c.lrSchedule = "constant";
  Shac shac(env, c, tinyPolicy(), 6);
  for (int i = 0; i < 60; ++i) shac.iterate();
  EXPECT_GT(shac.episodes().meanReturn(), 33) << "mean return " << shac.episodes().meanReturn();
}

// An env with critic observations (an asymmetric actor-critic): the critic and the target critic
// read them through their own normaliser, in the actor loss's segment ends (with their gradient)
// and in the critic's regression; save/load carries that normaliser, and a checkpoint whose
// critic read other observations is refused.
TEST(Shac, CriticReadsTheEnvsCriticObservations) {
  torch::set_num_threads(1);
  PointEnv env(3, 4);
  env.setCriticObservations(true);
  const int T = 6;
  Shac shac(env, tinyConfig(T), tinyPolicy(), 1);
  ASSERT_TRUE(shac.criticNormalizer());
  EXPECT_EQ(shac.critic()->parameters()[0].size(1), 3);
  EXPECT_EQ(shac.targetCritic()->parameters()[0].size(1), 3);
  shac.iterate();  // statistics other than the identity's
  EXPECT_EQ(shac.criticNormalizer()->count(), T * 3);
  arrange(env);
  const Shac::Window w = shac.rollout();
  EXPECT_EQ(w.criticObs.sizes(), torch::IntArrayRef({T, 3, 3}));
  auto value = [&](const Tensor& x) {
    torch::NoGradGuard g;
    return shac.targetCritic()->forward(shac.criticNormalizer()(PointEnv::criticOf(x)));
  };
  const double expected = handActorLoss(env, T, shac.config().gamma, value);
  EXPECT_NEAR(w.actorLoss.item<double>(), expected, 1e-5 * std::abs(expected));
  EXPECT_NEAR(w.nextValues[1][1].item<float>(), value(env.terminalSeen[1]).index({1}).item<float>(),
              1e-6);

  // Save and load: the same next iteration, the critic's normaliser included.
  PointEnv envB(3, 4);
  envB.setCriticObservations(true);
  Shac b(envB, tinyConfig(T), tinyPolicy(), 77);
  const std::string bytes = checkpointBytes(shac);
  b.load(*readCheckpoint(bytes));
  EXPECT_TRUE(torch::equal(b.criticNormalizer()->mean(), shac.criticNormalizer()->mean()));
  envB.setState(env.observations(), env.episodeLength());
  envB.setTerminateAt(torch::tensor({-1, -1, 3}, torch::kLong));  // arrange()'s
  env.seed(9), envB.seed(9);
  shac.iterate();
  b.iterate();
  EXPECT_TRUE(shac.critic()->parameters()[0].equal(b.critic()->parameters()[0]));
  EXPECT_TRUE(shac.actor()->parameters()[1].equal(b.actor()->parameters()[1]));

  // A checkpoint whose critic read the policy's observations, and the other way round.
  PointEnv plainEnv(3, 4);
  Shac plain(plainEnv, tinyConfig(T), tinyPolicy(), 1);
  try {
    b.loadWarmStart(*readCheckpoint(checkpointBytes(plain)));
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("critic_observations"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plain.loadWarmStart(*readCheckpoint(bytes)), std::runtime_error);
}
