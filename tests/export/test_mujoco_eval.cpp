// export/mujoco_eval: an exported policy runs in MuJoCo on the robot's URDF. A policy whose
// action is zero holds the default pose through the exported PD law: ANYmal stands for the whole
// episode; a random policy gives finite per-episode results of the right sizes.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>  // getpid: one temp folder per test process (ctest -j)

#include <cstdlib>
#include <filesystem>

#include "envs/locomotion_env.h"
#include "export/export.h"
#include "export/mujoco_eval.h"
#include "io/atomic_file.h"
#include "runs/run_dir.h"
#include "train/config.h"

namespace diffloco::mj {
namespace {

namespace fs = std::filesystem;

// Exports an actor for the ANYmal velocity task; zero weights give a zero action.
std::string exportActor(const std::string& name, bool zero) {
  const fs::path d = fs::temp_directory_path() /
                     ("diffloco_test_mujoco_eval_" + std::to_string(::getpid())) / name;
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
  io::writeFileAtomic((d / "config.yaml").string(), train::toYaml(cfg));
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

namespace diffloco::mj {
namespace {

// A measurement rather than a check: DIFFLOCO_MUJOCO_EVAL=<exported policy.pt> [with
// DIFFLOCO_MUJOCO_EVAL_ROBOT, _EPISODES, _LENGTH, _DT] evaluates that file and prints the table.
TEST(MujocoEval, ExportedFileFromEnvironment) {
  const char* path = std::getenv("DIFFLOCO_MUJOCO_EVAL");
  if (!path) GTEST_SKIP() << "set DIFFLOCO_MUJOCO_EVAL=<exported policy.pt> to run";
  auto env = [](const char* k, const char* d) {
    const char* v = std::getenv(k);
    return std::string(v ? v : d);
  };
  const Robot robot = loadRobot(env("DIFFLOCO_MUJOCO_EVAL_ROBOT", "quadruped"));
  MujocoEvalOptions o;
  o.episodes = std::stoi(env("DIFFLOCO_MUJOCO_EVAL_EPISODES", "10"));
  o.episodeLengthS = std::stod(env("DIFFLOCO_MUJOCO_EVAL_LENGTH", "0"));  // 0: the task's
  o.timestep = std::stod(env("DIFFLOCO_MUJOCO_EVAL_DT", "0"));
  o.jointPosNoise = 0.05;
  const MujocoEpisodes r = evaluateInMujoco(path, robot.model, o);
  double len = 0, vx = 0, lin = 0;
  int falls = 0;
  for (size_t e = 0; e < r.lengthS.size(); ++e) {
    std::printf("episode %zu: length %.2f s, fell %d, mean vx %.3f m/s, speed %.3f m/s\n", e,
                r.lengthS[e], r.fell[e], r.meanVx[e], r.meanSpeed[e]);
    len += r.lengthS[e], vx += r.meanVx[e], lin += r.linVelErr2[e], falls += r.fell[e];
  }
  const double n = static_cast<double>(r.lengthS.size());
  std::printf(
      "MuJoCo (dt %.4f s): %d episodes, mean length %.2f s of %.1f, falls %d, mean vx "
      "%.3f m/s, lin vel err^2 %.3f\n",
      r.timestep, o.episodes, len / n, r.episodeLengthS, falls, vx / n, lin / n);
}

}  // namespace
}  // namespace diffloco::mj
