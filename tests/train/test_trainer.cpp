// `diffloco train` end to end on tiny settings (a few envs, a few iterations, well under a
// second each): the run folder's files, a resumed run matching an uninterrupted one bit for bit
// (SHAC and PPO), what a resume may change, checkpoints surviving an interrupted write, and the
// stop after repeated non-finite updates.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "batch/batch_sim.h"
#include "policies/actor_critic.h"
#include "runs/run_dir.h"
#include "runs/tfevents.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"
#include "train/trainer.h"

using namespace diffloco;
using namespace diffloco::train;
using namespace diffloco::runs;
namespace fs = std::filesystem;
using torch::Tensor;

namespace {

// Walk task, short episodes (resets happen inside the runs), small networks, one torch thread.
const char* kShac = R"(name: tiny_shac
algorithm: shac
seed: 4
task: walk
shac:
  iterations: 4
  num_envs: 4
  horizon: 4
  critic_iterations: 2
  critic_minibatches: 2
policy:
  actor_hidden: [16, 8]
  critic_hidden: [16]
  layer_norm: true
  squash: tanh
  init_std: 0.5
run:
  checkpoint_every: 2
  torch_threads: 1
  sim_threads: 2
)";

const char* kPpo = R"(name: tiny_ppo
algorithm: ppo
seed: 4
task: walk
ppo:
  iterations: 4
  num_envs: 8
  rollout: 4
  epochs: 2
  minibatches: 2
policy:
  actor_hidden: [16, 8]
  critic_hidden: [16]
run:
  checkpoint_every: 2
  torch_threads: 1
  sim_threads: 2
)";

struct Scratch {
  diffloco::testing::ScratchDir scratch;
  fs::path dir = scratch.path();
  explicit Scratch(const std::string& name) : scratch(name) {}
  std::string config(const std::string& text) const {
    const fs::path p = dir / "config.yaml";
    std::ofstream(p) << text;
    return p.string();
  }
};

TrainArgs args(const std::string& config, const fs::path& out) {
  TrainArgs a;
  a.config = config;
  a.out = out.string();
  a.sets = {"task.episode_length_s=0.05"};  // 5-step episodes
  return a;
}

// Every tensor of a checkpoint's actor and critic, by name.
std::map<std::string, Tensor> checkpointTensors(const std::string& path) {
  torch::serialize::InputArchive a;
  a.load_from(path);
  std::map<std::string, Tensor> out;
  policies::Actor actor = policies::readActor(a);
  for (const auto& p : actor->named_parameters()) out["actor." + p.key()] = p.value();
  for (const auto& b : actor->named_buffers()) out["actor." + b.key()] = b.value();
  for (const char* name : {"critic", "target_critic"}) {
    torch::serialize::InputArchive ar;
    if (!a.try_read(name, ar)) continue;
    policies::Critic critic(actor->numObs(), actor->config());
    critic->load(ar);
    for (const auto& p : critic->named_parameters())
      out[std::string(name) + "." + p.key()] = p.value();
  }
  return out;
}

