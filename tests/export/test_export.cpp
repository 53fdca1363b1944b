// export/export: the TorchScript file loads with torch::jit::load, gives the training-time
// actor's actions to 1e-6 on real and random observations, its actuator_torque is the
// simulator's law, its metadata is complete, and a task that takes its actuator from a fitted
// file exports those values. Writes the fixture that tests/export/check_export.py (Python's
// torch.jit.load) compares against.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "envs/locomotion_env.h"
#include "export/export.h"
#include "export/open_policy.h"
#include "export/sha256.h"
#include "ident/actuator_fit.h"
#include "io/atomic_file.h"
#include "robots/robot.h"
#include "runs/run_dir.h"
#include "sim/actuator.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

namespace diffloco::deploy {
namespace {

namespace fs = std::filesystem;
using torch::Tensor;

// A run folder as `diffloco train` leaves it: config.yaml and policy.pt (an actor with random
// weights and normaliser statistics from random observations), in a folder removed with the run.
struct FakeRun {
  testing::ScratchDir scratch{"diffloco_test_export"};
  fs::path dir;
  train::TrainConfig cfg;
  policies::Actor actor{nullptr};
};

FakeRun makeRun(const std::string& name, const std::string& config,
                const std::vector<std::string>& sets) {
  FakeRun r;
  r.dir = r.scratch / name;
  fs::create_directories(r.dir);
  r.cfg = train::loadTrainConfig(configDir() + "/" + config, sets);
  envs::EnvOptions eo;
  eo.numEnvs = 4;
  eo.printSummary = false;
  envs::LocomotionEnv env(r.cfg.task, eo);
  torch::manual_seed(7);
  r.actor = policies::Actor(env.numObs(), env.numActions(), r.cfg.policy);
  r.actor->normalizer()->update(torch::randn({500, env.numObs()}) * 2 + 0.5);
  io::writeFileAtomic((r.dir / "config.yaml").string(), train::toYaml(r.cfg));
  policies::savePolicy((r.dir / "policy.pt").string(), r.actor,
                       {{"git", "0123abc (test)"}, {"task", r.cfg.task.name}});
  return r;
}

// Observations: the env's own after a few random steps, then random ones of a wide spread.
Tensor sampleObservations(const train::TrainConfig& cfg, int64_t numObs) {
  envs::EnvOptions eo;
  eo.numEnvs = 8;
  eo.printSummary = false;
  envs::LocomotionEnv env(cfg.task, eo);
  env.reset();
  std::vector<Tensor> obs{env.observations().clone()};
  for (int k = 0; k < 5; ++k) obs.push_back(env.step(torch::randn({8, env.numActions()})).obs);
  obs.push_back(torch::randn({200, numObs}) * 3);
  return torch::cat(obs).to(torch::kFloat32);
}

void writeMatrix(const fs::path& p, const Tensor& t) {
  const Tensor x = t.to(torch::kDouble).contiguous().reshape({t.size(0), -1});
  std::ofstream out(p);
  out.precision(17);
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t j = 0; j < x.size(1); ++j)
      out << x[i][j].item<double>() << (j + 1 == x.size(1) ? "\n" : ",");
}

TEST(Export, ActionsMatchTheTrainingActorAndPythonFixture) {
  // SHAC walk (tanh squash, LayerNorm) with a speed-torque line so that actuator_torque clips.
  FakeRun run = makeRun("walk", "walk_quadruped_shac.yaml",
                        {"task.actuator.saturation=30", "task.actuator.velocity_limit=8"});
  const fs::path out = run.dir / "exported" / "policy.pt";
  const ExportResult r = exportPolicy(run.dir.string(), out.string());
  ASSERT_TRUE(fs::exists(out));
  ASSERT_TRUE(fs::exists(run.dir / "exported" / "policy.yaml"));
  torch::jit::Module m = torch::jit::load(out.string());

  torch::NoGradGuard noGrad;
  const Tensor obs = sampleObservations(run.cfg, run.actor->numObs());
  const Tensor expected = run.actor->forward(obs);
  const Tensor got = m.forward({obs}).toTensor();
  ASSERT_EQ(got.sizes(), expected.sizes());
  const double err = (got - expected).abs().max().item<double>();
  std::printf(
      "action parity (C++ torch::jit::load): max |a_export - a_actor| = %.3g over %ld x "
      "%ld\n",
      err, (long)got.size(0), (long)got.size(1));
  EXPECT_LE(err, 1e-6);
  // A double observation gives the same float32 action.
  EXPECT_LE((m.forward({obs.to(torch::kDouble)}).toTensor() - expected).abs().max().item<double>(),
            1e-6);

  // actuator_torque: the simulator's law, per joint, in double.
  const auto& meta = r.metadata;
  const int nj = meta.numJoints();
  const int64_t n = 500;
  const Tensor qt = torch::randn({n, nj}, torch::kDouble) * 0.5;
  const Tensor q = torch::randn({n, nj}, torch::kDouble) * 0.5;
  const Tensor qd = torch::randn({n, nj}, torch::kDouble) * 8;
  const Tensor tau = m.run_method("actuator_torque", qt, q, qd).toTensor();
  sim::ActuatorOptions a = run.cfg.task.sim.actuator;
  const Robot robot = loadRobot(run.cfg.task.robot);
  if (a.effort <= 0) a.effort = robot.torqueLimit;
  double tauErr = 0;
  int clipped = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < nj; ++j) {
      const double ref =
          sim::actuatorTorque(a, robot.model.joints[j].effort, qt[i][j].item<double>(),
                              q[i][j].item<double>(), qd[i][j].item<double>());
      tauErr = std::max(tauErr, std::abs(ref - tau[i][j].item<double>()));
      const double pd = a.kp * (qt[i][j].item<double>() - q[i][j].item<double>()) -
                        a.kd * qd[i][j].item<double>();
      clipped += std::abs(pd - ref) > 1e-9;
    }
  EXPECT_LE(tauErr, 1e-12);
  EXPECT_GT(clipped, n * nj / 10);  // the clips are exercised
  // joint_targets: q* = default + scale * clip(a).
  const Tensor act = torch::randn({3, nj}) * 2;
  const Tensor tgt = m.run_method("joint_targets", act).toTensor().to(torch::kDouble);
  for (int j = 0; j < nj; ++j) {
    const double aj = std::clamp(act[1][j].item<double>(), -meta.actionClip, meta.actionClip);
    EXPECT_NEAR(tgt[1][j].item<double>(), meta.defaultJointPos[j] + meta.actionScale * aj, 1e-6);
  }

