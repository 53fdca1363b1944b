// export/mujoco_eval: an exported policy runs in MuJoCo on the robot's URDF. A policy whose
// action is zero holds the default pose through the exported PD law: ANYmal stands for the whole
// episode; a random policy gives finite per-episode results of the right sizes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "envs/locomotion_env.h"
#include "envs/terrain.h"
#include "export/export.h"
#include "export/mujoco_eval.h"
#include "io/atomic_file.h"
#include "runs/run_dir.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

namespace diffloco::mj {
namespace {

namespace fs = std::filesystem;

// Exports an actor for the ANYmal velocity task (or another config); zero weights give a zero
// action. The files stay until the test process ends, which removes them.
std::string exportActor(const std::string& name, bool zero,
                        const std::string& config = "velocity_anymal_shac.yaml") {
  static const testing::ScratchDir scratch("diffloco_test_mujoco_eval");
  const fs::path d = scratch / name;
  fs::remove_all(d);
  fs::create_directories(d);
  const train::TrainConfig cfg = train::loadTrainConfig(configDir() + "/" + config);
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

// On terrain: the policy's terrain rebuilt as an hfield, episodes spawning on the tops of the
// hardest stairs; a zero action stands there for the episode (the spawn is on the ground, not in
// it or above it), the base height and the height scan are ray casts onto the hfield.
TEST(MujocoEval, ZeroActionStandsOnTheTopOfTheStairs) {
  const std::string file = exportActor("rough_zero", true, "velocity_anymal_rough_shac.yaml");
  const train::TrainConfig cfg =
      train::loadTrainConfig(configDir() + "/velocity_anymal_rough_shac.yaml");
  const envs::Terrain t = envs::generateTerrain(cfg.task.terrain);
  const Robot robot = loadRobot("anymal");
  MujocoEvalOptions o;
  o.episodes = 2;
  o.episodeLengthS = 2.0;
  o.cone = "elliptic";
  o.noslipIterations = 10;
  o.terrain = t.field;
  for (int c : t.columnsOf("pyramid_stairs")) o.spawn.push_back({t.centreX(t.rows - 1), t.centreY(c)});
  ASSERT_FALSE(o.spawn.empty());
  double firstZ = 0;
  o.onDecision = [&](int episode, int decision, const sim::VecX& q, const sim::VecX&,
                     const std::array<double, 3>&) {
    if (episode == 0 && decision == 0) firstZ = q[2];
  };
  // A fixed command, and climbing: standing on the platform is not past the stairs.
  o.command = std::array<double, 3>{0.3, 0.0, -0.2};
  o.climbDistance = 0.5 * t.tileSize;
  const MujocoEpisodes r = evaluateInMujoco(file, robot.model, o);
  const double top = sim::groundHeight(t.field.get(), o.spawn[0][0], o.spawn[0][1]);
  EXPECT_GT(top, 1.6);  // the hardest stairs' platform: 8 steps of 21.2 cm
  EXPECT_NEAR(firstZ - top, robot.defaultBaseHeight, 0.02);
  ASSERT_EQ(r.climbed.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(r.fell[e], 0) << e;
    EXPECT_EQ(r.climbed[e], 0) << e;
    EXPECT_EQ(r.command[0][e], 0.3);
    EXPECT_EQ(r.command[2][e], -0.2);
  }
  // The base sways while it settles: past a micron of its spawn point it has "climbed".
  o.climbDistance = 1e-6;
  o.episodes = 1;
  EXPECT_EQ(evaluateInMujoco(file, robot.model, o).climbed, std::vector<int>{1});
}

// The robustness conditions, each against what it must do. Base states are recorded at every
// decision of episode 0.
struct Trace {
  std::vector<sim::VecX> q;
  MujocoEpisodes r;
};
Trace run(const std::string& file, MujocoEvalOptions o) {
  Trace t;
  o.onDecision = [&t](int episode, int, const sim::VecX& q, const sim::VecX&,
                      const std::array<double, 3>&) {
    if (episode == 0) t.q.push_back(q);
  };
  t.r = evaluateInMujoco(file, loadRobot("anymal").model, o);
  return t;
}

TEST(MujocoEval, ConditionsActAsTheirRandomisationsDo) {
  const std::string zero = exportActor("cond_zero", true), random = exportActor("cond_rnd", false);
  MujocoEvalOptions o;
  o.episodes = 2;
  o.episodeLengthS = 1.0;
  o.jointPosNoise = 0;
  const Trace stand = run(zero, o), act = run(random, o);
  // Delay: the first two decisions' targets are the default pose's, as a zero action's are; the
  // states agree bit for bit until the first delayed action arrives, and differ after it.
  MujocoEvalOptions delayed = o;
  delayed.actionDelaySteps = 2;
  const Trace late = run(random, delayed);
  ASSERT_GT(late.q.size(), 4u);
  for (int k = 0; k <= 2; ++k) EXPECT_EQ((late.q[k] - stand.q[k]).norm(), 0.0) << k;
  EXPECT_GT((late.q[3] - stand.q[3]).norm(), 1e-9);
  EXPECT_GT((act.q[1] - stand.q[1]).norm(), 1e-9);
  // Every condition meets the same episodes: the same commands.
  for (int e = 0; e < 2; ++e) EXPECT_EQ(late.r.command[0][e], act.r.command[0][e]);
  // Weaker drives and a payload let the standing robot sag lower than the nominal one.
  MujocoEvalOptions weak = o, heavy = o;
  weak.motorStrength = 0.5;
  heavy.addedBaseMass = 20;
  EXPECT_LT(run(zero, weak).q.back()[2], stand.q.back()[2] - 1e-3);
  EXPECT_LT(run(zero, heavy).q.back()[2], stand.q.back()[2] - 1e-3);
  // Observation noise changes what the policy decides, not what the first state is.
  MujocoEvalOptions noisy = o;
  noisy.observationNoise = true;
  const Trace sensed = run(random, noisy);
  EXPECT_EQ((sensed.q[0] - act.q[0]).norm(), 0.0);
  EXPECT_GT((sensed.q[1] - act.q[1]).norm(), 1e-9);
  // A push moves the standing robot; without one it stays put.
  MujocoEvalOptions pushed = o;
  pushed.pushVelocity = 1.0;
  pushed.pushIntervalS = {0.2, 0.3};
  EXPECT_GT(std::abs(run(zero, pushed).r.meanVx[0]), 10 * std::abs(stand.r.meanVx[0]));
  for (double x : stand.r.limitExcess) EXPECT_EQ(x, 0.0);  // the default pose is within limits
  MujocoEvalOptions bad = o;
  bad.addedBaseMass = -1000;
  EXPECT_THROW(run(zero, bad), std::invalid_argument);
  bad = o;
  bad.motorStrength = 0;
  EXPECT_THROW(run(zero, bad), std::invalid_argument);
}

}  // namespace
}  // namespace diffloco::mj
