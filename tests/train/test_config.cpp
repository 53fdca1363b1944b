// The typed, strict training config (train/config.h): errors name the file and line (or the
// --set argument), the key and what was expected, with a "did you mean" for unknown keys; --set
// overrides go through the same checks; the resolved config reads back to the same settings; the
// shipped configs carry the paper's values.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "config/archive.h"
#include "config_errors.h"
#include "robots/robot.h"
#include "tests/config/hostile_yaml.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

using namespace diffloco::train;

namespace {

const char* kBase = R"(name: test_run
algorithm: shac
seed: 3
task: walk
shac:
  iterations: 10
  num_envs: 4
  horizon: 8
policy:
  actor_hidden: [16, 8]
run:
  checkpoint_every: 5
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST(Config, ReadsTheBaseConfig) {
  const TrainConfig c = parseTrainConfig(kBase, "cfg.yaml");
  EXPECT_EQ(c.name, "test_run");
  EXPECT_EQ(c.algorithm, "shac");
  EXPECT_EQ(c.seed, 3);
  EXPECT_EQ(c.shac.iterations, 10);
  EXPECT_EQ(c.shac.numEnvs, 4);
  EXPECT_EQ(c.shac.horizon, 8);
  EXPECT_EQ(c.shac.gamma, 0.99);  // default kept
  EXPECT_EQ(c.policy.actorHidden, (std::vector<int>{16, 8}));
  EXPECT_EQ(c.run.checkpointEvery, 5);
  EXPECT_EQ(c.task.robot, "quadruped");
  EXPECT_EQ(c.task.name, "walk");
  EXPECT_EQ(c.iterations(), 10);
}

// A config whose aliases hold themselves or expand to 10^10 nodes: a quick error naming the file
// and line, before any reader walks it (a self-referential value crashed the message that quoted
// it; *a9 as a value kept the reader busy for minutes).
TEST(Config, HostileYamlIsRefusedQuickly) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: &h [*h]")),
                  "cfg.yaml:8: self-referential alias");
  const std::string bomb =
      configError(diffloco::testing::anchorBomb() + replace(kBase, "horizon: 8", "horizon: *a9"));
  EXPECT_EQ(bomb.rfind("cfg.yaml:", 0), 0u) << bomb;
  EXPECT_CONTAINS(bomb, ": alias expansion too large");
  // A --set value is YAML too.
  EXPECT_CONTAINS(configError(kBase, {"shac.horizon=&h [*h]"}),
                  "--set shac.horizon=&h [*h]: self-referential alias");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(Config, UnknownKeyNamesFileLineAndSuggestion) {
  const std::string e = configError(replace(kBase, "  horizon: 8", "  horizn: 8"));
  EXPECT_CONTAINS(e, "cfg.yaml:8: unknown key 'shac.horizn'");
  EXPECT_CONTAINS(e, "did you mean 'horizon'?");
  const std::string top = configError(replace(kBase, "seed: 3", "sed: 3"));
  EXPECT_CONTAINS(top, "cfg.yaml:3: unknown key 'sed'");
  EXPECT_CONTAINS(top, "did you mean 'seed'?");
  // Far from every key: no suggestion, but the list of known keys.
  const std::string far = configError(replace(kBase, "  horizon: 8", "  zzzzzzzzzz: 8"));
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_CONTAINS(far, "known: iterations, num_envs, horizon");
}

TEST(Config, WrongTypesAreErrors) {
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: 8.5")),
                  "cfg.yaml:8: shac.horizon: expected an integer, got '8.5'");
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: eight")),
                  "shac.horizon: expected an integer, got 'eight'");
  EXPECT_CONTAINS(configError(replace(kBase, "actor_hidden: [16, 8]", "actor_hidden: 16")),
                  "cfg.yaml:10: policy.actor_hidden: expected a list like [1, 2], got '16'");
  EXPECT_CONTAINS(configError(replace(kBase, "checkpoint_every: 5", "checkpoint_every: [5]")),
                  "run.checkpoint_every: expected an integer");
  EXPECT_CONTAINS(configError(replace(kBase, "shac:\n", "shac: 3\nx:\n")),
                  "shac: expected a section");
  EXPECT_CONTAINS(configError(std::string(kBase) + "  verbose: maybe\n"),
                  "run.verbose: expected true or false, got 'maybe'");
}

