// `diffloco toy grad-norm` (experiments/grad_norm.h): a tiny sweep runs and gives finite, positive
// numbers; the per-env norm of one window equals a direct autograd computation (gradients on the
// actions as retained non-leaf tensors) and, per component, central finite differences of the
// closed-loop return.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "envs/locomotion_env.h"
#include "experiments/grad_norm.h"
#include "policies/actor_critic.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;
using torch::Tensor;

namespace {

envs::EnvOptions envOptions(int n) {
  envs::EnvOptions o;
  o.numEnvs = n;
  o.threads = 2;
  o.dtype = torch::kDouble;
  o.differentiable = true;
  o.seed = 5;
  o.printSummary = false;
  return o;
}

// Return of one closed-loop window with an extra action perturbation `delta` [H, N, nj] (no
// autograd).
double windowReturn(envs::LocomotionEnv& env, policies::Actor& actor, const Tensor& delta) {
  torch::NoGradGuard noGrad;
  Tensor obs = env.observations();
  double total = 0;
  for (int64_t t = 0; t < delta.size(0); ++t) {
    const envs::StepResult r = env.step(actor->forward(obs) + delta[t]);
    EXPECT_EQ(r.extras.resetIds.numel(), 0);
    total += r.rewards.sum().item<double>();
    obs = r.obs;
  }
  return total;
}

}  // namespace

TEST(GradNorm, TinySweepIsFinite) {
  experiments::GradNormOptions o;
  o.horizons = {1, 3};
  o.envs = 2;
  o.windows = 2;
  const experiments::GradNormResult r = experiments::runGradNorm(o);
  ASSERT_EQ(r.stats.size(), 2u);
  for (const auto& row : r.stats) {
    ASSERT_EQ(row.size(), 2u);
    for (const auto& s : row) {
      EXPECT_TRUE(std::isfinite(s.mean) && std::isfinite(s.median) && std::isfinite(s.max));
      EXPECT_GT(s.mean, 0);
      EXPECT_LE(s.median, s.max);
      EXPECT_EQ(s.samples, 4);
    }
  }
  const diffloco::testing::ScratchDir scratch("diffloco_test_grad_norm");
  const auto dir = scratch / "out";
  const std::string csv = experiments::writeGradNormCsv(r, dir.string());
  std::ifstream f(csv);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header,
            "horizon,quadruped_mean,quadruped_median,quadruped_max,quadruped_resets,quadruped_mean_"
            "over_h,anymal_mean,anymal_median,anymal_max,anymal_resets,anymal_mean_over_h");
  int rows = 0;
  for (std::string line; std::getline(f, line);) ++rows;
  EXPECT_EQ(rows, 2);
}

// The toy's norm of one window against (a) autograd with the actions retained as non-leaf tensors
// of the graph, (b) central differences of the return in a few action components (randomisation
// frozen and the env state restored between evaluations, so the return is a function of delta).
TEST(GradNorm, MatchesDirectAutogradAndFiniteDifferences) {
  envs::TaskConfig task = envs::loadTaskConfig("walk");
  task.freezeRandomization();
  envs::LocomotionEnv env(task, envOptions(2));
  policies::Actor actor = experiments::makeGradNormActor(env.numObs(), env.numActions(), 3);
  env.reset();
  for (int t = 0; t < 5; ++t) {  // off the reset state
    torch::NoGradGuard noGrad;
    env.step(actor->forward(env.observations()));
  }
  env.detach();
  const auto start = env.stateDict();
  const int H = 3;

  const std::vector<double> toy = experiments::windowGradNorms(env, actor, H);
  ASSERT_EQ(toy.size(), 2u);

  // (a) direct: retain_grad on the actions the env receives.
  env.loadStateDict(start);
  env.detach();
  Tensor obs = env.observations();
  std::vector<Tensor> actions;
  Tensor total = torch::zeros({}, torch::kDouble);
  for (int t = 0; t < H; ++t) {
    Tensor a = actor->forward(obs);
    a.retain_grad();
    actions.push_back(a);
    const envs::StepResult r = env.step(a);
    ASSERT_EQ(r.extras.resetIds.numel(), 0);
    total = total + r.rewards.sum();
    obs = r.obs;
  }
  total.backward();
  Tensor g = torch::stack({actions[0].grad(), actions[1].grad(), actions[2].grad()});  // [H,N,nj]
  const Tensor direct = g.square().sum(std::vector<int64_t>{0, 2}).sqrt();
  for (int e = 0; e < 2; ++e) {
    EXPECT_NEAR(toy[e], direct[e].item<double>(), 1e-12 * std::max(1.0, toy[e])) << "env " << e;
    EXPECT_GT(toy[e], 0);
  }

  // (b) central differences of the closed-loop return in a few components.
  const double h = 1e-6;
  const int nj = env.numActions();
  for (const auto& [t, e, j] :
       std::vector<std::tuple<int, int, int>>{{0, 0, 0}, {1, 1, 4}, {2, 0, 11}}) {
    Tensor d = torch::zeros({H, 2, nj}, torch::kDouble);
    d[t][e][j] = h;
    env.loadStateDict(start);
    const double rp = windowReturn(env, actor, d);
    env.loadStateDict(start);
    const double rm = windowReturn(env, actor, -d);
    const double fd = (rp - rm) / (2 * h);
    const double ad = g[t][e][j].item<double>();
    EXPECT_NEAR(ad, fd, 1e-5 * std::max(1.0, std::abs(fd)))
        << "t " << t << " e " << e << " j " << j;
  }
}