TrainResult runTraining(const TrainArgs& a) {
  return diffloco::train::train(a);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(Trainer, ShacRunFolder) {
  Scratch s("diffloco_trainer_shac");
  const TrainResult r = runTraining(args(s.config(kShac), s.dir / "runs"));
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.iteration, 4);
  const fs::path run = r.runDir;
  EXPECT_EQ(run.parent_path(), s.dir / "runs");
  EXPECT_EQ(run.filename().string().substr(19), "_tiny_shac");
  for (const char* f : {"config.yaml", "git.txt", "metrics.csv", "train.log", "model_2.pt",
                        "model_4.pt", "policy.pt"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  EXPECT_FALSE(fs::exists(run / "model_4.pt.tmp"));
  // The resolved config holds the override and reads back.
  const TrainConfig back = loadTrainConfig((run / "config.yaml").string());
  EXPECT_EQ(back.task.episodeLengthS, 0.05);
  EXPECT_EQ(back.shac.horizon, 4);
  // metrics.csv: one row per iteration; episodes ended (5-step episodes, 16 steps).
  const Csv csv = readCsv((run / "metrics.csv").string());
  ASSERT_EQ(csv.rows.size(), 4u);
  EXPECT_EQ(csv.rows[3][csv.column("iteration")], 4);
  EXPECT_EQ(csv.rows[3][csv.column("env_steps")], 4 * 4 * 4);
  EXPECT_TRUE(std::isfinite(csv.rows[3][csv.column("Train/mean_reward")]));
  EXPECT_TRUE(std::isfinite(csv.rows[3][csv.column("Loss/actor")]));
  EXPECT_GE(csv.column("Episode/rew_forward_velocity"), 0);
  // TensorBoard: an event file with one summary per iteration.
  std::string events;
  for (const auto& e : fs::directory_iterator(run))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) events = e.path();
  ASSERT_FALSE(events.empty());
  const EventFile ef = readEventFile(events);
  EXPECT_EQ(ef.records, 5);
  int actorLoss = 0;
  for (const auto& v : ef.scalars) actorLoss += v.tag == "Loss/actor";
  EXPECT_EQ(actorLoss, 4);
  // The policy file: the actor with its normaliser and the contract's metadata.
  policies::LoadedPolicy p = policies::loadPolicy((run / "policy.pt").string());
  EXPECT_EQ(p.actor->numObs(), 49);
  EXPECT_EQ(p.actor->numActions(), 12);
  EXPECT_EQ(p.actor->normalizer()->count(), 4 * 4 * 4);
  EXPECT_EQ(p.metadata.at("task"), "walk");
  EXPECT_EQ(p.metadata.at("contact"), "smoothed");
  EXPECT_NE(slurp(run / "train.log").find("shac it     4/4"), std::string::npos);
}

// The curriculum's factors are applied before each iteration and logged with it; the episode
// length factor truncates the episodes (5 steps x 0.4 = 2).
TEST(Trainer, CurriculumFollowsItsRamps) {
  Scratch s("diffloco_trainer_curriculum");
  TrainArgs a = args(s.config(kShac), s.dir / "runs");
  a.sets.push_back("curriculum.reset_noise={initial: 0, final: 1, ramp_iterations: 4}");
  a.sets.push_back("curriculum.episode_length={initial: 0.4, final: 0.4}");
  a.sets.push_back("curriculum.command_resample={initial: 0.5, final: 0.5}");
  // A reward term the walk task lacks, switched on over the run.
  a.sets.push_back(
      "curriculum.rewards={lin_vel_tracking_l2: {initial: 0, final: 0.3, "
      "ramp_iterations: 3}}");
  const TrainResult r = runTraining(a);
  const Csv csv = readCsv((fs::path(r.runDir) / "metrics.csv").string());
  ASSERT_EQ(csv.rows.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(csv.rows[i][csv.column("Curriculum/reset_noise_scale")], 0.25 * i);
    EXPECT_DOUBLE_EQ(csv.rows[i][csv.column("Curriculum/command_scale")], 1.0);
    EXPECT_NEAR(csv.rows[i][csv.column("Curriculum/episode_length_s")], 0.02, 1e-12);
    EXPECT_DOUBLE_EQ(csv.rows[i][csv.column("Curriculum/command_resample_scale")], 0.5);
    EXPECT_NEAR(csv.rows[i][csv.column("Curriculum/reward_weight_lin_vel_tracking_l2")],
                0.1 * std::min(i, 3), 1e-12);
  }
  // Logged like the task's own terms; zero while its weight is.
  EXPECT_EQ(csv.rows[0][csv.column("Episode/rew_lin_vel_tracking_l2")], 0.0);
  EXPECT_LT(csv.rows[3][csv.column("Episode/rew_lin_vel_tracking_l2")], 0.0);
  // The policy file keeps the task as written.
  const policies::LoadedPolicy p =
      policies::loadPolicy((fs::path(r.runDir) / "policy.pt").string());
  EXPECT_EQ(p.metadata.at("task_yaml").find("lin_vel_tracking_l2"), std::string::npos);
  const double len = csv.rows[3][csv.column("Episode/length_s")];
  EXPECT_NEAR(len, 0.02, 1e-12);
}

// On a terrain task metrics.csv holds the mean terrain level and, per sub-terrain type that has
// envs, the mean over that type's envs (4 envs round-robin over the columns: pyramid_slope,
// pyramid_slope_inverted, rough_slope, rough_slope).
TEST(Trainer, TerrainLevelsPerTypeInMetrics) {
  Scratch s("diffloco_trainer_terrain");
  std::string config = kShac;
  config.replace(config.find("task: walk"), 10, "task: velocity_rough");
  TrainArgs a = args(s.config(config), s.dir / "runs");
  a.sets.push_back("shac.iterations=2");
  const TrainResult r = runTraining(a);
  const Csv csv = readCsv((fs::path(r.runDir) / "metrics.csv").string());
  ASSERT_EQ(csv.rows.size(), 2u);
  const std::string prefix = "Curriculum/terrain_level_";
  std::vector<std::string> types;
  for (const auto& c : csv.columns)
    if (c.rfind(prefix, 0) == 0) types.push_back(c.substr(prefix.size()));
  EXPECT_EQ(types, (std::vector<std::string>{"pyramid_slope", "pyramid_slope_inverted",
                                             "rough_slope"}));
  for (const auto& row : csv.rows)
    EXPECT_NEAR(row[csv.column("Curriculum/terrain_level")],
                (row[csv.column(prefix + "pyramid_slope")] +
                 row[csv.column(prefix + "pyramid_slope_inverted")] +
                 2 * row[csv.column(prefix + "rough_slope")]) /
                    4,
                1e-12);
}

TEST(Trainer, PpoRunFolder) {
  Scratch s("diffloco_trainer_ppo");
  const TrainResult r = runTraining(args(s.config(kPpo), s.dir / "runs"));
  EXPECT_TRUE(r.finished);
  const Csv csv = readCsv((fs::path(r.runDir) / "metrics.csv").string());
  ASSERT_EQ(csv.rows.size(), 4u);
  EXPECT_EQ(csv.rows[3][csv.column("env_steps")], 4 * 8 * 4);
  EXPECT_TRUE(std::isfinite(csv.rows[3][csv.column("Loss/surrogate")]));
  EXPECT_TRUE(std::isfinite(csv.rows[3][csv.column("Loss/learning_rate")]));
  EXPECT_TRUE(fs::exists(fs::path(r.runDir) / "policy.pt"));
}

class Resume : public ::testing::TestWithParam<std::string> {};

TEST_P(Resume, MatchesAnUninterruptedRunBitForBit) {
  Scratch s("diffloco_resume_" + GetParam());
  const std::string cfg = s.config(GetParam() == "shac" ? kShac : kPpo);
  const TrainResult full = runTraining(args(cfg, s.dir / "a"));
  TrainArgs first = args(cfg, s.dir / "b");
  first.stopAfter = 2;  // an interruption after 2 of 4 iterations
  const TrainResult part = runTraining(first);
  EXPECT_FALSE(part.finished);
  EXPECT_EQ(part.iteration, 2);
  EXPECT_FALSE(fs::exists(fs::path(part.runDir) / "model_4.pt"));
  // A stray temporary of an interrupted checkpoint write is ignored.
  std::ofstream(fs::path(part.runDir) / "model_3.pt.tmp") << "partial";
  TrainArgs again;
  again.resume = part.runDir;
  const TrainResult resumed = runTraining(again);
  EXPECT_TRUE(resumed.finished);
  EXPECT_EQ(resumed.runDir, part.runDir);

  const auto a = checkpointTensors((fs::path(full.runDir) / "model_4.pt").string());
  const auto b = checkpointTensors((fs::path(resumed.runDir) / "model_4.pt").string());
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, t] : a) EXPECT_TRUE(t.equal(b.at(k))) << k;
  // The metrics of every iteration agree too (timings aside).
  const Csv ca = readCsv((fs::path(full.runDir) / "metrics.csv").string());
  const Csv cb = readCsv((fs::path(resumed.runDir) / "metrics.csv").string());
  ASSERT_EQ(ca.rows.size(), cb.rows.size());
  for (const char* col : {"Train/mean_reward", "Train/mean_episode_length", "Loss/value"})
    for (size_t i = 0; i < ca.rows.size(); ++i) {
      const double x = ca.rows[i][ca.column(col)], y = cb.rows[i][cb.column(col)];
      EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << col << " row " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Resume, ::testing::Values("shac", "ppo"),
                         [](const auto& info) { return info.param; });