TEST(Config, RangesAndChoicesAreChecked) {
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: 0")),
                  "cfg.yaml:8: shac.horizon: 0 is out of range: must be in [1, 1000]");
  EXPECT_CONTAINS(configError(std::string(kBase) + "policy2: 1\n"), "unknown key 'policy2'");
  const std::string gamma = configError(replace(kBase, "horizon: 8", "horizon: 8\n  gamma: 1.5"));
  EXPECT_CONTAINS(gamma, "cfg.yaml:9: shac.gamma: 1.5 is out of range: must be in [0, 1]");
  const std::string choice = configError(replace(kBase, "algorithm: shac", "algorithm: shak"));
  EXPECT_CONTAINS(choice, "cfg.yaml:2: algorithm: 'shak' is not one of: shac, ppo");
  EXPECT_CONTAINS(choice, "did you mean 'shac'?");
  EXPECT_CONTAINS(configError(replace(kBase, "[16, 8]", "[16, 0]")),
                  "policy.actor_hidden[1]: 0 is out of range: must be > 0");
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: 8\n  adam_betas: [0.9]")),
                  "shac.adam_betas: expected 2 entries, got 1");
  EXPECT_CONTAINS(configError(replace(kBase, "horizon: 8", "horizon: 8\n  adam_betas: [0.9, 1.0]")),
                  "shac.adam_betas[1]: 1 is out of range: must be in [0, 1)");
}

TEST(Config, OnlyTheSelectedAlgorithmsSection) {
  EXPECT_CONTAINS(configError(std::string(kBase) + "ppo:\n  rollout: 3\n"),
                  "cfg.yaml:13: section 'ppo' does not apply to algorithm 'shac'");
  const TrainConfig p = parseTrainConfig(
      replace(replace(replace(kBase, "algorithm: shac", "algorithm: ppo"), "shac:", "ppo:"),
              "  horizon: 8\n", ""),
      "cfg.yaml", {"ppo.rollout=5"});
  EXPECT_EQ(p.ppo.rollout, 5);
  EXPECT_EQ(p.ppo.numEnvs, 4);
}

