// Strict parsing of task files: the shipped tasks load; mistakes are errors that name the file,
// the line and the key.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "envs/task_config.h"
#include "robots/robot.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco::envs;

namespace {

// Parses `text`; returns the error message ("" if it parsed).
std::string parseError(const std::string& text) {
  try {
    parseTaskConfig(YAML::Load(text), "test.yaml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

const char* kMinimal = R"(robot: quadruped
observations: {base_height: {}}
rewards: {forward_velocity: {weight: 1.0}}
)";

}  // namespace

TEST(TaskConfig, ShippedTasksFollowThePaper) {
  const TaskConfig walk = loadTaskConfig("walk");
  EXPECT_EQ(walk.robot, "quadruped");
  EXPECT_EQ(walk.decimation(), 1);
  EXPECT_EQ(walk.maxEpisodeSteps(), 1000);
  EXPECT_EQ(walk.sim.actuator.kp, 20);
  EXPECT_EQ(walk.sim.actuator.kd, 1);
  EXPECT_EQ(walk.sim.actuator.effort, 20);
  EXPECT_EQ(walk.sim.contact.kappa, 300);
  EXPECT_EQ(walk.sim.contact.mu, 0.8);
  EXPECT_EQ(walk.rewards.size(), 5u);
  EXPECT_EQ(walk.rewards[0].name, "forward_velocity");
  EXPECT_EQ(walk.rewards[0].params("target"), 1.0);
  EXPECT_EQ(walk.terminations.at(0).params("height"), 0.25);
  EXPECT_FALSE(walk.commands.enabled);

  const TaskConfig vel = loadTaskConfig("velocity");
  EXPECT_EQ(vel.robot, "anymal");
  EXPECT_EQ(vel.decimation(), 4);
  EXPECT_EQ(vel.maxEpisodeSteps(), 1000);
  EXPECT_EQ(vel.sim.actuator.kp, 85);
  EXPECT_EQ(vel.armature, 0.1);
  // Table 7's eleven terms, and the penalty on the shanks that ANYmal's leg_contacts need.
  EXPECT_EQ(vel.rewards.size(), 12u);
  EXPECT_EQ(vel.rewards.back().name, "leg_contact");
  EXPECT_TRUE(vel.randomization.friction);
  EXPECT_EQ(vel.randomization.frictionRange.lo, 0.5);
  EXPECT_EQ(vel.randomization.frictionRange.hi, 1.25);
  EXPECT_EQ(vel.randomization.addedMassRange.lo, -5);
  EXPECT_EQ(vel.randomization.pushVelocity, 0.5);
  EXPECT_TRUE(vel.commands.enabled);
}

namespace {

const TermConfig& term(const std::vector<TermConfig>& terms, const std::string& name) {
  for (const auto& t : terms)
    if (t.name == name) return t;
  throw std::runtime_error("no term " + name);
}

// A task file as a node (to edit before the robot's defaults are filled in).
YAML::Node taskFile(const std::string& name) {
  return YAML::LoadFile(diffloco::configDir() + "/tasks/" + name + ".yaml");
}

}  // namespace

// The robot's task_defaults fill what the task leaves out: the velocity task on the go_like robot
// takes go_like's drive, action scale, base-height targets and added mass; the task's own keys
// (and so a --set of them) win; a term the task does not use is not added.
TEST(TaskConfig, RobotDefaultsFillWhatTheTaskLeavesOut) {
  YAML::Node node = taskFile("velocity");
  node["robot"] = "go_like";
  inlineRobotDefaults(node, "velocity.yaml");
  const TaskConfig go = parseTaskConfig(node, "velocity.yaml");
  EXPECT_EQ(go.sim.actuator.kp, 60);
  EXPECT_EQ(go.sim.actuator.kd, 1.5);
  EXPECT_EQ(go.sim.actuator.effort, 23.7);
  EXPECT_EQ(go.armature, 0.01);
  EXPECT_EQ(go.actionScale, 0.25);
  EXPECT_EQ(go.actionClip, 100);  // the task's
  EXPECT_EQ(go.sim.dt, 0.005);    // the task's
  EXPECT_EQ(term(go.rewards, "base_height_gauss").params("target"), 0.25);
  EXPECT_EQ(term(go.rewards, "base_height_gauss").params("sigma"), 0.1);  // the task's
  EXPECT_EQ(term(go.terminations, "base_height_below").params("height"), 0.15);
  EXPECT_TRUE(go.randomization.addedMass);
  EXPECT_EQ(go.randomization.addedMassRange.lo, -1);
  EXPECT_EQ(go.randomization.addedMassRange.hi, 1);
  EXPECT_THROW(term(go.rewards, "base_height_abs"), std::runtime_error);  // not added

  YAML::Node own = taskFile("velocity");
  own["actuator"]["kp"] = 50.0;
  own["action"]["scale"] = 0.3;
  own["rewards"]["base_height_gauss"]["target"] = 0.5;
  inlineRobotDefaults(own, "velocity.yaml");
  const TaskConfig mixed = parseTaskConfig(own, "velocity.yaml");
  EXPECT_EQ(mixed.sim.actuator.kp, 50);
  EXPECT_EQ(mixed.sim.actuator.kd, 0.6);  // anymal's
  EXPECT_EQ(mixed.actionScale, 0.3);
  EXPECT_EQ(term(mixed.rewards, "base_height_gauss").params("target"), 0.5);

  // A resolved task (a run's config.yaml) holds every value: a second fill changes nothing.
  YAML::Node twice = YAML::Load(YAML::Dump(node));
  inlineRobotDefaults(twice, "config.yaml");
  EXPECT_EQ(YAML::Dump(twice), YAML::Dump(node));
}

TEST(TaskConfig, BadRobotDefaultsNameTheRobotFileAndLine) {
  const diffloco::testing::ScratchDir dir("diffloco_defaults");
  const std::string robot = (dir / "robot.yaml").string();
  auto errorWith = [&](const std::string& defaults) {
    std::ofstream(robot) << "urdf: x.urdf\ntask_defaults:\n" << defaults;
    YAML::Node task = YAML::Load(std::string(kMinimal));
    task["robot"] = robot;
    try {
      inlineRobotDefaults(task, "test.yaml");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = errorWith("  action: {scal: 0.3}\n");
  EXPECT_NE(e.find(robot + ":3: unknown key 'action.scal' (did you mean 'scale'?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("task_defaults"), std::string::npos) << e;
  e = errorWith("  rewards: {base_height_gaus: {target: 1}}\n");
  EXPECT_NE(e.find(robot + ":3: rewards.base_height_gaus: unknown reward term 'base_height_gaus'"),
            std::string::npos)
      << e;
  e = errorWith("  robot: anymal\n");
  EXPECT_NE(e.find(robot + ":3: 'robot' cannot be a robot's task default"), std::string::npos) << e;
  e = errorWith("  sim: {iterations: 0}\n");
  EXPECT_NE(e.find(robot + ":3: sim.iterations: 0 is out of range: must be in [1, 10000]"),
            std::string::npos)
      << e;
}

TEST(TaskConfig, MinimalTaskTakesDefaults) {
  EXPECT_EQ(parseError(kMinimal), "");
  const TaskConfig t = parseTaskConfig(YAML::Load(kMinimal), "test.yaml");
  EXPECT_EQ(t.rewards[0].params("target"), 1.0);  // the term's default
  EXPECT_EQ(t.sim.contact.model, diffloco::sim::ContactModel::Smoothed);
}

// The task writes itself (every key, documented) and reads back to the same task: what a run's
// config.yaml, its checkpoints and exported policies carry.
TEST(TaskConfig, WrittenTaskReadsBackToTheSameTask) {
  for (const char* name : {"velocity", "walk"})
    for (const char* robot : {"anymal", "quadruped", "go_like"}) {
      YAML::Node y = YAML::LoadFile(diffloco::configDir() + "/tasks/" + name + ".yaml");
      y["robot"] = robot;
      inlineRobotDefaults(y, name);
      TaskConfig t = parseTaskConfig(y, name);
      t.randomization.pushes = !t.randomization.pushes;  // both states of an optional key
      if (t.randomization.pushes) t.randomization.pushIntervalS = {2.5, 4.25};
      t.sim.contact.cutoff = 0.07;
      const std::string text = toYaml(t);
      const TaskConfig back = parseTaskConfig(YAML::Load(text), "written.yaml");
      EXPECT_EQ(flatten(back), flatten(t)) << name << " " << robot << "\n" << text;
      EXPECT_EQ(toYaml(back), text);
      EXPECT_EQ(back.name, t.name);
      EXPECT_EQ(back.rewards.size(), t.rewards.size());
      EXPECT_EQ(back.commands.enabled, t.commands.enabled);
      EXPECT_EQ(back.randomization.pushes, t.randomization.pushes);
      if (t.randomization.pushes) {  // an absent key: off, its range not written
        EXPECT_EQ(back.randomization.pushIntervalS.hi, t.randomization.pushIntervalS.hi);
      }
      EXPECT_EQ(back.sim.contact.cutoff, 0.07);
    }
  // Flattening tells tasks apart where they differ.
  const TaskConfig a = parseTaskConfig(YAML::Load(kMinimal), "a.yaml");
  TaskConfig b = a;
  b.rewards[0].params = TermParams({{"target", {2.0}}});
  EXPECT_NE(flatten(a), flatten(b));
}

TEST(TaskConfig, UnknownKeysNameFileLineAndKey) {
  const std::string e = parseError(std::string(kMinimal) + "sim: {dt: 0.01, kapa: 300}\n");
  EXPECT_NE(e.find("test.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'sim.kapa'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'kappa'"), std::string::npos) << e;
  EXPECT_NE(parseError(std::string(kMinimal) + "episode_lenght_s: 3\n").find("episode_length_s"),
            std::string::npos);
}

// A key that is not a name (a map or a list as a key) is an error naming file and line, in a task
// and in a fitted actuator file, as is a key given twice there (found by fuzz_train_config,
// Config.KeysThatAreNotNamesNameTheLine).
TEST(TaskConfig, KeysThatAreNotNamesNameFileAndLine) {
  const std::string e = parseError(std::string(kMinimal) + "? {a: 1}\n: 2\n");
  EXPECT_NE(e.find("test.yaml:4: expected a name as key"), std::string::npos) << e;
  const diffloco::testing::ScratchDir dir("diffloco_fitted");
  const std::string fitted = (dir / "fitted.yaml").string();
  const auto fittedError = [&](const std::string& text) {
    std::ofstream(fitted) << text;
    YAML::Node task = YAML::Load("actuator: {file: " + fitted + "}\n");
    try {
      inlineActuatorFile(task, "test.yaml");
    } catch (const std::runtime_error& x) {
      return std::string(x.what());
    }
    return std::string();
  };
  std::string error = fittedError("kp: 30\n? [1, 2]\n: 3\n");
  EXPECT_NE(error.find(fitted + ":2: expected a name as key"), std::string::npos) << error;
  error = fittedError("kp: 30\nkd: 1\nkp: 31\n");  // yaml-cpp would keep one of them silently
  EXPECT_NE(error.find(fitted + ":3: 'kp' given twice"), std::string::npos) << error;
}

TEST(TaskConfig, TermMistakesAreErrors) {
  const std::string unknownTerm = parseError(
      "robot: quadruped\nobservations: {base_hieght: {}}\n"
      "rewards: {forward_velocity: {}}\n");
  EXPECT_NE(unknownTerm.find("unknown observation term 'base_hieght'"), std::string::npos)
      << unknownTerm;
  EXPECT_NE(unknownTerm.find("did you mean 'base_height'"), std::string::npos) << unknownTerm;
  const std::string badParam = parseError(
      "robot: quadruped\nobservations: {base_height: {}}\n"
      "rewards: {forward_velocity: {wieght: 2}}\n");
  EXPECT_NE(badParam.find("rewards.forward_velocity.wieght"), std::string::npos) << badParam;
  const std::string badSize = parseError(
      "robot: quadruped\nobservations: {base_height: {}}\n"
      "rewards: {foot_height_tracking: {phase_offsets: [0, 1]}}\n");
  EXPECT_NE(badSize.find("phase_offsets: expected 4 entries, got 2"), std::string::npos) << badSize;
  const std::string weightOnObs = parseError(
      "robot: quadruped\nobservations: {base_height: {weight: 2}}\n"
      "rewards: {forward_velocity: {}}\n");
  EXPECT_NE(weightOnObs.find("observations.base_height.weight"), std::string::npos) << weightOnObs;
}

TEST(TaskConfig, BadValuesAreErrors) {
  EXPECT_NE(parseError(std::string(kMinimal) + "env_dt: 0.015\nsim: {dt: 0.01}\n")
                .find("multiple of sim.dt"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kMinimal) + "sim: {contact: squishy}\n").find("squishy"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kMinimal) + "randomization: {friction: [1.2, 0.5]}\n")
                .find("low > high"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kMinimal) + "sim: {dt: fast}\n").find("sim.dt"),
            std::string::npos);
  EXPECT_NE(parseError("observations: {base_height: {}}\n").find("robot: missing"),
            std::string::npos);
  EXPECT_THROW(loadTaskConfig("no_such_task"), std::runtime_error);
}

TEST(TaskConfig, FreezeRandomizationTurnsEverythingOff) {
  TaskConfig t = loadTaskConfig("velocity_rough");
  t.freezeRandomization();
  EXPECT_FALSE(t.randomization.friction);
  EXPECT_FALSE(t.randomization.motorStrength);
  EXPECT_FALSE(t.randomization.actionDelay);
  EXPECT_FALSE(t.commands.headingEnabled);
  EXPECT_FALSE(t.randomization.addedMass);
  EXPECT_FALSE(t.randomization.pushes);
  EXPECT_FALSE(t.randomization.observationNoise);
  EXPECT_EQ(t.commands.resampleS, 0);
}

// sim.integrator: the environments' simulator has the soft model's fixed sub-steps only, so
// adaptive is an error naming the file, the line and the key, whatever the contact model; rtol /
// atol / max_substeps are still read and checked.
TEST(TaskConfig, IntegratorKeys) {
  EXPECT_EQ(loadTaskConfig("walk").sim.contact.integrator, diffloco::sim::Integrator::Fixed);
  const std::string soft = std::string(kMinimal) + "sim:\n  contact: soft\n";
  std::string e = parseError(soft + "  integrator: adaptive\n");
  EXPECT_NE(e.find("test.yaml:6: sim.integrator: adaptive is not in the environments' simulator"),
            std::string::npos)
      << e;
  e = parseError(std::string(kMinimal) + "sim: {contact: hard, integrator: adaptive}\n");
  EXPECT_NE(e.find("sim.integrator: adaptive is not in"), std::string::npos) << e;
  e = parseError(soft + "  integrator: rk4\n");
  EXPECT_NE(e.find("test.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("sim.integrator"), std::string::npos) << e;
  EXPECT_NE(e.find("rk4"), std::string::npos) << e;
  e = parseError(soft + "  rtol: 0\n");
  EXPECT_NE(e.find("test.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("sim.rtol: 0 is out of range: must be in (0, 1)"), std::string::npos) << e;
  EXPECT_NE(parseError(soft + "  rtol: 2\n").find("sim.rtol: 2 is out of range: must be in (0, 1)"),
            std::string::npos);
  EXPECT_NE(parseError(soft + "  atol: -1\n").find("sim.atol: -1 is out of range: must be > 0"),
            std::string::npos);
  e = parseError(soft + "  max_substeps: 0\n");
  EXPECT_NE(e.find("test.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("sim.max_substeps: 0 is out of range: must be in [1, 1000000]"),
            std::string::npos)
      << e;
  EXPECT_NE(parseError(soft + "  max_substeps: many\n").find("sim.max_substeps"),
            std::string::npos);
  EXPECT_NE(parseError(soft + "  rtoll: 1e-4\n").find("did you mean"), std::string::npos);
}

// sim.terrain_contact: where a sphere touches a terrain (sim::TerrainContact), vertical unless set
// (the rough task sets closest, the contact MuJoCo agrees with); a bad value names the key.
TEST(TaskConfig, TerrainContactKey) {
  EXPECT_EQ(loadTaskConfig("velocity_rough").sim.contact.terrainContact,
            diffloco::sim::TerrainContact::Closest);
  EXPECT_EQ(parseTaskConfig(YAML::Load(kMinimal), "test.yaml").sim.contact.terrainContact,
            diffloco::sim::TerrainContact::Vertical);
  const TaskConfig t = parseTaskConfig(
      YAML::Load(std::string(kMinimal) + "sim: {terrain_contact: closest}\n"), "test.yaml");
  EXPECT_EQ(t.sim.contact.terrainContact, diffloco::sim::TerrainContact::Closest);
  const TaskConfig back = parseTaskConfig(YAML::Load(toYaml(t)), "back.yaml");
  EXPECT_EQ(back.sim.contact.terrainContact, diffloco::sim::TerrainContact::Closest);
  const std::string e = parseError(std::string(kMinimal) + "sim: {terrain_contact: nearest}\n");
  EXPECT_NE(e.find("sim.terrain_contact"), std::string::npos) << e;
  EXPECT_NE(e.find("nearest"), std::string::npos) << e;
}

// legged_gym's heading command: the rough task draws a heading; the key reads back and a gain
// that is not positive is refused naming the key.
TEST(TaskConfig, HeadingCommandKey) {
  const TaskConfig rough = loadTaskConfig("velocity_rough");
  EXPECT_TRUE(rough.commands.headingEnabled);
  EXPECT_EQ(rough.commands.headingGain, 0.5);
  EXPECT_FALSE(loadTaskConfig("velocity").commands.headingEnabled);
  const std::string cmd = "commands: {lin_vel_x: [-1, 1], lin_vel_y: [0, 0], ang_vel_z: [-1, 1], ";
  const TaskConfig t = parseTaskConfig(
      YAML::Load(std::string(kMinimal) + cmd + "heading: {range: [-1, 2], gain: 0.25}}\n"),
      "test.yaml");
  ASSERT_TRUE(t.commands.headingEnabled);
  EXPECT_EQ(t.commands.heading.lo, -1.0);
  EXPECT_EQ(t.commands.heading.hi, 2.0);
  const TaskConfig back = parseTaskConfig(YAML::Load(toYaml(t)), "back.yaml");
  EXPECT_TRUE(back.commands.headingEnabled);
  EXPECT_EQ(back.commands.headingGain, 0.25);
  const std::string e =
      parseError(std::string(kMinimal) + cmd + "heading: {range: [-1, 1], gain: 0}}\n");
  EXPECT_NE(e.find("commands.heading.gain"), std::string::npos) << e;
}

// Sizes that drive loops are bounded: an absurd value is refused naming the key and the range
// (before, a 1e-9 s step or 1e9 solver sweeps hung the first step).
// Bad terrain keys name the file, the line and the key: a negative rise, a tread narrower than
// two grid cells, a layout whose grid would not fit in memory.
TEST(TaskConfig, BadTerrainKeysNameFileLineAndKey) {
  const std::string head = std::string(kMinimal) +
                           "terrain:\n  spacing: 0.05\n  tile_size: 8.0\n  rows: 10\n"
                           "  columns: 20\n  types:\n";
  std::string e = parseError(head + "    pyramid_stairs: {proportion: 1, rise: [-0.05, 0.2]}\n");
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("rise"), std::string::npos) << e;
  e = parseError(head + "    pyramid_stairs: {proportion: 1, rise: [0.05, 0.2], run: 0.08}\n");
  EXPECT_NE(e.find("test.yaml:10: terrain.types.pyramid_stairs.run: a tread of 0.080000 m is "
                   "narrower than two grid cells"),
            std::string::npos)
      << e;
  e = parseError(std::string(kMinimal) +
                 "terrain:\n  spacing: 0.001\n  tile_size: 8.0\n  rows: 10\n  columns: 20\n"
                 "  types:\n    flat: {proportion: 1}\n");
  EXPECT_NE(e.find("terrain.spacing: the grid would have"), std::string::npos) << e;
  EXPECT_NE(e.find("fewer tiles or a coarser grid"), std::string::npos) << e;
}

TEST(TaskConfig, LoopSizesAreBounded) {
  const std::string sim = std::string(kMinimal) + "sim:\n";
  std::string e = parseError(sim + "  iterations: 1000000000\n");
  EXPECT_NE(
      e.find("test.yaml:5: sim.iterations: 1000000000 is out of range: must be in [1, 10000]"),
      std::string::npos)
      << e;
  e = parseError(sim + "  soft_substeps: 100000000\n");
  EXPECT_NE(e.find("sim.soft_substeps: 100000000 is out of range: must be in [1, 1000]"),
            std::string::npos)
      << e;
  e = parseError(sim + "  dt: 1.0e-9\n");
  EXPECT_NE(e.find("sim.dt: 1e-09 is out of range: must be in [1e-05, 0.1]"), std::string::npos)
      << e;
  TaskConfig t = parseTaskConfig(YAML::Load(kMinimal), "test.yaml");
  t.envDt = 0.1;
  t.sim.dt = 0.00005;  // 2000 sub-steps per env step
  try {
    t.decimation();
    ADD_FAILURE() << "2000 sub-steps per env step were accepted";
  } catch (const std::runtime_error& err) {
    EXPECT_NE(std::string(err.what()).find("2000 simulator steps per env step: at most 1000"),
              std::string::npos)
        << err.what();
  }
}

// critic_observations: the critic's own terms, read like the observations but without noise;
// privileged terms only there. Mistakes name the file, the line and the key.
TEST(TaskConfig, CriticObservationsAreNoiseFreeAndHoldThePrivilegedTerms) {
  const TaskConfig t = parseTaskConfig(YAML::Load(std::string(kMinimal) + R"(critic_observations:
  base_height: {scale: 2.0}
  friction: {}
)"),
                                       "test.yaml");
  ASSERT_EQ(t.criticObservations.size(), 2u);
  EXPECT_EQ(t.criticObservations[0].scale, 2.0);
  EXPECT_TRUE(t.criticObservations[1].def->privileged);
  const TaskConfig back = parseTaskConfig(YAML::Load(toYaml(t)), "back.yaml");
  EXPECT_EQ(flatten(back), flatten(t));
  EXPECT_TRUE(parseTaskConfig(YAML::Load(kMinimal), "test.yaml").criticObservations.empty());

  const std::string noisy = parseError(std::string(kMinimal) + R"(critic_observations:
  base_height: {noise: 0.1}
)");
  EXPECT_NE(noisy.find("test.yaml:5"), std::string::npos) << noisy;
  EXPECT_NE(noisy.find("critic_observations.base_height"), std::string::npos) << noisy;
  EXPECT_NE(noisy.find("noise"), std::string::npos) << noisy;
  const std::string privileged = parseError(R"(robot: quadruped
observations: {base_height: {}, friction: {}}
rewards: {forward_velocity: {weight: 1.0}}
)");
  EXPECT_NE(privileged.find("test.yaml:2"), std::string::npos) << privileged;
  EXPECT_NE(privileged.find("observations.friction: privileged"), std::string::npos) << privileged;
  EXPECT_NE(privileged.find("critic_observations"), std::string::npos) << privileged;
  const std::string unknown = parseError(std::string(kMinimal) + R"(critic_observations:
  frction: {}
)");
  EXPECT_NE(unknown.find("unknown observation term 'frction'"), std::string::npos) << unknown;
}