TEST(Trainer, WhatAResumeMayChange) {
  Scratch s("diffloco_resume_rules");
  const std::string cfg = s.config(kShac);
  TrainArgs first = args(cfg, s.dir / "runs");
  first.stopAfter = 2;
  const TrainResult part = runTraining(first);
  TrainArgs changed;
  changed.resume = part.runDir;
  changed.sets = {"shac.horizon=8", "task.sim.contact=hard"};
  try {
    runTraining(changed);
    FAIL() << "a resume changing the problem must fail";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("shac.horizon: 4 -> 8"), std::string::npos) << m;
    EXPECT_NE(m.find("task.sim.contact: \"smoothed\" -> \"hard\""), std::string::npos) << m;
  }
  TrainArgs longer;
  longer.resume = part.runDir;
  longer.sets = {"shac.iterations=5", "run.checkpoint_every=1"};
  const TrainResult r = runTraining(longer);
  EXPECT_EQ(r.iteration, 5);
  EXPECT_TRUE(fs::exists(fs::path(r.runDir) / "model_3.pt"));
  EXPECT_EQ(loadTrainConfig((fs::path(r.runDir) / "config.yaml").string()).shac.iterations, 5);
  TrainArgs nowhere;
  nowhere.resume = (s.dir / "missing").string();
  EXPECT_THROW(runTraining(nowhere), std::runtime_error);
}