TEST(Config, SetOverridesWithTheSameChecks) {
  const TrainConfig c = parseTrainConfig(kBase, "cfg.yaml",
                                         {"shac.horizon=16", "policy.critic_hidden=[32, 32, 32]",
                                          "task.sim.contact=hard", "run.verbose=true", "seed=7"});
  EXPECT_EQ(c.shac.horizon, 16);
  EXPECT_EQ(c.policy.criticHidden, (std::vector<int>{32, 32, 32}));
  EXPECT_EQ(c.task.sim.contact.model, diffloco::sim::ContactModel::Hard);
  EXPECT_TRUE(c.run.verbose);
  EXPECT_EQ(c.seed, 7);

  const std::string unknown = configError(kBase, {"shac.horizn=16"});
  EXPECT_CONTAINS(unknown, "--set shac.horizn=16: unknown key 'shac.horizn'");
  EXPECT_CONTAINS(unknown, "did you mean 'horizon'?");
  EXPECT_CONTAINS(configError(kBase, {"shac.horizon=abc"}),
                  "--set shac.horizon=abc: shac.horizon: expected an integer, got 'abc'");
  EXPECT_CONTAINS(configError(kBase, {"shac.gamma=2"}),
                  "--set shac.gamma=2: shac.gamma: 2 is out of range");
  EXPECT_CONTAINS(configError(kBase, {"shac.horizon"}),
                  "--set shac.horizon: expected key.path=value");
  EXPECT_CONTAINS(configError(kBase, {"=3"}), "expected key.path=value");
  EXPECT_CONTAINS(configError(kBase, {"shac..horizon=3"}), "is not a key path");
  EXPECT_CONTAINS(configError(kBase, {"shac.horizon.x=3"}),
                  "--set shac.horizon.x=3: 'shac.horizon' is a value, not a section");
  // More minibatches than the iteration's samples ended in LibTorch's "Dimension out of range".
  EXPECT_CONTAINS(configError(kBase, {"shac.critic_minibatches=1000000"}),
                  "--set shac.critic_minibatches=1000000: shac.critic_minibatches: 1000000 "
                  "minibatches of 32 samples (num_envs x horizon): at most one a sample");
  EXPECT_CONTAINS(
      configError(replace(kBase, "  horizon: 8\n", "  horizon: 8\n  critic_minibatches: 33\n")),
      "cfg.yaml:9: shac.critic_minibatches: 33 minibatches of 32 samples");
  EXPECT_EQ(configError(kBase, {"shac.critic_minibatches=32"}), "");
  // A tanh's bound without the tanh is an error naming the key (squash defaults to none).
  EXPECT_CONTAINS(configError(kBase, {"policy.squash_bound=2"}),
                  "--set policy.squash_bound=2: policy.squash_bound: a bound of the tanh squash, "
                  "but policy.squash is none");
  EXPECT_CONTAINS(
      configError(replace(kBase, "  actor_hidden: [16, 8]\n",
                          "  actor_hidden: [16, 8]\n  squash_bound: 2\n")),
      "cfg.yaml:11: policy.squash_bound: a bound of the tanh squash");
  EXPECT_EQ(configError(kBase, {"policy.squash=tanh", "policy.squash_bound=2"}), "");
  EXPECT_CONTAINS(configError(kBase, {"policy.squash=tanh", "policy.squash_bound=0"}),
                  "policy.squash_bound");
  // One bound per action: a list (its length is checked against the task's actions where the
  // actor is built), each entry positive.
  EXPECT_EQ(configError(kBase, {"policy.squash=tanh", "policy.squash_bound=[1, 2, 2]"}), "");
  EXPECT_CONTAINS(configError(kBase, {"policy.squash=tanh", "policy.squash_bound=[1, -2]"}),
                  "policy.squash_bound[1]");
  EXPECT_CONTAINS(configError(kBase, {"ppo.rollout=3"}),
                  "--set ppo.rollout=3: section 'ppo' does not apply to algorithm 'shac'");
  // Task keys are checked by the task's own strict reader; the message names the argument.
  const std::string task = configError(kBase, {"task.sim.kapa=100"});
  EXPECT_CONTAINS(task, "--set task.sim.kapa=100: unknown key 'task.sim.kapa'");
  EXPECT_CONTAINS(task, "did you mean 'kappa'?");
  EXPECT_CONTAINS(configError(kBase, {"task.sim.contact=squishy"}),
                  "--set task.sim.contact=squishy");
  // Found by fuzz_train_config (tests/fuzz/regressions/train_config_control_character_in_set.yaml):
  // a carriage return and a NUL in a key. The message named the task file at line 0 (the task
  // parser saw the key, and matching its message to the argument failed), and the NUL cut it.
  const std::string control = configError(kBase, {std::string("task.sim.contac\r\0t=hard", 23)});
  EXPECT_CONTAINS(control, "--set task.sim.contac\\x0d\\x00t=hard: ");
  EXPECT_CONTAINS(control, "is not a key path");
  // Found by fuzz_train_config: an unknown section on the path of a task override was reported
  // against the task file.
  EXPECT_CONTAINS(configError(kBase, {"task.si0.contact=hard"}),
                  "--set task.si0.contact=hard: unknown key 'task.si0'");
  // Found by fuzz_train_config: a task name longer than the system allows (ENAMETOOLONG) threw
  // std::filesystem's error, naming neither the config nor the key.
  std::string longTask = kBase;
  longTask.replace(longTask.find("task: walk"), 10, "task: " + std::string(5000, 'w'));
  EXPECT_CONTAINS(configError(longTask), "cfg.yaml");
}

TEST(Config, TaskByNamePathOrInline) {
  EXPECT_CONTAINS(configError(replace(kBase, "task: walk", "task: wlak")),
                  "cfg.yaml:4: task: 'wlak' not found");
  EXPECT_CONTAINS(configError(replace(kBase, "task: walk\n", "")), "missing key 'task'");
  const TrainConfig v = parseTrainConfig(kBase, "cfg.yaml", {"task=velocity"});
  EXPECT_EQ(v.task.robot, "anymal");
  // Inline: the resolved task text of a named task parses back to the same task.
  const TrainConfig c = parseTrainConfig(kBase, "cfg.yaml", {"task.sim.kappa=123"});
  std::string inl = replace(kBase, "task: walk\n", "task:\n");
  std::istringstream lines(diffloco::envs::toYaml(c.task));
  std::string indented;
  for (std::string l; std::getline(lines, l);) indented += "  " + l + "\n";
  inl = replace(inl, "task:\n", "task:\n" + indented);
  const TrainConfig i = parseTrainConfig(inl, "cfg.yaml");
  EXPECT_EQ(i.task.sim.contact.kappa, 123);
  EXPECT_EQ(i.task.observations.size(), c.task.observations.size());
  // An error inside an inline task names the config file and the line.
  EXPECT_CONTAINS(
      configError(replace(inl, "  robot: \"quadruped\"", "  robot: quadruped\n  bogus: 1")),
      "cfg.yaml:7: unknown key 'task.bogus'");
}