  // Fixture for the Python check (tests/export/check_export.py).
  if (const char* dir = std::getenv("DIFFLOCO_EXPORT_FIXTURE")) {
    const fs::path d = dir;
    fs::create_directories(d);
    fs::copy_file(out, d / "policy.pt", fs::copy_options::overwrite_existing);
    writeMatrix(d / "obs.csv", obs);
    writeMatrix(d / "actions.csv", expected);
    writeMatrix(d / "act_q_target.csv", qt);
    writeMatrix(d / "act_q.csv", q);
    writeMatrix(d / "act_qd.csv", qd);
    writeMatrix(d / "act_tau.csv", tau);
    std::ofstream(d / "expected_meta.txt") << meta.numObs << "\n" << nj << "\n" << meta.kp << "\n";
  }
}

TEST(Export, ActionsMatchForOtherArchitectures) {
  // rsl_rl-style PPO actor: no LayerNorm, no squash; then relu and tanh without a normaliser.
  const std::vector<std::vector<std::string>> variants{
      {},
      {"policy.activation=relu", "policy.normalize_observations=false"},
      {"policy.activation=tanh", "policy.layer_norm=true", "policy.squash=tanh"},
      {"policy.squash=tanh", "policy.squash_bound=1.5"},
      {"policy.squash=tanh", "policy.squash_bound=[1, 1.5, 2, 1, 1.5, 2, 1, 1.5, 2, 1, 1.5, 2]"}};
  int k = 0;
  for (const auto& sets : variants) {
    FakeRun run = makeRun("ppo" + std::to_string(k++), "walk_quadruped_ppo.yaml", sets);
    const fs::path out = run.dir / "p.pt";
    exportPolicy(run.dir.string(), out.string());
    torch::jit::Module m = torch::jit::load(out.string());
    torch::NoGradGuard noGrad;
    const Tensor obs = torch::randn({64, run.actor->numObs()}) * 3;
    const double err =
        (m.forward({obs}).toTensor() - run.actor->forward(obs)).abs().max().item<double>();
    EXPECT_LE(err, 1e-6) << k;
    // The metadata states the bounds the forward applies (absent: 1).
    const PolicyMetadata meta =
        parsePolicyMetadata(m.attr("metadata_json").toStringRef(), "metadata_json");
    EXPECT_EQ(meta.squashBound, run.actor->config().squashBound) << k;
  }
}