// init_from: a new run (own folder, iterations from 0, its own config) whose networks start from
// another run's last checkpoint; bad sources are errors that name init_from.
TEST(Trainer, WarmStartFromAnotherRun) {
  Scratch s("diffloco_warm_start");
  const std::string cfg = s.config(kShac);
  const TrainResult base = runTraining(args(cfg, s.dir / "base"));
  TrainArgs warm = args(cfg, s.dir / "warm");
  // The warm run changes the problem (contact model) and an initialisation setting that the
  // checkpoint overrides: a fresh actor would start at std 0.2, the loaded one is near 0.5.
  warm.sets.insert(warm.sets.end(), {"init_from=" + base.runDir, "shac.iterations=2",
                                     "task.sim.contact=hard", "policy.init_std=0.2"});
  const TrainResult r = runTraining(warm);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.iteration, 2);
  EXPECT_NE(r.runDir, base.runDir);
  EXPECT_EQ(loadTrainConfig((fs::path(r.runDir) / "config.yaml").string()).initFrom, base.runDir);
  const Csv csv = readCsv((fs::path(r.runDir) / "metrics.csv").string());
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.rows[0][csv.column("iteration")], 1);
  EXPECT_NEAR(csv.rows[0][csv.column("Policy/mean_std")], 0.5, 0.05);

  auto expectError = [&](const std::string& from, const std::vector<std::string>& parts) {
    TrainArgs bad = args(cfg, s.dir / "bad");
    bad.sets.push_back("init_from=" + from);
    try {
      runTraining(bad);
      FAIL() << "init_from=" << from << " must fail";
    } catch (const std::runtime_error& e) {
      for (const auto& p : parts)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  expectError((s.dir / "missing").string(), {"init_from", "missing", "no such run folder"});
  expectError(cfg, {"init_from", "config.yaml", "not a valid archive"});
  // Another architecture.
  TrainArgs wide = args(cfg, s.dir / "bad");
  wide.sets.insert(wide.sets.end(), {"init_from=" + base.runDir, "policy.actor_hidden=[32, 8]"});
  try {
    runTraining(wide);
    FAIL() << "another architecture must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another architecture"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("init_from"), std::string::npos) << e.what();
  }
  // Another algorithm.
  const fs::path ppoConfig = s.dir / "ppo.yaml";
  std::ofstream(ppoConfig) << kPpo;
  const TrainResult ppo = runTraining(args(ppoConfig.string(), s.dir / "ppo"));
  expectError(ppo.runDir, {"init_from", "model_4.pt", "'ppo'"});
}