// A config whose task extends the walk task with keys of three sections.
const char* const kExtendsWalk =
    "algorithm: shac\n"
    "task:\n"
    "  extends: walk\n"
    "  sim: {contact: hard, iterations: 20}\n"
    "  reset: {joint_pos_noise: 0.3}\n"
    "  randomization: {}\n";

// `task: {extends: NAME, ...}`: the named task with the map's keys on top, as --set task.* would
// put them; the command line still wins; errors name the config's line.
TEST(Config, TaskExtendsANamedTask) {
  const std::string cfg = kExtendsWalk;
  const TrainConfig c = parseTrainConfig(cfg, "cfg.yaml");
  const diffloco::envs::TaskConfig walk = loadTaskWithSets("walk", {});
  EXPECT_EQ(c.task.name, "walk");
  EXPECT_EQ(c.task.sim.contact.model, diffloco::sim::ContactModel::Hard);
  EXPECT_EQ(c.task.sim.contact.iterations, 20);
  EXPECT_EQ(c.task.sim.contact.kappa, walk.sim.contact.kappa);  // the rest is the task's
  EXPECT_EQ(c.task.reset.jointPosNoise, 0.3);
  EXPECT_EQ(c.task.reset.jointVelNoise, walk.reset.jointVelNoise);
  EXPECT_EQ(c.task.rewards.size(), walk.rewards.size());
  EXPECT_NE(c.taskSource.find("walk.yaml"), std::string::npos);
  // The resolved config holds the task as extended and reads back the same.
  EXPECT_EQ(flatten(parseTrainConfig(toYaml(c), "resolved.yaml")), flatten(c));
  // The command line comes last.
  EXPECT_EQ(parseTrainConfig(cfg, "cfg.yaml", {"task.sim.contact=soft"}).task.sim.contact.model,
            diffloco::sim::ContactModel::Soft);
  // Errors name the config file's line and the key.
  std::string typo = cfg;
  typo.replace(typo.find("iterations: 20"), 14, "iteratoins: 20");
  EXPECT_CONTAINS(configError(typo), "cfg.yaml:4: task.sim.iteratoins (extending the task)");
  std::string bad = cfg;
  bad.replace(bad.find("joint_pos_noise: 0.3"), 20, "joint_pos_noise: x");
  EXPECT_CONTAINS(configError(bad), "cfg.yaml:5: task.reset.joint_pos_noise (extending the task)");
  std::string missing = cfg;
  missing.replace(missing.find("extends: walk"), 13, "extends: wakl");
  EXPECT_CONTAINS(configError(missing), "cfg.yaml:3: task.extends: 'wakl' not found");
  missing.replace(missing.find("extends: wakl"), 13, "extends: [a]");
  EXPECT_CONTAINS(configError(missing), "task.extends: expected a task name or a path");
}