TEST(Export, CommitIsTheOneTheRunStartedFrom) {
  // policy.pt records the checkout when the training ended; git.txt the commit it started from.
  FakeRun run = makeRun("velocity", "velocity_anymal_shac.yaml", {});
  std::ofstream(run.dir / "git.txt") << "commit: 4567def\nstatus:\n?? notes.txt\n";
  const fs::path out = run.dir / "started.pt";
  exportPolicy((run.dir / "policy.pt").string(), out.string());
  torch::jit::Module m = torch::jit::load(out.string());
  const PolicyMetadata meta =
      parsePolicyMetadata(m.attr("metadata_json").toStringRef(), "metadata_json");
  EXPECT_EQ(meta.gitCommit, "4567def");
}

TEST(Export, MetadataIsComplete) {
  // PPO-style velocity task on ANYmal (no squash, commands, a gait phase term).
  FakeRun run = makeRun("velocity", "velocity_anymal_shac.yaml", {});
  const fs::path out = run.dir / "anymal_policy.pt";
  exportPolicy((run.dir / "policy.pt").string(), out.string());
  torch::jit::Module m = torch::jit::load(out.string());
  const std::string json = m.attr("metadata_json").toStringRef();
  const PolicyMetadata meta = parsePolicyMetadata(json, "metadata_json");
  // The YAML beside it carries the same metadata.
  std::ifstream in(run.dir / "anymal_policy.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(toJson(parsePolicyMetadata(yaml, "anymal_policy.yaml")), json);

  const Robot robot = loadRobot("anymal");
  const auto& t = run.cfg.task;
  EXPECT_EQ(meta.format, kMetadataFormat);
  EXPECT_FALSE(meta.difflocoVersion.empty());
  EXPECT_EQ(meta.gitCommit, "0123abc (test)");
  EXPECT_EQ(meta.task, "velocity");
  EXPECT_EQ(meta.robot, "anymal");
  ASSERT_EQ(meta.numJoints(), 12);
  for (int j = 0; j < 12; ++j) {
    EXPECT_EQ(meta.jointNames[j], robot.model.joints[j].name);
    EXPECT_DOUBLE_EQ(meta.defaultJointPos[j], robot.defaultJointPos[j]);
    EXPECT_DOUBLE_EQ(meta.effort[j], 80.0);
    EXPECT_LT(meta.jointLower[j], meta.jointUpper[j]);
  }
  EXPECT_DOUBLE_EQ(meta.actionScale, t.actionScale);
  EXPECT_DOUBLE_EQ(meta.actionClip, t.actionClip);
  EXPECT_EQ(meta.squash, run.cfg.policy.squash);
  ASSERT_EQ(meta.observations.size(), t.observations.size());
  int total = 0;
  for (size_t i = 0; i < t.observations.size(); ++i) {
    EXPECT_EQ(meta.observations[i].name, t.observations[i].name);
    EXPECT_DOUBLE_EQ(meta.observations[i].scale, t.observations[i].scale);
    total += meta.observations[i].size;
  }
  EXPECT_EQ(total, run.actor->numObs());
  EXPECT_EQ(meta.observations.back().name, "gait_phase");
  EXPECT_DOUBLE_EQ(meta.observations.back().params.at("frequency").at(0), 2.0);
  EXPECT_DOUBLE_EQ(meta.controlDt, 0.02);
  EXPECT_DOUBLE_EQ(meta.simDt, 0.005);
  EXPECT_EQ(meta.decimation, 4);
  EXPECT_DOUBLE_EQ(meta.episodeLengthS, 20.0);
  // The embedded task parses back to the same task.
  const envs::TaskConfig back = envs::parseTaskConfig(YAML::Load(meta.taskYaml), "task.yaml");
  EXPECT_EQ(back.observations.size(), t.observations.size());
  EXPECT_EQ(back.rewards.size(), t.rewards.size());
  EXPECT_DOUBLE_EQ(back.sim.actuator.kp, t.sim.actuator.kp);
  EXPECT_DOUBLE_EQ(meta.kp, 85.0);
  EXPECT_DOUBLE_EQ(meta.kd, 0.6);
  EXPECT_DOUBLE_EQ(meta.armature, 0.1);
  EXPECT_TRUE(meta.commandsEnabled);
  EXPECT_EQ(meta.linVelX, (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(meta.angVelZ, (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(meta.contactModel, "smoothed");
  EXPECT_DOUBLE_EQ(meta.kappa, 300.0);
  EXPECT_EQ(meta.solverIterations, 10);
  ASSERT_TRUE(meta.terminationTilt && meta.terminationHeight);
  EXPECT_DOUBLE_EQ(*meta.terminationTilt, 1.0);
  EXPECT_DOUBLE_EQ(*meta.terminationHeight, 0.25);
  // The contract: the robot's URDF as trained, its hash, feet, gravity; definitions of the
  // observations from the term registry; reset, limits as null where there are none; provenance.
  std::ifstream urdf(robot.model.source, std::ios::binary);
  EXPECT_EQ(meta.urdf, std::string((std::istreambuf_iterator<char>(urdf)), {}));
  EXPECT_EQ(meta.urdfSha256, sha256Hex(meta.urdf));
  EXPECT_EQ(meta.baseLink, robot.model.bodies[0].name);
  ASSERT_EQ(meta.feet.size(), 4u);
  EXPECT_EQ(meta.feet[0], robot.model.feet[0].name);
  EXPECT_DOUBLE_EQ(meta.footRadius[0], robot.model.feet[0].radius);
  EXPECT_EQ(meta.gravity, (std::vector<double>{0, 0, -9.81}));
  for (const auto& term : meta.observations) {
    const envs::TermDef* def = envs::findTerm(envs::TermKind::Observation, term.name);
    ASSERT_NE(def, nullptr) << term.name;
    EXPECT_EQ(term.definition.formula, def->definition.formula) << term.name;
    EXPECT_EQ(term.definition.conventions, def->definition.conventions) << term.name;
  }
  EXPECT_FALSE(meta.saturation.has_value());  // the task has no speed-torque line
  EXPECT_DOUBLE_EQ(meta.resetJointPosNoise, t.reset.jointPosNoise);
  EXPECT_DOUBLE_EQ(meta.resetRandomYaw, t.reset.randomYaw);
  EXPECT_EQ(meta.frictionRange.has_value(), t.randomization.friction);
  EXPECT_EQ(meta.seed, run.cfg.seed);
  EXPECT_EQ(meta.iterations, run.cfg.iterations());
  std::ifstream config(run.dir / "config.yaml", std::ios::binary);
  EXPECT_EQ(meta.configSha256,
            sha256Hex(std::string((std::istreambuf_iterator<char>(config)), {})));
  EXPECT_EQ(meta.curriculum.has_value(), !run.cfg.curriculum.commands.trivial() ||
                                             !run.cfg.curriculum.resetNoise.trivial() ||
                                             !run.cfg.curriculum.episodeLength.trivial());
  EXPECT_EQ(m.attr("num_obs").toInt(), run.actor->numObs());
}

TEST(Export, FittedActuatorFileIsWhatTheRunTrainsWithAndExports) {
  const testing::ScratchDir scratch("diffloco_test_export");
  const fs::path d = scratch / "fitted";
  fs::create_directories(d);
  const ident::ActuatorFit fit = ident::fitActuator(ident::synthesizeJointLog(ident::DriveModel{}));
  const std::string yaml = (d / "actuator.yaml").string();
  ident::writeActuatorYaml(yaml, fit);
  // --set task.actuator.file=...: the resolved config (a run's config.yaml) holds the values.
  FakeRun run = makeRun("fitted_run", "velocity_anymal_shac.yaml", {"task.actuator.file=" + yaml});
  EXPECT_DOUBLE_EQ(run.cfg.task.sim.actuator.kp, fit.kp);
  std::ifstream in(run.dir / "config.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.find("file:"), std::string::npos);
  EXPECT_NE(text.find(yaml), std::string::npos);  // actuator.source
  const train::TrainConfig again = train::loadTrainConfig((run.dir / "config.yaml").string());
  EXPECT_DOUBLE_EQ(again.task.sim.actuator.kp, fit.kp);
  EXPECT_DOUBLE_EQ(again.task.sim.actuator.saturation, fit.saturation);
  EXPECT_DOUBLE_EQ(again.task.armature, fit.armature);
  // What an env built from the config simulates with is what export writes.
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv env(again.task, eo);
  const ExportResult r = exportPolicy(run.dir.string(), (run.dir / "p.pt").string());
  EXPECT_DOUBLE_EQ(r.metadata.kp, env.task().sim.actuator.kp);
  EXPECT_DOUBLE_EQ(r.metadata.kd, env.task().sim.actuator.kd);
  EXPECT_DOUBLE_EQ(r.metadata.saturation.value_or(1e10), env.task().sim.actuator.saturation);
  EXPECT_DOUBLE_EQ(r.metadata.velocityLimit.value_or(1e10), env.task().sim.actuator.velocityLimit);
  EXPECT_DOUBLE_EQ(r.metadata.effort[0], std::min(env.task().sim.actuator.effort, 80.0));
  EXPECT_DOUBLE_EQ(r.metadata.armature, env.task().armature);
  EXPECT_EQ(r.metadata.actuatorSource, yaml);
}

TEST(Export, PolicyFileAloneUsesItsTaskYaml) {
  FakeRun run = makeRun("alone", "walk_quadruped_shac.yaml", {});
  // As diffloco train writes it: the resolved task inside the policy file, no config.yaml.
  policies::savePolicy((run.dir / "policy.pt").string(), run.actor,
                       {{"task", "walk"}, {"task_yaml", envs::toYaml(run.cfg.task)}, {"algorithm", "shac"}});
  fs::remove(run.dir / "config.yaml");
  const ExportResult r =
      exportPolicy((run.dir / "policy.pt").string(), (run.dir / "a.pt").string());
  EXPECT_EQ(r.metadata.task, "walk");
  EXPECT_EQ(r.metadata.algorithm, "shac");
  EXPECT_EQ(r.metadata.numObs, run.actor->numObs());
  EXPECT_DOUBLE_EQ(r.metadata.kp, run.cfg.task.sim.actuator.kp);
}

TEST(Export, ErrorsNameWhatIsMissing) {
  const testing::ScratchDir scratch("diffloco_test_export");
  const fs::path d = scratch / "errors";
  fs::create_directories(d);
  try {
    exportPolicy(d.string(), (d / "x.pt").string());
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("policy.pt: not found"), std::string::npos) << e.what();
  }
  // A bad fitted actuator file names itself and the line.
  std::ofstream(d / "bad.yaml") << "kp: 20\nkq: 1\n";
  try {
    train::loadTrainConfig(configDir() + "/walk_quadruped_shac.yaml",
                           {"task.actuator.file=" + (d / "bad.yaml").string()});
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:2: unknown key 'kq'"), std::string::npos)
        << e.what();
  }
}

// openPolicy's one rule (export/open_policy.h), which eval, play and export share: the task the
// file records wins over config.yaml beside it; config.yaml gives how it was trained; a file
// that records no task takes config.yaml's; a checkpoint carries its own config.
TEST(OpenPolicy, TheFilesOwnTaskWinsAndTheConfigGivesTheTraining) {
  FakeRun run = makeRun("precedence", "walk_quadruped_shac.yaml", {"seed=11"});
  const train::TrainConfig variant =
      train::loadTrainConfig(configDir() + "/walk_quadruped_shac.yaml", {"task.actuator.kp=33"});
  ASSERT_NE(run.cfg.task.sim.actuator.kp, 33);
  policies::savePolicy((run.dir / "policy.pt").string(), run.actor,
                       {{"task", "walk"}, {"task_yaml", envs::toYaml(variant.task)}});
  OpenedPolicy p = openPolicy(run.dir.string());
  EXPECT_EQ(p.kind, OpenedPolicy::Kind::kPolicyFile);
  EXPECT_EQ(p.taskYaml, envs::toYaml(variant.task));
  EXPECT_NE(p.taskSource.find("policy.pt (task_yaml)"), std::string::npos) << p.taskSource;
  ASSERT_TRUE(p.config.has_value());
  EXPECT_EQ(p.config->seed, 11);
  const ExportResult r = exportPolicy(run.dir.string(), (run.dir / "e.pt").string());
  EXPECT_DOUBLE_EQ(r.metadata.kp, 33);
  EXPECT_EQ(r.metadata.seed.value_or(0), 11);

  // No task in the file: config.yaml's.
  policies::savePolicy((run.dir / "policy.pt").string(), run.actor, {{"task", "walk"}});
  p = openPolicy((run.dir / "policy.pt").string());
  EXPECT_EQ(p.taskYaml, envs::toYaml(run.cfg.task));
  EXPECT_NE(p.taskSource.find("config.yaml (task)"), std::string::npos) << p.taskSource;
  EXPECT_DOUBLE_EQ(exportPolicy(run.dir.string(), (run.dir / "e.pt").string()).metadata.kp,
                   run.cfg.task.sim.actuator.kp);

  // A checkpoint: its own config, whatever config.yaml says.
  {
    torch::serialize::OutputArchive a;
    a.write("format", c10::IValue(std::string("diffloco-checkpoint-1")));
    a.write("config", c10::IValue(train::toYaml(variant)));
    policies::writeActor(a, run.actor);
    a.save_to((run.dir / "model_5.pt").string());
  }
  p = openPolicy((run.dir / "model_5.pt").string());
  EXPECT_EQ(p.kind, OpenedPolicy::Kind::kCheckpoint);
  EXPECT_DOUBLE_EQ(envs::parseTaskConfig(YAML::Load(p.taskYaml), p.taskSource).sim.actuator.kp, 33);
  const Tensor obs = torch::randn({4, run.actor->numObs()});
  EXPECT_TRUE(p.actor->forward(obs).equal(run.actor->forward(obs)));
  EXPECT_DOUBLE_EQ(
      exportPolicy((run.dir / "model_5.pt").string(), (run.dir / "c.pt").string()).metadata.kp, 33);

  // The exported file: its metadata's task.
  p = openPolicy((run.dir / "c.pt").string());
  EXPECT_EQ(p.kind, OpenedPolicy::Kind::kExported);
  EXPECT_DOUBLE_EQ(envs::parseTaskConfig(YAML::Load(p.taskYaml), p.taskSource).sim.actuator.kp, 33);
}

}  // namespace
}  // namespace diffloco::deploy