// init_from a policy file: the actor and its normaliser of a run of another algorithm; the critic
// starts fresh and, for ppo.critic_warmup_iterations, is the only network that learns.
TEST(Trainer, WarmStartFromPolicyFile) {
  Scratch s("diffloco_warm_start_policy");
  const TrainResult base = runTraining(args(s.config(kShac), s.dir / "base"));
  const std::string policy = (fs::path(base.runDir) / "policy.pt").string();
  ASSERT_TRUE(fs::exists(policy));
  const fs::path ppoConfig = s.dir / "ppo.yaml";
  std::ofstream(ppoConfig) << kPpo;
  TrainArgs warm = args(ppoConfig.string(), s.dir / "warm");
  warm.sets.insert(warm.sets.end(),
                   {"init_from=" + policy, "policy.layer_norm=true", "policy.squash=tanh",
                    "ppo.iterations=2", "ppo.critic_warmup_iterations=2"});
  const TrainResult r = runTraining(warm);
  ASSERT_TRUE(r.finished);
  const policies::Actor loaded = policies::loadPolicy(policy).actor;
  const auto after = checkpointTensors((fs::path(r.runDir) / "model_2.pt").string());
  int compared = 0;
  for (const auto& p : loaded->named_parameters()) {
    const auto it = after.find("actor." + p.key());
    ASSERT_NE(it, after.end()) << p.key();
    EXPECT_TRUE(torch::equal(it->second, p.value())) << p.key() << " moved during the warm-up";
    ++compared;
  }
  EXPECT_GT(compared, 2);

  // One iteration past the warm-up moves the actor.
  TrainArgs past = warm;
  past.out = (s.dir / "past").string();
  past.sets.back() = "ppo.critic_warmup_iterations=1";
  const TrainResult moved = runTraining(past);
  const auto afterPast = checkpointTensors((fs::path(moved.runDir) / "model_2.pt").string());
  bool anyMoved = false;
  for (const auto& p : loaded->named_parameters())
    anyMoved |= !torch::equal(afterPast.at("actor." + p.key()), p.value());
  EXPECT_TRUE(anyMoved);

  // Settings the parameters' shapes do not show must agree too.
  TrainArgs other = args(ppoConfig.string(), s.dir / "other");
  other.sets.insert(other.sets.end(), {"init_from=" + policy, "policy.layer_norm=true"});
  try {
    runTraining(other);
    FAIL() << "a policy squashed by tanh must not start an unsquashed actor";
  } catch (const std::runtime_error& e) {
    for (const char* part : {"init_from", "policy.pt", "policy.squash tanh", "this run's none"})
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Trainer, StopsAfterRepeatedNonFiniteUpdates) {
  Scratch s("diffloco_trainer_nan");
  TrainArgs a = args(s.config(kShac), s.dir / "runs");
  a.sets.push_back("shac.reward_scale=1e38");  // the float actor loss overflows
  a.sets.push_back("run.max_nan_iterations=3");
  try {
    runTraining(a);
    FAIL() << "the run must stop";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("stopping: 3 iterations in a row with non-finite"), std::string::npos) << m;
    EXPECT_NE(m.find("model_2.pt"), std::string::npos) << m;  // the last checkpoint
  }
}

// run.sim_device: cuda. Where it cannot run (a build without CUDA, no device) the error names the
// config file, the key and why, and no run folder is made; where it can, the run trains as on the
// CPU: the simulator's functions are the same, so the networks after 4 iterations agree with the
// CPU run's to float rounding grown over those iterations.
TEST(Trainer, SimDeviceCudaTrainsAsTheCpuOrSaysWhyNot) {
  Scratch s("diffloco_trainer_sim_device");
  const std::string config = s.config(kShac);
  TrainArgs a = args(config, s.dir / "runs");
  a.sets.push_back("shac.iterations=4");
  TrainArgs onDevice = a;
  onDevice.sets.push_back("run.sim_device=cuda");
  if (const std::string why = diffloco::batch::cudaUnavailable(); !why.empty()) {
    try {
      runTraining(onDevice);
      FAIL() << "run.sim_device: cuda ran without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), config + ": run.sim_device: cuda: " + why);
    }
    EXPECT_FALSE(fs::exists(s.dir / "runs"));
    GTEST_SKIP() << "the error without a device is checked; training on one needs one: " << why;
  }
  const TrainResult cpu = runTraining(a), cuda = runTraining(onDevice);
  const auto x = checkpointTensors((fs::path(cpu.runDir) / "model_4.pt").string());
  const auto y = checkpointTensors((fs::path(cuda.runDir) / "model_4.pt").string());
  ASSERT_EQ(x.size(), y.size());
  for (const auto& [name, t] : x) {
    ASSERT_TRUE(y.count(name)) << name;
    EXPECT_TRUE(torch::allclose(y.at(name), t, 1e-3, 1e-4)) << name;
  }
}
