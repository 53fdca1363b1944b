// What the algorithms share: the flat Adam against torch's Adam, gradient clipping, the episode
// statistics of the training envs, derived seeds.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "algorithms/algorithm.h"

using namespace diffloco;
using namespace diffloco::algorithms;
using torch::Tensor;

TEST(FlatAdam, MatchesTorchAdam) {
  torch::manual_seed(1);
  torch::nn::Sequential a(torch::nn::Linear(5, 7), torch::nn::ELU(), torch::nn::Linear(7, 2));
  torch::nn::Sequential b(torch::nn::Linear(5, 7), torch::nn::ELU(), torch::nn::Linear(7, 2));
  {
    torch::NoGradGuard g;
    for (size_t i = 0; i < a->parameters().size(); ++i) b->parameters()[i].copy_(a->parameters()[i]);
  }
  torch::optim::Adam ref(a->parameters(), torch::optim::AdamOptions(3e-2).betas({0.7, 0.95}));
  FlatAdam flat(b->parameters(), 3e-2, 0.7, 0.95);
  for (int step = 0; step < 20; ++step) {
    const Tensor x = torch::randn({16, 5}), y = torch::randn({16, 2});
    ref.zero_grad();
    (a->forward(x) - y).square().mean().backward();
    ref.step();
    flat.zeroGrad();
    (b->forward(x) - y).square().mean().backward();
    flat.step();
  }
  for (size_t i = 0; i < a->parameters().size(); ++i)
    EXPECT_TRUE(torch::allclose(a->parameters()[i], b->parameters()[i], 1e-5, 1e-6)) << i;
  // The parameters are views of the flat buffer: a step moves them.
  EXPECT_EQ(flat.flat().numel(), 5 * 7 + 7 + 7 * 2 + 2);
  EXPECT_EQ(b->parameters()[0].data_ptr<float>(), flat.flat().data_ptr<float>());
}

TEST(FlatAdam, ClipsTheGlobalNormAndReportsNonFinite) {
  Tensor w = torch::zeros({3}, torch::requires_grad()), u = torch::zeros({1}, torch::requires_grad());
  FlatAdam opt({w, u}, 0.1, 0.9, 0.999);
  (w * torch::tensor({3.0f, 0.0f, 0.0f})).sum().add((u * 4).sum()).backward();
  EXPECT_NEAR(opt.clipGradNorm(1.0), 5.0, 1e-6);  // |(3, 0, 0, 4)|
  EXPECT_NEAR(w.grad()[0].item<float>(), 0.6, 1e-5);
  EXPECT_NEAR(u.grad()[0].item<float>(), 0.8, 1e-5);
  opt.zeroGrad();
  EXPECT_EQ(w.grad().abs().sum().item<float>(), 0.0f);
  (w * std::numeric_limits<float>::quiet_NaN()).sum().backward();
  EXPECT_TRUE(std::isnan(opt.clipGradNorm(1.0)));
}

TEST(EpisodeTracker, ReturnsLengthsAndLogs) {
  EpisodeTracker t(3, 2);  // the last 2 episodes
  auto step = [&](std::vector<float> r, std::vector<int64_t> resets, double count) {
    envs::StepResult s;
    s.rewards = torch::tensor(r);
    s.extras.resetIds = torch::tensor(resets, torch::kLong);
    if (count > 0) {
      s.extras.log["Episode/count"] = count;
      s.extras.log["Episode/rew_x"] = 10 * count;
    }
    s.extras.log["Env/sim_failures"] = 1;
    t.step(s);
  };
  step({1, 2, 3}, {}, 0);
  step({1, 2, 3}, {1}, 1);  // env 1 ends: return 4, length 2
  EXPECT_DOUBLE_EQ(t.meanReturn(), 4);
  EXPECT_DOUBLE_EQ(t.meanLength(), 2);
  step({1, 1, 1}, {0, 2}, 2);  // env 0: 3 in 3 steps; env 2: 7 in 3 steps; env 1's drops out
  EXPECT_DOUBLE_EQ(t.meanReturn(), 5);
  EXPECT_DOUBLE_EQ(t.meanLength(), 3);
  const auto logs = t.takeIterationLogs();
  EXPECT_DOUBLE_EQ(logs.at("Episode/rew_x"), (10 * 1 + 20 * 2) / 3.0);  // weighted by episodes
  EXPECT_DOUBLE_EQ(logs.at("Env/sim_failures"), 3);
  EXPECT_DOUBLE_EQ(logs.at("Train/episodes"), 3);
  EXPECT_EQ(t.takeIterationLogs().count("Episode/rew_x"), 0u);
  EpisodeTracker fresh(3);
  EXPECT_TRUE(std::isnan(fresh.meanReturn()));
}

TEST(Seeds, DerivedStreamsDiffer) {
  EXPECT_NE(deriveSeed(0, 0), deriveSeed(0, 1));
  EXPECT_NE(deriveSeed(0, 1), deriveSeed(1, 0));
  EXPECT_EQ(deriveSeed(5, 7), deriveSeed(5, 7));
}