// The extension's keys go before the command line's task.* overrides; however many there are,
// each key gets its own value (yaml-cpp assigns nodes by reference: shifting overrides in a
// vector once overwrote the command line's values with the extension's).
TEST(Config, TaskExtensionAndManyOverridesKeepTheirValues) {
  const std::string cfg = kExtendsWalk;
  const std::vector<std::string> keys = {"reset.joint_vel_noise",
                                         "reset.base_pos_noise",
                                         "reset.base_rot_noise",
                                         "reset.random_yaw",
                                         "reset.base_lin_vel_noise",
                                         "reset.base_ang_vel_noise",
                                         "reset.foot_clearance",
                                         "sim.kappa",
                                         "sim.soft_kp",
                                         "sim.soft_kd",
                                         "sim.soft_kf",
                                         "episode_length_s"};
  for (size_t n = 0; n <= keys.size(); ++n) {
    std::vector<std::string> sets;
    for (size_t k = 0; k < n; ++k) sets.push_back("task." + keys[k] + "=" + std::to_string(k + 2));
    const diffloco::envs::TaskConfig t = parseTrainConfig(cfg, "cfg.yaml", sets).task;
    const diffloco::envs::TaskConfig w = loadTaskWithSets("walk", {});
    const double got[] = {t.reset.jointVelNoise, t.reset.basePosNoise,    t.reset.baseRotNoise,
                          t.reset.randomYaw,     t.reset.baseLinVelNoise, t.reset.baseAngVelNoise,
                          t.reset.footClearance, t.sim.contact.kappa,     t.sim.contact.softKp,
                          t.sim.contact.softKd,  t.sim.contact.softKf,    t.episodeLengthS};
    const double walk[] = {w.reset.jointVelNoise, w.reset.basePosNoise,    w.reset.baseRotNoise,
                           w.reset.randomYaw,     w.reset.baseLinVelNoise, w.reset.baseAngVelNoise,
                           w.reset.footClearance, w.sim.contact.kappa,     w.sim.contact.softKp,
                           w.sim.contact.softKd,  w.sim.contact.softKf,    w.episodeLengthS};
    for (size_t k = 0; k < keys.size(); ++k)
      EXPECT_EQ(got[k], k < n ? static_cast<double>(k + 2) : walk[k]) << n << " sets, " << keys[k];
    EXPECT_EQ(t.sim.contact.model, diffloco::sim::ContactModel::Hard) << n;
    EXPECT_EQ(t.sim.contact.iterations, 20) << n;
    EXPECT_EQ(t.reset.jointPosNoise, 0.3) << n;
  }
}

TEST(Config, ResolvedConfigReadsBackTheSame) {
  const TrainConfig c = parseTrainConfig(
      kBase, "cfg.yaml", {"shac.actor_lr=0.0012345678901", "task.sim.contact=soft"});
  const std::string yaml = toYaml(c);
  const TrainConfig back = parseTrainConfig(yaml, "config.yaml");
  EXPECT_EQ(flatten(back), flatten(c));
  EXPECT_EQ(back.shac.actorLr, 0.0012345678901);
  EXPECT_EQ(back.task.sim.contact.model, diffloco::sim::ContactModel::Soft);
  EXPECT_CONTAINS(yaml, "horizon: 8  # short horizon: env steps per iteration");
}

