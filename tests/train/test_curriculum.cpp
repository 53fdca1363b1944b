// Curricula (train/curriculum.h): the ramp's values, strict reading of the `curriculum:` keys
// (errors name file, line and key); tests/train/test_trainer.cpp runs a training that follows them.
#include <gtest/gtest.h>

#include "config_errors.h"
#include "envs/task_config.h"
#include "train/config.h"
#include "train/curriculum.h"

using namespace diffloco::train;

namespace {

const char* kBase = R"(name: test_run
algorithm: shac
task: walk
shac:
  iterations: 10
curriculum:
  commands: {initial: 0.2, final: 1.25, ramp_start: 100, ramp_iterations: 400}
  reset_noise: {final: 1.5, ramp_start: 600}
)";

}  // namespace

TEST(Curriculum, RampIsInitialThenLinearThenFinal) {
  Ramp r;
  r.initial = 0.2, r.final = 1.0, r.rampStart = 100, r.rampIterations = 400;
  EXPECT_DOUBLE_EQ(r.at(0), 0.2);
  EXPECT_DOUBLE_EQ(r.at(100), 0.2);
  EXPECT_DOUBLE_EQ(r.at(300), 0.6);
  EXPECT_DOUBLE_EQ(r.at(500), 1.0);
  EXPECT_DOUBLE_EQ(r.at(100000), 1.0);
  Ramp step;  // no ramp: a step at ramp_start
  step.final = 1.5, step.rampStart = 600;
  EXPECT_DOUBLE_EQ(step.at(599), 1.0);
  EXPECT_DOUBLE_EQ(step.at(600), 1.5);
  EXPECT_TRUE(Ramp().trivial());
  EXPECT_FALSE(step.trivial());
}

TEST(Curriculum, ReadWrittenAndFlattened) {
  const TrainConfig c = parseTrainConfig(kBase, "cfg.yaml");
  EXPECT_EQ(c.curriculum.commands.initial, 0.2);
  EXPECT_EQ(c.curriculum.commands.final, 1.25);
  EXPECT_EQ(c.curriculum.commands.rampIterations, 400);
  EXPECT_EQ(c.curriculum.resetNoise.rampStart, 600);
  EXPECT_TRUE(c.curriculum.episodeLength.trivial());  // absent: the task as written
  // The resolved config reads back the same and names every key.
  const TrainConfig back = parseTrainConfig(toYaml(c), "resolved.yaml");
  EXPECT_EQ(flatten(back), flatten(c));
  bool found = false;
  for (const auto& [k, v] : flatten(c)) found |= k == "curriculum.commands.final" && v == "1.25";
  EXPECT_TRUE(found);
  // --set reaches the keys.
  const TrainConfig s = parseTrainConfig(
      kBase, "cfg.yaml",
      {"curriculum.episode_length.initial=0.2", "curriculum.command_resample={final: 0.3}"});
  EXPECT_EQ(s.curriculum.episodeLength.initial, 0.2);
  EXPECT_EQ(s.curriculum.commandResample.at(0), 0.3);  // no ramp: the final value throughout
  EXPECT_FALSE(s.curriculum.commandResample.trivial());
}

TEST(Curriculum, BadValuesNameFileLineAndKey) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kBase;
    return s.replace(s.find(from), from.size(), to);
  };
  EXPECT_CONTAINS(
      configError(with("initial: 0.2", "initial: -0.5")),
      "cfg.yaml:7: curriculum.commands.initial: -0.5 is out of range: must be in [0, 10]");
  EXPECT_CONTAINS(configError(with("ramp_iterations: 400", "ramp_iterations: -1")),
                  "curriculum.commands.ramp_iterations: -1 is out of range");
  EXPECT_CONTAINS(configError(with("final: 1.25", "final: .nan")),
                  "curriculum.commands.final: expected a finite number");
  EXPECT_CONTAINS(configError(with("ramp_start: 600", "ramp_strat: 600")),
                  "cfg.yaml:8: unknown key 'curriculum.reset_noise.ramp_strat'");
  EXPECT_CONTAINS(configError(with("  reset_noise:", "  reset_nois:")),
                  "unknown key 'curriculum.reset_nois'");
  EXPECT_CONTAINS(configError(kBase, {"curriculum.commands.final=lots"}),
                  "--set curriculum.commands.final=lots");
}

// curriculum.rewards: a ramp of a reward term's weight per term, read, written, flattened and set
// like the other ramps; a term the task lacks is added to the task as trained.
TEST(Curriculum, RewardWeights) {
  const std::string cfg = std::string(kBase) +
                          "  rewards:\n"
                          "    lin_vel_tracking_l2: {initial: 0, final: 0.5, ramp_start: 100, "
                          "ramp_iterations: 100}\n";
  const TrainConfig c = parseTrainConfig(cfg, "cfg.yaml");
  ASSERT_EQ(c.curriculum.rewards.size(), 1u);
  EXPECT_DOUBLE_EQ(c.curriculum.rewards.at("lin_vel_tracking_l2").at(150), 0.25);
  const TrainConfig back = parseTrainConfig(toYaml(c), "resolved.yaml");
  EXPECT_EQ(flatten(back), flatten(c));
  bool found = false;
  for (const auto& [k, v] : flatten(c))
    found |= k == "curriculum.rewards.lin_vel_tracking_l2.final" && v == "0.5";
  EXPECT_TRUE(found);
  // None: written as {} and read back as none.
  EXPECT_TRUE(parseTrainConfig(toYaml(parseTrainConfig(kBase, "b.yaml")), "r.yaml")
                  .curriculum.rewards.empty());
  const TrainConfig s =
      parseTrainConfig(cfg, "cfg.yaml", {"curriculum.rewards.action_exp={final: 0.1}"});
  EXPECT_EQ(s.curriculum.rewards.size(), 2u);
  EXPECT_DOUBLE_EQ(s.curriculum.rewards.at("action_exp").at(0), 0.1);

  // The walk task has no lin_vel_tracking_l2: training adds it (weight: the ramp's initial value);
  // action_exp, which it has, stays where it is.
  const diffloco::envs::TaskConfig trained = trainedTask(s.curriculum, s.task);
  ASSERT_EQ(trained.rewards.size(), s.task.rewards.size() + 1);
  EXPECT_EQ(trained.rewards.back().name, "lin_vel_tracking_l2");
  EXPECT_EQ(trained.rewards.back().weight, 0.0);
  EXPECT_EQ(s.task.rewards.size(), 5u);  // the task itself is unchanged

  EXPECT_CONTAINS(configError(cfg, {"curriculum.rewards.lin_vel_trakcing_l2={final: 1}"}),
                  "--set curriculum.rewards.lin_vel_trakcing_l2={final: 1}: "
                  "curriculum.rewards.lin_vel_trakcing_l2: unknown reward term "
                  "'lin_vel_trakcing_l2' (did you mean 'lin_vel_tracking_l2'?");
  std::string typo = cfg;
  typo.replace(typo.find("    lin_vel_tracking_l2"), 23, "    foot_hieght_tracking");
  EXPECT_CONTAINS(configError(typo),
                  "cfg.yaml:10: curriculum.rewards.foot_hieght_tracking: "
                  "unknown reward term");
  std::string negative = cfg;
  negative.replace(negative.find("final: 0.5"), 10, "final: -1");
  EXPECT_CONTAINS(configError(negative),
                  "cfg.yaml:10: curriculum.rewards.lin_vel_tracking_l2.final: -1 is out of range");
  EXPECT_CONTAINS(configError(kBase, {"curriculum.rewards=[1]"}),
                  "curriculum.rewards: expected a map of names to sections");
}
