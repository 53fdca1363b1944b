// train/evaluation: every env collects a number of episodes fixed before any runs, so that the
// short (failed) episodes that end first are not over-represented; more envs than episodes run
// as many envs as episodes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "envs/task_config.h"
#include "envs/terrain.h"
#include "robots/robot.h"
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

// On one sub-terrain type's tiles an episode has climbed when its base got half a tile from its
// tile's centre along x or y; a fixed command holds in every env from the first step. Standing
// robots spawned up to 1.2 m from the centres of 2 m tiles: those spawned (or swaying) past
// 1 m have climbed, recomputed here from the states the evaluation steps through.
TEST(Evaluation, ClimbedAndAFixedCommand) {
  envs::TaskConfig task = envs::loadTaskConfig("velocity_rough");
  task.episodeLengthS = 0.5;
  task.terrain.tileSize = 2.0, task.terrain.platform = 0.5;
  task.reset.basePosNoise = 1.2;
  for (const auto& t : task.terrain.types)  // one column: every env on the same tile
    if (t.name == "pyramid_stairs") task.terrain.types = {t};
  task.terrain.columns = 1;
  const envs::Terrain terrain = envs::generateTerrain(task.terrain);
  const int level = 4, column = 0;
  train::EvalOptions o;
  o.numEnvs = 8, o.episodes = 24, o.seed = 5, o.threads = 1;
  o.terrainType = "pyramid_stairs", o.terrainLevel = level;
  o.command = std::array<double, 3>{0.4, -0.1, 0.2};
  std::vector<double> reach(8, 0.0);
  std::vector<int> face(8, -1);  // first past 1 m: through a face (1), near a corner (0)
  std::vector<std::vector<int>> climbedBy(8), faceBy(8);  // per env, its episodes in order
  o.onStep = [&](const torch::Tensor& q, const torch::Tensor&, const torch::Tensor& cmd,
                 const torch::Tensor& restarted) {
    for (int64_t k = 0; k < restarted.numel(); ++k) {
      const int64_t i = restarted[k].item<int64_t>();
      climbedBy[i].push_back(reach[i] >= 1.0);
      faceBy[i].push_back(face[i] == 1);
      reach[i] = 0, face[i] = -1;
    }
    for (int i = 0; i < 8; ++i) {
      const double dx = q[i][0].item<double>() - terrain.centreX(level);
      const double dy = q[i][1].item<double>() - terrain.centreY(column);
      reach[i] = std::max({reach[i], std::abs(dx), std::abs(dy)});
      const double bearing = std::atan2(std::abs(dy), std::abs(dx)) * 180 / M_PI;
      if (face[i] < 0 && reach[i] >= 1.0) face[i] = bearing <= 22.5 || bearing >= 67.5;
      EXPECT_DOUBLE_EQ(cmd[i][0].item<double>(), 0.4);
      EXPECT_DOUBLE_EQ(cmd[i][1].item<double>(), -0.1);
      EXPECT_DOUBLE_EQ(cmd[i][2].item<double>(), 0.2);
    }
  };
  const auto stand = [](const torch::Tensor& obs) { return torch::zeros({obs.size(0), 12}); };
  const train::EvalResult r = train::evaluatePolicy(task, stand, o);
  ASSERT_EQ(r.episodes.size(), 24u);
  EXPECT_EQ(r.climbDistance, 1.0);
  // Each env's first 3 episodes count (its share); an episode that ended at the evaluation's
  // last step was never reported restarted, its reach is the running one.
  int expected = 0, expectedFace = 0;
  for (int i = 0; i < 8; ++i) {
    if (climbedBy[i].size() < 3) {
      climbedBy[i].push_back(reach[i] >= 1.0);
      faceBy[i].push_back(face[i] == 1);
    }
    ASSERT_GE(climbedBy[i].size(), 3u) << i;
    for (int k = 0; k < 3; ++k) expected += climbedBy[i][k], expectedFace += faceBy[i][k];
  }
  EXPECT_EQ(r.climbed(), expected);
  EXPECT_EQ(r.summary().at("climbed"), expected);
  EXPECT_EQ(r.climbedFace(), expectedFace);
  EXPECT_EQ(r.summary().at("climbed_face"), expectedFace);
  EXPECT_GT(expectedFace, 0);  // spawned in a square: about half the climbers beside a face
  EXPECT_LT(expectedFace, expected);
  EXPECT_GT(expected, 0);  // P(max(|dx|, |dy|) >= 1) = 1 - (5/6)^2 = 0.31 per episode
  EXPECT_LT(expected, 24);
  // Without a terrain tile there is nothing to climb: no count.
  o.terrainType.clear();
  o.onStep = nullptr;
  o.episodes = 8;
  EXPECT_EQ(train::evaluatePolicy(task, stand, o).summary().count("climbed"), 0u);
}

// Each episode reports the largest angle by which a joint left its URDF range in the states the
// policy acted in, recomputed here from the states the evaluation steps through: the flailing
// envs leave ANYmal's HAA range, the ones holding the default pose stay inside it.
TEST(Evaluation, JointLimitExcess) {
  envs::TaskConfig task = envs::loadTaskConfig("velocity");
  task.episodeLengthS = 2.0;
  const Robot robot = loadRobot(task.robot);
  const auto& joints = robot.model.joints;
  train::EvalOptions o;
  o.numEnvs = 8, o.episodes = 8, o.seed = 3, o.threads = 1;
  std::vector<double> running(8, 0.0), first(8, -1.0);
  o.onStep = [&](const torch::Tensor& q, const torch::Tensor&, const torch::Tensor&,
                 const torch::Tensor& restarted) {
    for (int64_t k = 0; k < restarted.numel(); ++k) {
      const int64_t i = restarted[k].item<int64_t>();
      if (first[i] < 0) first[i] = running[i];
      running[i] = 0;
    }
    for (int i = 0; i < 8; ++i)
      for (size_t j = 0; j < joints.size(); ++j) {
        const double x = q[i][7 + static_cast<int64_t>(j)].item<double>();
        running[i] = std::max({running[i], joints[j].lower - x, x - joints[j].upper});
      }
  };
  const auto policy = [](const torch::Tensor& obs) {
    const torch::Tensor x = obs.to(torch::kDouble);
    return 4 * (x.narrow(1, 9, 1) > 0).to(torch::kDouble) * torch::sin(40 * x.narrow(1, 0, 12));
  };
  const train::EvalResult r = train::evaluatePolicy(task, policy, o);
  ASSERT_EQ(r.episodes.size(), 8u);
  // Episodes are listed in the order they ended: compare the sorted values.
  std::vector<double> expected, reported;
  for (int i = 0; i < 8; ++i) {
    expected.push_back(first[i] >= 0 ? first[i] : running[i]);
    reported.push_back(r.episodes[i].limitExcess);
  }
  std::sort(expected.begin(), expected.end());
  std::sort(reported.begin(), reported.end());
  int beyond = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(reported[i], expected[i]) << i;
    beyond += expected[i] > 0;
  }
  EXPECT_GT(beyond, 0);
  EXPECT_LT(beyond, 8);
  EXPECT_EQ(r.summary().at("episodes_beyond_joint_limits"), beyond);
}