TEST(Config, ShippedConfigsCarryThePapersTables) {
  const std::string dir = diffloco::configDir() + "/";
  const TrainConfig s = loadTrainConfig(dir + "walk_quadruped_shac.yaml");  // Table 6
  EXPECT_EQ(s.algorithm, "shac");
  // Table 6's schedule (1000 iterations, decays 0.995 / 0.997) stretched over 2000 iterations:
  // the same final learning rates to 1 %.
  EXPECT_EQ(s.shac.iterations, 2000);
  EXPECT_NEAR(std::pow(s.shac.actorLrDecay, 2000) / std::pow(0.995, 1000), 1.0, 0.01);
  EXPECT_NEAR(std::pow(s.shac.criticLrDecay, 2000) / std::pow(0.997, 1000), 1.0, 0.01);
  EXPECT_EQ(s.shac.numEnvs, 64);
  EXPECT_EQ(s.shac.horizon, 32);
  EXPECT_EQ(s.shac.actorLr, 0.002);
  EXPECT_EQ(s.shac.criticLr, 0.002);
  EXPECT_EQ(s.shac.lrSchedule, "exponential");
  EXPECT_EQ(s.shac.targetAlpha, 0.2);
  EXPECT_EQ(s.shac.criticIterations, 16);
  EXPECT_EQ(s.shac.criticMinibatches, 4);
  EXPECT_EQ(s.shac.actorGradNorm, 1.0);
  EXPECT_EQ(s.shac.criticGradNorm, 10.0);
  EXPECT_EQ(s.policy.actorHidden, (std::vector<int>{128, 64, 32}));
  EXPECT_EQ(s.policy.criticHidden, (std::vector<int>{64, 64}));
  EXPECT_EQ(s.policy.activation, "elu");
  // Trained in hard contact (the paper: smoothed, kappa 300, which the task file keeps).
  EXPECT_EQ(s.task.name, "walk");
  EXPECT_EQ(s.task.sim.contact.model, diffloco::sim::ContactModel::Hard);
  EXPECT_EQ(loadTaskWithSets("walk", {}).sim.contact.model, diffloco::sim::ContactModel::Smoothed);
  EXPECT_EQ(s.curriculum.resetNoise.at(0), 1.5);  // start-ups trained harder than evaluated
  EXPECT_EQ(s.curriculum.episodeLength.at(999), 0.2);
  const TrainConfig plain = loadTrainConfig(
      dir + "walk_quadruped_shac.yaml",
      {"shac.iterations=1000", "shac.actor_lr_decay=0.995", "shac.critic_lr_decay=0.997",
       "curriculum.reset_noise={}", "curriculum.episode_length={}",
       "task.sim.contact=smoothed"});  // Table 1's protocol
  EXPECT_EQ(plain.shac.iterations, 1000);
  EXPECT_EQ(plain.task.sim.contact.model, diffloco::sim::ContactModel::Smoothed);
  EXPECT_TRUE(plain.curriculum.resetNoise.trivial());
  EXPECT_TRUE(plain.curriculum.episodeLength.trivial());

  const TrainConfig p = loadTrainConfig(dir + "walk_quadruped_ppo.yaml");  // Table 6
  EXPECT_EQ(p.algorithm, "ppo");
  EXPECT_EQ(p.ppo.numEnvs, 2048);
  EXPECT_EQ(p.ppo.rollout, 24);
  EXPECT_EQ(p.ppo.learningRate, 0.001);
  EXPECT_EQ(p.ppo.epochs, 5);
  EXPECT_EQ(p.ppo.minibatches, 4);
  EXPECT_EQ(p.ppo.desiredKl, 0.01);
  EXPECT_EQ(p.ppo.entropyCoef, 0.0);
  EXPECT_EQ(p.ppo.maxGradNorm, 1.0);

  // Table 9 but for the window (32 steps x 64 envs, 4000 iterations: docs/velocity_anymal.md)
  // and the commands trained 25 % wider than the task's; Table 7's rewards.
  const TrainConfig v = loadTrainConfig(dir + "velocity_anymal_shac.yaml");
  EXPECT_EQ(v.task.robot, "anymal");
  EXPECT_EQ(v.shac.iterations, 4000);
  EXPECT_EQ(v.shac.numEnvs, 64);
  EXPECT_EQ(v.shac.horizon, 32);
  EXPECT_EQ(v.curriculum.commands.at(0), 1.25);
  EXPECT_EQ(v.curriculum.commands.at(4000), 1.25);
  EXPECT_EQ(v.curriculum.commandResample.at(999), 1.0);   // the task's 10 s until tracking
  EXPECT_EQ(v.curriculum.commandResample.at(2000), 0.3);  // then every 3 s
  EXPECT_TRUE(v.curriculum.resetNoise.trivial());
  // The quadratic tracking term, trained from iteration 1000 on; the task itself has none.
  EXPECT_EQ(v.curriculum.rewards.at("lin_vel_tracking_l2").at(999), 0.0);
  EXPECT_EQ(v.curriculum.rewards.at("lin_vel_tracking_l2").at(1500), 0.5);
  std::map<std::string, double> weights;
  for (const auto& t : v.task.rewards) weights[t.name] = t.weight;
  EXPECT_EQ(weights.at("lin_vel_tracking"), 1.0);
  EXPECT_EQ(weights.at("ang_vel_tracking"), 0.5);
  EXPECT_EQ(weights.at("foot_height_tracking"), 3.0);
  EXPECT_EQ(weights.count("lin_vel_tracking_l2"), 0u);

  // PPO on the velocity task: legged_gym's flat-ANYmal settings (2048 envs here).
  const TrainConfig vp = loadTrainConfig(dir + "velocity_anymal_ppo.yaml");
  EXPECT_EQ(vp.algorithm, "ppo");
  EXPECT_EQ(vp.task.name, "velocity");
  EXPECT_EQ(vp.ppo.rollout, 24);
  EXPECT_EQ(vp.ppo.entropyCoef, 0.01);
  EXPECT_EQ(vp.policy.criticHidden, (std::vector<int>{128, 64, 32}));
  EXPECT_EQ(v.shac.actorLr, 0.005);
  EXPECT_EQ(v.shac.criticLr, 0.002);
  EXPECT_EQ(v.shac.lrSchedule, "linear");
  EXPECT_EQ(v.shac.actorLrFinal, 1e-5);
  EXPECT_EQ(v.shac.criticLrFinal, 1e-5);
}

