// runtime/controller: joints mapped by name, the observation built from a RobotState equals the
// environment's, the actuator law equals the exported module's, and the state machine (passive
// -> stand up -> policy -> damping) with its limit checks.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "envs/locomotion_env.h"
#include "export/export.h"
#include "io/atomic_file.h"
#include "runs/run_dir.h"
#include "runtime/controller.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

namespace diffloco::deploy {
namespace {

namespace fs = std::filesystem;
using torch::Tensor;

struct Exported {
  std::string path;
  train::TrainConfig cfg;
};

// Exports an actor with random weights for a config (once per config and process, into a folder
// the process removes when it ends); with historySteps > 0 the task's observations end with
// action_history of that many steps.
const Exported& exported(const std::string& config, int historySteps = 0) {
  static const testing::ScratchDir scratch("diffloco_test_controller");
  static std::map<std::string, Exported> cache;
  const std::string key = config + (historySteps ? "_history" + std::to_string(historySteps) : "");
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const fs::path d = scratch / key;
  fs::remove_all(d);
  fs::create_directories(d);
  Exported e;
  e.cfg = train::loadTrainConfig(configDir() + "/" + config);
  if (historySteps > 0) {
    envs::TermConfig t;
    t.name = "action_history";
    t.def = envs::findTerm(envs::TermKind::Observation, t.name);
    t.params = envs::TermParams({{"steps", {static_cast<double>(historySteps)}}});
    e.cfg.task.observations.push_back(t);
  }
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv env(e.cfg.task, eo);
  torch::manual_seed(3);
  policies::Actor actor(env.numObs(), env.numActions(), e.cfg.policy);
  actor->normalizer()->update(torch::randn({100, env.numObs()}));
  io::writeFileAtomic((d / "config.yaml").string(), train::toYaml(e.cfg));
  policies::savePolicy((d / "policy.pt").string(), actor);
  e.path = (d / "exported.pt").string();
  exportPolicy(d.string(), e.path);
  return cache[key] = e;
}

std::vector<std::string> reversedJoints(const Exported& e) {
  const Robot r = loadRobot(e.cfg.task.robot);
  std::vector<std::string> names;
  for (int j = r.model.nj() - 1; j >= 0; --j) names.push_back(r.model.joints[j].name);
  return names;
}

// The robot state of env 0, joints in reversed order; heights from the env's ground, the height
// scan at the points the controller names (`scan`: the metadata's term, if any).
RobotState stateOf(envs::LocomotionEnv& env, const ObservationTerm* scan = nullptr) {
  const Tensor q = env.q()[0].detach().to(torch::kDouble), v = env.v()[0].detach();
  const int nj = env.numActions();
  RobotState s;
  for (int j = nj - 1; j >= 0; --j) {
    s.jointPos.push_back(q[7 + j].item<double>());
    s.jointVel.push_back(v[6 + j].item<double>());
  }
  for (int k = 0; k < 4; ++k) s.baseQuat[k] = q[3 + k].item<double>();
  // Base linear velocity: world axes in the simulator, base axes in RobotState.
  const double w = s.baseQuat[0], x = s.baseQuat[1], y = s.baseQuat[2], z = s.baseQuat[3];
  const double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  for (int i = 0; i < 3; ++i) {
    s.baseLinVel[i] = 0;
    for (int k = 0; k < 3; ++k) s.baseLinVel[i] += R[k][i] * v[k].item<double>();
    s.baseAngVel[i] = v[3 + i].item<double>();
    s.command[i] = env.commands()[0][i].item<double>();
  }
  const sim::HeightField* ground = env.terrain().field.get();
  const double bx = q[0].item<double>(), by = q[1].item<double>(), bz = q[2].item<double>();
  s.baseHeight = bz - sim::groundHeight(ground, bx, by);
  if (scan)
    for (const auto& p : heightScanPoints(*scan, bx, by, std::atan2(R[1][0], R[0][0])))
      s.heightScan.push_back(bz - sim::groundHeight(ground, p[0], p[1]));
  return s;
}

TEST(Controller, ObservationEqualsTheEnvironmentsWithJointsMappedByName) {
  for (const std::string config : {"walk_quadruped_shac.yaml", "velocity_anymal_shac.yaml",
                                    "velocity_anymal_rough_shac.yaml"}) {
    const Exported& e = exported(config);
    ControllerConfig cc;
    cc.jointNames = reversedJoints(e);
    Controller c(e.path, cc);
    const ObservationTerm* scan = nullptr;
    for (const auto& t : c.metadata().observations)
      if (t.name == "height_scan") scan = &t;
    EXPECT_EQ(c.robotIndex().front(), 11);
    envs::TaskConfig task = e.cfg.task;
    task.freezeRandomization();
    envs::EnvOptions eo;
    eo.numEnvs = 1;
    eo.printSummary = false;
    envs::LocomotionEnv env(task, eo);
    env.reset();
    const Tensor expected = env.observations()[0].to(torch::kDouble);
    const std::vector<float> obs = c.observation(stateOf(env, scan));
    ASSERT_EQ(static_cast<int64_t>(obs.size()), expected.size(0)) << config;
    EXPECT_EQ(scan != nullptr, config == "velocity_anymal_rough_shac.yaml");
    for (size_t i = 0; i < obs.size(); ++i)
      EXPECT_NEAR(obs[i], expected[i].item<double>(), 1e-5) << config << " entry " << i;
  }
}

// The controller's last actions and gait-phase time track the env's over a few decisions of the
// exported policy.
void expectClosedLoopFollowsTheEnvironment(const Exported& e) {
  ControllerConfig cc;
  cc.jointNames = reversedJoints(e);
  Controller c(e.path, cc);
  torch::jit::Module m = torch::jit::load(e.path);
  envs::TaskConfig task = e.cfg.task;
  task.freezeRandomization();
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv env(task, eo);
  env.reset();
  c.startPolicy();
  torch::NoGradGuard noGrad;
  for (int k = 0; k < 6; ++k) {
    const Tensor expected = env.observations()[0].to(torch::kDouble);
    const RobotState s = stateOf(env);
    const std::vector<float> obs = c.observation(s);
    for (size_t i = 0; i < obs.size(); ++i)
      ASSERT_NEAR(obs[i], expected[i].item<double>(), 2e-5) << "decision " << k << " entry " << i;
    c.policyStep(s);
    env.step(m.forward({env.observations()}).toTensor());
  }
  EXPECT_EQ(env.episodeLength()[0].item<int64_t>(), 6);
}

TEST(Controller, ClosedLoopObservationsFollowTheEnvironment) {
  // The velocity task: last_action and gait_phase terms; then with action_history as well.
  expectClosedLoopFollowsTheEnvironment(exported("velocity_anymal_shac.yaml"));
  expectClosedLoopFollowsTheEnvironment(exported("velocity_anymal_shac.yaml", 3));
}

TEST(Controller, ActuatorLawEqualsTheModules) {
  const Exported& e = exported("walk_quadruped_shac.yaml");
  ControllerConfig cc;
  cc.jointNames = reversedJoints(e);
  Controller c(e.path, cc);
  torch::jit::Module m = torch::jit::load(e.path);
  const int nj = 12;
  const Tensor qt = torch::randn({nj}, torch::kDouble), q = torch::randn({nj}, torch::kDouble),
               qd = torch::randn({nj}, torch::kDouble) * 5;
  const Tensor ref = m.run_method("actuator_torque", qt, q, qd).toTensor();
  std::vector<double> T(nj), Q(nj), QD(nj);
  for (int i = 0; i < nj; ++i) {  // robot order = reversed policy order
    T[nj - 1 - i] = qt[i].item<double>();
    Q[nj - 1 - i] = q[i].item<double>();
    QD[nj - 1 - i] = qd[i].item<double>();
  }
  const auto tau = c.actuatorTorque(T, Q, QD);
  for (int i = 0; i < nj; ++i) EXPECT_NEAR(tau[nj - 1 - i], ref[i].item<double>(), 1e-12);
}

TEST(Controller, StateMachineAndLimits) {
  const Exported& e = exported("walk_quadruped_shac.yaml");
  ControllerConfig cc;
  cc.jointNames = reversedJoints(e);
  cc.standUpDuration = 0.5;
  Controller c(e.path, cc);
  const auto& meta = c.metadata();
  RobotState s;
  s.jointPos.assign(12, 0.0);
  s.jointVel.assign(12, 0.0);
  s.baseHeight = 0.5;
  // Passive until started: no torque.
  ControlOutput u = c.tick(s);
  EXPECT_EQ(u.mode, Mode::Passive);
  for (double t : u.torque) EXPECT_EQ(t, 0.0);
  c.start();
  const int standTicks = static_cast<int>(std::lround(0.5 / meta.controlDt));
  for (int k = 0; k < standTicks; ++k) {
    u = c.tick(s);
    EXPECT_EQ(u.mode, Mode::StandUp) << k;
  }
  // The last stand-up target is the default pose (robot order: reversed).
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(u.jointTarget[11 - i], meta.defaultJointPos[i], 1e-12);
  s.jointPos = u.jointTarget;
  u = c.tick(s);
  EXPECT_EQ(u.mode, Mode::Policy);
  for (int i = 0; i < 12; ++i) {
    EXPECT_TRUE(std::isfinite(u.jointTarget[i]));
    EXPECT_LE(std::abs(u.torque[i]), meta.effort[0] + 1e-9);
  }
  // The policy's own action: target = default + scale * clip(forward(obs)).
  {
    Controller c2(e.path, cc);
    const auto a = c2.policyAction(c2.observation(s));
    (void)a;
  }
  // Limits: NaN, joint limit, tilt each drop to damping; reset returns to passive.
  auto expectDamping = [&](RobotState bad, const std::string& why) {
    Controller d(e.path, cc);
    d.start();
    d.tick(s);  // stand up from s
    const ControlOutput o = d.tick(bad);
    EXPECT_EQ(o.mode, Mode::Damping) << why;
    EXPECT_NE(o.fault.find(why), std::string::npos) << o.fault;
    for (int i = 0; i < 12; ++i) {
      if (std::isfinite(bad.jointVel[i])) {
        EXPECT_NEAR(o.torque[i], -cc.dampingKd * bad.jointVel[i], 1e-12);
      }
    }
    EXPECT_EQ(d.tick(s).mode, Mode::Damping);  // sticky
    d.reset();
    EXPECT_EQ(d.tick(s).mode, Mode::Passive);
  };
  RobotState bad = s;
  bad.jointVel[3] = std::nan("");
  expectDamping(bad, "non-finite");
  bad = s;
  bad.jointPos[0] = 10.0;
  expectDamping(bad, "outside its limits");
  bad = s;
  bad.baseQuat = {std::cos(0.6), std::sin(0.6), 0, 0};  // 1.2 rad roll > 1.0
  bad.jointVel.assign(12, 0.3);
  expectDamping(bad, "tilt");
  c.stop();
  EXPECT_EQ(c.tick(s).mode, Mode::Damping);
}

TEST(Controller, RejectsMismatchedJoints) {
  const Exported& e = exported("walk_quadruped_shac.yaml");
  ControllerConfig cc;
  cc.jointNames = reversedJoints(e);
  cc.jointNames[0] = "NOT_A_JOINT";
  try {
    Controller c(e.path, cc);
    ADD_FAILURE();
  } catch (const std::runtime_error& err) {
    EXPECT_NE(std::string(err.what()).find("is not among the robot's joints"), std::string::npos);
  }
  cc.jointNames.pop_back();
  EXPECT_THROW(Controller(e.path, cc), std::runtime_error);
}

}  // namespace
}  // namespace diffloco::deploy
