// train/evaluation: every env collects a number of episodes fixed before any runs, so that the
// short (failed) episodes that end first are not over-represented; more envs than episodes run
// as many envs as episodes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "envs/task_config.h"
#include "train/evaluation.h"

using namespace diffloco;

namespace {

// The velocity task on the plane, 2 s episodes. An env whose forward command (observation 9) is
// positive gets large actions that depend on its state elementwise (no batch-size effect) and
// falls, at its own time; the others hold the default pose to the time limit.
train::EvalResult evaluate(int envs, int episodes) {
  envs::TaskConfig task = envs::loadTaskConfig("velocity");
  task.episodeLengthS = 2.0;
  train::EvalOptions o;
  o.numEnvs = envs, o.episodes = episodes, o.seed = 3, o.threads = 1;
  const auto policy = [](const torch::Tensor& obs) {
    const torch::Tensor x = obs.to(torch::kDouble);
    return 4 * (x.narrow(1, 9, 1) > 0).to(torch::kDouble) * torch::sin(40 * x.narrow(1, 0, 12));
  };
  return train::evaluatePolicy(task, policy, o);
}

}  // namespace

TEST(Evaluation, EveryEnvCollectsItsShareFixedInAdvance) {
  // 8 envs, 4 episodes each: the same episodes as 8 envs asked for 32.
  const train::EvalResult all = evaluate(8, 32);
  ASSERT_EQ(all.episodes.size(), 32u);
  int falls = 0;
  for (const auto& e : all.episodes) falls += e.fell;
  ASSERT_GT(falls, 0) << "the policy must make some robots fall for this test to mean anything";
  ASSERT_LT(falls, 32);
  // 20 episodes on 8 envs (3 on envs 0-3, 2 on envs 4-7).
  const train::EvalResult part = evaluate(8, 20);
  EXPECT_EQ(part.episodes.size(), 20u);
  // More envs than episodes: the same episodes as one env per episode.
  const train::EvalResult many = evaluate(40, 5), exact = evaluate(5, 5);
  ASSERT_EQ(many.episodes.size(), 5u);
  ASSERT_EQ(exact.episodes.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(many.episodes[k].lengthS, exact.episodes[k].lengthS) << k;
    EXPECT_EQ(many.episodes[k].fell, exact.episodes[k].fell) << k;
    EXPECT_EQ(many.episodes[k].ret, exact.episodes[k].ret) << k;
  }
}