// The foot-height reference of the velocity task is the robot's (its task_defaults): eq. 19's for
// ANYmal, one scaled to the robot for go_like; the command line still wins.
TEST(Config, FootHeightReferenceIsTheRobots) {
  auto reference = [](const diffloco::envs::TaskConfig& t) {
    for (const auto& r : t.rewards)
      if (r.name == "foot_height_tracking")
        return std::make_pair(r.params("height"), r.params("sigma"));
    return std::make_pair(0.0, 0.0);
  };
  EXPECT_EQ(reference(loadTaskWithSets("velocity", {})), std::make_pair(0.1, 0.05));
  EXPECT_EQ(reference(loadTaskWithSets("velocity", {"robot=go_like"})), std::make_pair(0.06, 0.01));
  EXPECT_EQ(reference(loadTaskWithSets("velocity", {"robot=go_like",
                                                    "rewards.foot_height_tracking.height=0.08"}))
                .first,
            0.08);
}

// Found by fuzz_train_config (tests/fuzz/regressions/train_config_extension_empties_rewards.yaml):
// a task extension that empties `rewards` was reported against the task file it extends
// ("walk.yaml: no reward terms"); the checks of the whole task now name the key or the override
// that set it, as the reader's own messages do.
TEST(Config, WholeTaskChecksNameTheOverride) {
  const std::string extended =
      configError(replace(kBase, "task: walk\n", "task:\n  extends: walk\n  rewards: null\n"));
  EXPECT_CONTAINS(extended,
                  "cfg.yaml:6: task.rewards (extending the task): task.rewards: no terms");
  EXPECT_CONTAINS(configError(kBase, {"task.observations={}"}),
                  "--set task.observations={}: task.observations: no terms");
  EXPECT_CONTAINS(configError(kBase, {"task.env_dt=0.013"}),
                  "--set task.env_dt=0.013: env_dt (0.013000) must be a multiple of sim.dt");
  EXPECT_CONTAINS(configError(kBase, {"task.sim.dt=0.003"}), "--set task.sim.dt=0.003: env_dt");
}

// Found by fuzz_train_config (tests/fuzz/regressions/train_config_map_as_key.yaml): a map used as
// a key in a task extension escaped as yaml-cpp's "bad conversion", naming no file.
TEST(Config, KeysThatAreNotNamesNameTheLine) {
  EXPECT_CONTAINS(
      configError(replace(kBase, "task: walk\n", "task:\n  extends: walk\n  ? {a: 1}\n  : 2\n")),
      "cfg.yaml:6: expected a name as key");
  EXPECT_CONTAINS(configError(replace(kBase, "seed: 3\n", "? [seed]\n: 3\n")),
                  "cfg.yaml:3: expected a name as key");
}

// Every input fuzz_train_config found (tests/fuzz/regressions/train_config_*.yaml), read as the
// fuzz target reads it: success, or an error naming the file or the --set argument it is about.
TEST(Config, FuzzRegressionsAreErrorsNamingTheFile) {
  namespace fs = std::filesystem;
  const diffloco::testing::ScratchDir scratch("diffloco_fuzz_regressions");
  const fs::path dir = scratch.path();
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(DIFFLOCO_FUZZ_REGRESSIONS)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("train_config_", 0) != 0) continue;
    ++inputs;
    std::ifstream in(entry.path(), std::ios::binary);
    const auto input = diffloco::fuzz::splitSets(
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << input.yaml;
    std::string error;
    try {
      loadTrainConfig(path, input.sets);
    } catch (const std::exception& e) {
      error = e.what();
    }
    bool named = error.find(path) != std::string::npos;
    for (const auto& s : input.sets)
      named = named || error.find(diffloco::config::printable(s)) != std::string::npos;
    EXPECT_TRUE(error.empty() || named) << name << ": " << error;
  }
  EXPECT_GE(inputs, 4);
}

// Found by fuzz_train_config (tests/fuzz/regressions/train_config_task_name_with_nul.yaml): a task
// name with a NUL byte resolved to configs/tasks/, a folder, whose read threw
// std::ios_base::failure naming nothing. A task (or actuator file) that is not a regular file is
// now "not found", naming the config's line.
TEST(Config, TaskThatIsAFolderIsNotFound) {
  EXPECT_CONTAINS(configError(replace(kBase, "task: walk", std::string("task: \"w\\0x\""))),
                  "cfg.yaml:4: task:");
  const diffloco::testing::ScratchDir scratch("diffloco_task_dir");
  const std::string dir = (scratch / "task.yaml").string();
  std::filesystem::create_directories(dir);
  EXPECT_CONTAINS(configError(replace(kBase, "task: walk", "task: " + dir)), "cfg.yaml:4: task:");
}
