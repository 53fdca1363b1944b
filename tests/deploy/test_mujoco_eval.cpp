// deploy/mujoco_eval: an exported policy runs in MuJoCo on the robot's URDF. A policy whose
// action is zero holds the default pose through the exported PD law: ANYmal stands for the whole
// episode; a random policy gives finite per-episode results of the right sizes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "deploy/export.h"
#include "deploy/mujoco_eval.h"
#include "envs/locomotion_env.h"
#include "train/config.h"
#include "train/run_dir.h"

namespace diffloco::mj {
namespace {

namespace fs = std::filesystem;

// Exports an actor for the ANYmal velocity task; zero weights give a zero action.
std::string exportActor(const std::string& name, bool zero) {
  const fs::path d = fs::temp_directory_path() / "diffloco_test_mujoco_eval" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  const train::TrainConfig cfg = train::loadTrainConfig(configDir() + "/velocity_anymal_shac.yaml");
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv env(cfg.task, eo);
  torch::manual_seed(5);
  policies::Actor actor(env.numObs(), env.numActions(), cfg.policy);
  if (zero) {
    torch::NoGradGuard g;
    for (auto& p : actor->parameters()) p.zero_();
  }
  train::writeFileAtomic((d / "config.yaml").string(), train::toYaml(cfg));
  policies::savePolicy((d / "policy.pt").string(), actor);
  const std::string out = (d / "exported.pt").string();
  deploy::exportPolicy(d.string(), out);
  return out;
}

TEST(MujocoEval, ZeroActionStandsAndRandomPolicyGivesFiniteResults) {
  const Robot robot = loadRobot("anymal");
  MujocoEvalOptions o;
  o.episodes = 2;
  o.episodeLengthS = 2.0;
  const MujocoEpisodes stand = evaluateInMujoco(exportActor("zero", true), robot.model, o);
  ASSERT_EQ(stand.lengthS.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(stand.fell[e], 0) << e;
    EXPECT_NEAR(stand.lengthS[e], 2.0, 1e-9);
    EXPECT_LT(std::abs(stand.meanVx[e]), 0.05) << e;
  }
  EXPECT_DOUBLE_EQ(stand.timestep, 0.005);
  EXPECT_DOUBLE_EQ(stand.controlDt, 0.02);

  o.timestep = 0.001;  // another step than trained with
  o.jointPosNoise = 0.05;
  const MujocoEpisodes rnd = evaluateInMujoco(exportActor("random", false), robot.model, o);
  ASSERT_EQ(rnd.fell.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_GT(rnd.lengthS[e], 0);
    EXPECT_TRUE(std::isfinite(rnd.meanVx[e]) && std::isfinite(rnd.linVelErr2[e]));
    EXPECT_GE(rnd.command[0][e], -1.0);
    EXPECT_LE(rnd.command[0][e], 1.0);
  }
  o.timestep = 0.003;  // does not divide 0.02
  EXPECT_THROW(evaluateInMujoco(exportActor("zero2", true), robot.model, o), std::runtime_error);
}

}  // namespace
}  // namespace diffloco::mj
