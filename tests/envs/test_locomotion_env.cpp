// The locomotion environments: gradients through whole env steps against finite differences,
// resets (falls, time-outs, simulator failures) with their flags and observations, agreement of
// the two modes, and long randomised episodes without NaN.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <iostream>

#include "envs/locomotion_env.h"

using namespace diffloco;
using namespace diffloco::envs;
using torch::Tensor;

namespace {

const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);

EnvOptions options(int n, bool differentiable = false) {
  EnvOptions o;
  o.numEnvs = n;
  o.threads = 2;
  o.dtype = torch::kDouble;
  o.differentiable = differentiable;
  o.seed = 1;
  o.printSummary = false;
  return o;
}

double relErr(const Tensor& a, const Tensor& b) {
  return (a - b).norm().item<double>() / std::max(1e-300, b.norm().item<double>());
}

// Sum of all rewards of a rollout of actions [T, N, nj] from the same reset state.
Tensor rolloutReturn(LocomotionEnv& env, const Tensor& actions) {
  env.seed(11);
  env.reset();
  Tensor total = torch::zeros({}, kF64);
  for (int64_t t = 0; t < actions.size(0); ++t) {
    const StepResult r = env.step(actions[t]);
    EXPECT_EQ(r.extras.resetIds.numel(), 0) << "an env reset inside the gradient check";
    total = total + r.rewards.sum();
  }
  return total;
}

}  // namespace

// d(sum of rewards over 16 env steps) / d(actions) by autograd through the simulator's VJP, against
// central differences. Randomisation is frozen so that the return is a function of the actions.
class EnvGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(EnvGradient, MatchesFiniteDifferences) {
  TaskConfig task = loadTaskConfig(GetParam());
  task.freezeRandomization();
  LocomotionEnv env(task, options(2, true));
  torch::manual_seed(3);
  const int T = 16;
  const Tensor actions = 0.6 * torch::rand({T, 2, env.numActions()}, kF64) - 0.3;
  const Tensor leaf = actions.clone().requires_grad_();
  const Tensor grad = torch::autograd::grad({rolloutReturn(env, leaf)}, {leaf})[0];

  torch::NoGradGuard noGrad;
  const double h = 1e-6;
  Tensor fd = torch::zeros_like(actions);
  for (int64_t i = 0; i < actions.numel(); ++i) {
    Tensor p = actions.clone(), m = actions.clone();
    p.view(-1)[i] += h;
    m.view(-1)[i] -= h;
    fd.view(-1)[i] = (rolloutReturn(env, p) - rolloutReturn(env, m)) / (2 * h);
  }
  const double err = relErr(grad, fd);
  std::cout << GetParam() << ": |grad| " << grad.norm().item<double>() << ", relative error " << err
            << "\n";
  EXPECT_LT(err, 1e-4);
  EXPECT_EQ(env.link().vjpFailures(), 0);
}

INSTANTIATE_TEST_SUITE_P(Tasks, EnvGradient, ::testing::Values("walk", "velocity", "velocity_rough"));

TEST(LocomotionEnv, ObservationLayoutFollowsThePaper) {
  LocomotionEnv walk(loadTaskConfig("walk"), options(2));
  EXPECT_EQ(walk.numObs(), 49);  // Table 5
  EXPECT_EQ(walk.numActions(), 12);
  EXPECT_EQ(walk.maxEpisodeLength(), 1000);
  LocomotionEnv vel(loadTaskConfig("velocity"), options(2));
  EXPECT_EQ(vel.numObs(), 49);  // Table 8
  const auto layout = vel.observationLayout();
  EXPECT_EQ(layout.front().first, "base_lin_vel");
  EXPECT_EQ(layout.back().first, "gait_phase");
  const std::string s = vel.summary();
  for (const char* name : {"foot_height_tracking", "joint_torque_l2", "base_tilt_above",
                           "friction [0.5, 1.25]", "kappa 300"})
    EXPECT_NE(s.find(name), std::string::npos) << name << "\n" << s;
  EXPECT_EQ(walk.observations().sizes(), (std::vector<int64_t>{2, 49}));
}

TEST(LocomotionEnv, ResetStandsOnTheGround) {
  LocomotionEnv env(loadTaskConfig("walk"), options(8));
  const Tensor z = env.q().select(1, 2);
  EXPECT_GT(z.min().item<double>(), 0.35);
  EXPECT_LT(z.max().item<double>(), 0.55);
  // The lowest foot touches z = 0 (foot_clearance 0).
  const Tensor feet = footPositions(env.link(), env.q()).select(2, 2) - 0.02;
  EXPECT_LT(std::get<0>(feet.min(1)).abs().max().item<double>(), 1e-12);
}

// curriculum.rewards sets a term's weight between iterations: the reward scales with it, a graph
// recorded before keeps the weight it ran with, and an unknown term is an error naming it.
TEST(LocomotionEnv, RewardWeightsCanBeChanged) {
  LocomotionEnv a(loadTaskConfig("walk"), options(4, true));
  LocomotionEnv b(loadTaskConfig("walk"), options(4, true));
  EXPECT_EQ(a.rewardWeight("forward_velocity"), 1.0);
  for (const auto& name : a.rewardNames()) {
    a.setRewardWeight(name, name == "forward_velocity" ? 1.0 : 0.0);
    b.setRewardWeight(name, name == "forward_velocity" ? 2.5 : 0.0);
  }
  EXPECT_EQ(b.rewardWeight("forward_velocity"), 2.5);
  const Tensor act = (torch::rand({4, 12}, kF64) - 0.5).requires_grad_(true);
  const Tensor ra = a.step(act).rewards, rb = b.step(act).rewards;
  EXPECT_GT(ra.abs().min().item<double>(), 0);
  EXPECT_TRUE(torch::equal(rb, 2.5 * ra));
  b.setRewardWeight("forward_velocity", 0.0);  // after the step: its graph is not touched
  rb.sum().backward();
  EXPECT_GT(act.grad().abs().max().item<double>(), 0);
  try {
    a.setRewardWeight("forward_velocty", 1.0);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("reward term 'forward_velocty' is not among the task's "
                                         "rewards (did you mean 'forward_velocity'?"),
              std::string::npos)
        << e.what();
  }
}

TEST(LocomotionEnv, ModesAgree) {
  TaskConfig task = loadTaskConfig("velocity");
  LocomotionEnv a(task, options(3, false)), b(task, options(3, true));
  torch::manual_seed(4);
  for (int t = 0; t < 30; ++t) {
    const Tensor act = torch::rand({3, 12}, kF64) - 0.5;
    const StepResult ra = a.step(act), rb = b.step(act);
    ASSERT_LT((ra.obs - rb.obs.detach()).abs().max().item<double>(), 1e-12) << t;
    ASSERT_LT((ra.rewards - rb.rewards.detach()).abs().max().item<double>(), 1e-12) << t;
  }
  EXPECT_TRUE(b.q().requires_grad() == false);  // actions did not require grad
}

TEST(LocomotionEnv, FallTerminatesAndResets) {
  for (bool diff : {false, true}) {
    LocomotionEnv env(loadTaskConfig("walk"), options(2, diff));
    Tensor q = env.q().detach().clone(), v = torch::zeros({2, 18}, kF64);
    // Env 0 upside down at 0.1 m: below the 0.25 m limit, its feet in the air.
    q[0][2] = 0.1;
    q[0].narrow(0, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64));
    env.setState(q, v);
    const Tensor actions = torch::full({2, 12}, 0.2, kF64).requires_grad_(diff);
    const StepResult r = env.step(actions);
    EXPECT_TRUE(r.terminated[0].item<bool>());
    EXPECT_FALSE(r.truncated[0].item<bool>());
    EXPECT_FALSE(r.terminated[1].item<bool>());
    ASSERT_EQ(r.extras.resetIds.numel(), 1);
    EXPECT_EQ(r.extras.resetIds[0].item<int64_t>(), 0);
    // Terminal observation: the fallen state (base_height is observation 0); next: a fresh stand.
    EXPECT_LT(r.extras.terminalObs[0][0].item<double>(), 0.1);
    EXPECT_GT(r.obs[0][0].item<double>(), 0.35);
    EXPECT_TRUE(torch::equal(r.obs[1], r.extras.terminalObs[1]));
    EXPECT_TRUE(torch::equal(r.obs, env.observations()));
    EXPECT_EQ(env.episodeLength()[0].item<int64_t>(), 0);
    EXPECT_EQ(env.episodeLength()[1].item<int64_t>(), 1);
    EXPECT_EQ(env.q()[0][2].item<double>(), r.obs[0][0].item<double>());
    EXPECT_EQ(r.extras.log.at("Episode/count"), 1);
    if (diff) {
      // The terminal observation keeps its history through the simulator to the actions; the
      // observation after the reset has none.
      ASSERT_TRUE(r.extras.terminalObs.requires_grad());
      const Tensor g =
          torch::autograd::grad({r.extras.terminalObs[0].sum()}, {actions}, {}, true)[0];
      EXPECT_TRUE(torch::isfinite(g).all().item<bool>());
      EXPECT_GT(g[0].abs().sum().item<double>(), 0);
      EXPECT_EQ(g[1].abs().sum().item<double>(), 0);
      const Tensor g2 = torch::autograd::grad({r.obs[0].sum()}, {actions}, {}, true)[0];
      EXPECT_EQ(g2.abs().sum().item<double>(), 0);
      env.detach();
      EXPECT_FALSE(env.q().requires_grad());
      EXPECT_FALSE(env.observations().requires_grad());
    }
  }
}

TEST(LocomotionEnv, TimeOutTruncates) {
  TaskConfig task = loadTaskConfig("walk");
  task.episodeLengthS = 0.05;  // 5 env steps
  LocomotionEnv env(task, options(2));
  const Tensor zero = torch::zeros({2, 12}, kF64);
  for (int t = 1; t <= 4; ++t) {
    const StepResult r = env.step(zero);
    EXPECT_EQ(r.extras.resetIds.numel(), 0);
    EXPECT_FALSE(r.truncated.any().item<bool>());
  }
  const Tensor before = env.q().clone();
  const StepResult r = env.step(zero);
  EXPECT_TRUE(r.truncated.all().item<bool>());
  EXPECT_FALSE(r.terminated.any().item<bool>());
  EXPECT_EQ(r.extras.resetIds.numel(), 2);
  EXPECT_NEAR(r.extras.log.at("Episode/length_s"), 0.05, 1e-12);
  EXPECT_EQ(r.extras.log.count("Episode/rew_forward_velocity"), 1u);
  EXPECT_TRUE(torch::equal(env.episodeLength(), torch::zeros({2}, torch::kLong)));
  // Terminal observations continue the episode; the next ones start a new one.
  EXPECT_GT((r.extras.terminalObs - r.obs).abs().max().item<double>(), 1e-3);
  EXPECT_LT(std::abs(r.extras.terminalObs[0][0].item<double>() - before[0][2].item<double>()),
            0.05);
  env.step(zero);
  EXPECT_TRUE(torch::equal(env.episodeLength(), torch::ones({2}, torch::kLong)));
}

TEST(LocomotionEnv, SimulationFailureResetsTheWorld) {
  for (bool diff : {false, true}) {
    LocomotionEnv env(loadTaskConfig("walk"), options(2, diff));
    Tensor v = torch::zeros({2, 18}, kF64);
    v[0][7] = std::numeric_limits<double>::quiet_NaN();
    env.setState(env.q().detach(), v);
    const StepResult r = env.step(torch::zeros({2, 12}, kF64));
    EXPECT_EQ(r.extras.log.at("Env/sim_failures"), 1);
    EXPECT_TRUE(r.terminated[0].item<bool>());
    EXPECT_FALSE(r.terminated[1].item<bool>());
    EXPECT_TRUE(torch::isfinite(r.obs).all().item<bool>());
    EXPECT_TRUE(torch::isfinite(env.v()).all().item<bool>());
    const StepResult next = env.step(torch::zeros({2, 12}, kF64));
    EXPECT_EQ(next.extras.log.at("Env/sim_failures"), 0);
  }
}

TEST(LocomotionEnv, RandomisationStaysInItsRanges) {
  LocomotionEnv env(loadTaskConfig("velocity"), options(64));
  const Tensor mu = env.link().friction(), dm = env.link().addedMass();
  EXPECT_GE(mu.min().item<double>(), 0.5);
  EXPECT_LE(mu.max().item<double>(), 1.25);
  EXPECT_GT(mu.std().item<double>(), 0.1);
  ASSERT_TRUE(dm.defined());
  EXPECT_GE(dm.min().item<double>(), -5);
  EXPECT_LE(dm.max().item<double>(), 5);
  EXPECT_EQ(env.link().batch().friction(7), mu[7].item<double>());
  const Tensor c = env.commands();
  EXPECT_LE(c.abs().max().item<double>(), 1.0);
  EXPECT_GT(c.std().item<double>(), 0.3);
  // Observation noise: two envs in the same state observe differently.
  Tensor q = env.q().clone();
  q.copy_(q[0].expand_as(q));
  env.setState(q, torch::zeros({64, 18}, kF64));
  const Tensor obs = env.observations();
  EXPECT_GT((obs[0] - obs[1]).abs().max().item<double>(), 1e-3);
}

// Curriculum factors (train/curriculum.h): commands drawn from the scaled ranges, reset noise
// scaled (0: the default pose at rest), episodes truncated at the scaled length.
TEST(LocomotionEnv, CurriculumScalesCommandsResetNoiseAndEpisodeLength) {
  LocomotionEnv env(loadTaskConfig("velocity"), options(256));
  EXPECT_GT(env.commands().abs().max().item<double>(), 0.9);  // the task's +-1
  env.setCommandScale(0.25);
  env.setResetNoiseScale(0);
  env.reset();
  const Tensor c = env.commands();
  EXPECT_LE(c.abs().max().item<double>(), 0.25);
  EXPECT_GT(c.abs().max().item<double>(), 0.2);
  // No noise: every env starts in the same pose (no yaw, no velocity), the default joint angles.
  const Tensor q = env.q(), v = env.v();
  EXPECT_LT((q.slice(1, 2) - q[0].slice(0, 2)).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(v.abs().max().item<double>(), 0);
  env.setResetNoiseScale(2);
  env.reset();
  const double yawSpread = env.q().select(1, 6).abs().max().item<double>();  // quaternion z
  EXPECT_GT(yawSpread, 0.5);
  EXPECT_THROW(env.setCommandScale(-1), std::invalid_argument);
  EXPECT_THROW(env.setResetNoiseScale(std::nan("")), std::invalid_argument);

  TaskConfig walk = loadTaskConfig("walk");
  walk.episodeLengthS = 0.1;  // 10 env steps
  LocomotionEnv short_(walk, options(2));
  short_.setEpisodeLengthScale(0.3);  // 3 env steps
  EXPECT_EQ(short_.maxEpisodeLength(), 3);
  const Tensor zero = torch::zeros({2, 12}, kF64);
  short_.step(zero);
  short_.step(zero);
  EXPECT_TRUE(short_.step(zero).truncated.all().item<bool>());
  short_.setEpisodeLengthScale(0);  // at least one env step
  EXPECT_EQ(short_.maxEpisodeLength(), 1);
}

// The resampling factor: commands change every scale x resample_s, not every resample_s.
TEST(LocomotionEnv, CurriculumScalesCommandResampling) {
  TaskConfig task = loadTaskConfig("velocity");
  task.commands.resampleS = 0.2;  // 10 env steps
  task.randomization.pushes = false;
  auto stepsBetweenChanges = [&](double scale) {
    LocomotionEnv env(task, options(2));
    env.setCommandResampleScale(scale);
    const Tensor zero = torch::zeros({2, 12}, kF64);
    std::vector<int> changes;
    Tensor before = env.commands().clone();
    for (int t = 1; t <= 12 && changes.size() < 2; ++t) {
      env.step(zero);
      if (!torch::equal(env.commands(), before)) changes.push_back(t);
      before = env.commands().clone();
    }
    return changes.empty() ? -1 : changes.front();
  };
  EXPECT_EQ(stepsBetweenChanges(1.0), 10);
  EXPECT_EQ(stepsBetweenChanges(0.3), 3);
  EXPECT_EQ(stepsBetweenChanges(0), 1);  // at least one env step
  LocomotionEnv env(task, options(2));
  EXPECT_THROW(env.setCommandResampleScale(-0.1), std::invalid_argument);
}

// legged_gym's heading command: the yaw-rate command is gain * (heading - yaw), wrapped and
// clipped, recomputed from the base's yaw every step; a held heading turns the robot onto it.
TEST(LocomotionEnv, HeadingCommandSteersToTheHeading) {
  TaskConfig task = loadTaskConfig("velocity");
  task.randomization.pushes = false;
  task.commands.standingFraction = 0;
  task.commands.headingEnabled = true;
  task.commands.heading = {-3.0, 3.0};
  task.commands.headingGain = 0.5;
  task.commands.angVelZ = {-0.4, 0.6};
  LocomotionEnv env(task, options(6));
  const Tensor zero = torch::zeros({6, 12}, kF64);
  for (int t = 0; t < 5; ++t) {
    env.step(zero);
    const Tensor q = env.q().detach(), cmd = env.commands();
    const Tensor heading = env.stateDict().at("heading");
    for (int e = 0; e < 6; ++e) {
      const double w = q[e][3].item<double>(), x = q[e][4].item<double>();
      const double y = q[e][5].item<double>(), z = q[e][6].item<double>();
      const double yaw = std::atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
      double error = heading[e].item<double>() - yaw;
      while (error > M_PI) error -= 2 * M_PI;
      while (error < -M_PI) error += 2 * M_PI;
      EXPECT_NEAR(cmd[e][2].item<double>(), std::clamp(0.5 * error, -0.4, 0.6), 1e-12) << e;
    }
  }
  // The headings are drawn from their range and differ between envs.
  const Tensor heading = env.stateDict().at("heading");
  EXPECT_LE(heading.abs().max().item<double>(), 3.0);
  EXPECT_GT(heading.max().item<double>() - heading.min().item<double>(), 0.5);
  // A restored env carries its headings.
  LocomotionEnv b(task, options(6));
  b.loadStateDict(env.stateDict());
  EXPECT_TRUE(torch::equal(b.step(zero).obs, env.step(zero).obs));
  // A standing command stays zero: no yaw rate.
  task.commands.standingFraction = 1;
  LocomotionEnv standing(task, options(3));
  standing.step(torch::zeros({3, 12}, kF64));
  EXPECT_TRUE(torch::equal(standing.commands(), torch::zeros({3, 3}, kF64)));
}

// A restored env continues exactly as the original (randomisation, pushes and noise included).
TEST(LocomotionEnv, StateDictResumesExactly) {
  TaskConfig task = loadTaskConfig("velocity");
  task.randomization.pushIntervalS = {0.1, 0.3};  // pushes inside the window
  task.commands.resampleS = 0.2;
  LocomotionEnv a(task, options(4));
  torch::manual_seed(8);
  for (int t = 0; t < 20; ++t) a.step(torch::rand({4, 12}, kF64) - 0.5);
  EnvOptions o = options(4);
  o.seed = 99;
  LocomotionEnv b(task, o);
  b.loadStateDict(a.stateDict());
  EXPECT_TRUE(torch::equal(a.observations(), b.observations()));
  for (int t = 0; t < 60; ++t) {
    const Tensor act = torch::rand({4, 12}, kF64) - 0.5;
    const StepResult ra = a.step(act), rb = b.step(act);
    ASSERT_TRUE(torch::equal(ra.obs, rb.obs)) << t;
    ASSERT_TRUE(torch::equal(ra.rewards, rb.rewards)) << t;
  }
  auto s = a.stateDict();
  s.erase("push_at");
  EXPECT_THROW(b.loadStateDict(s), std::runtime_error);
  s = a.stateDict();
  s["q"] = torch::zeros({3, 19}, kF64);
  EXPECT_THROW(b.loadStateDict(s), std::runtime_error);
}

// Random streams are per env: envs [4, 8) of a batch of 8 are the envs of a batch of 4 whose
// first env is 4 (a second rank of a distributed run), whatever resets, pushes, command changes
// and observation noise the other envs draw.
TEST(LocomotionEnv, EnvDrawsDoNotDependOnTheBatchSplit) {
  TaskConfig task = loadTaskConfig("velocity");
  task.randomization.pushIntervalS = {0.1, 0.3};
  task.commands.resampleS = 0.2;
  task.episodeLengthS = 0.5;  // resets inside the window
  LocomotionEnv whole(task, options(8));
  EnvOptions o = options(4);
  o.firstEnv = 4;
  LocomotionEnv half(task, o);
  EXPECT_TRUE(torch::equal(whole.observations().narrow(0, 4, 4), half.observations()));
  torch::manual_seed(5);
  int resets = 0;
  for (int t = 0; t < 60; ++t) {
    if (t % 20 == 0) {  // the trainer's reseeding every iteration
      whole.seed(100 + t);
      half.seed(100 + t);
    }
    const Tensor a = torch::rand({8, 12}, kF64) - 0.5;
    const StepResult rw = whole.step(a), rh = half.step(a.narrow(0, 4, 4));
    ASSERT_TRUE(torch::allclose(rw.obs.narrow(0, 4, 4), rh.obs, 1e-12, 1e-12)) << t;
    ASSERT_TRUE(torch::allclose(rw.rewards.narrow(0, 4, 4), rh.rewards, 1e-12, 1e-12)) << t;
    resets += rw.extras.resetIds.numel();
  }
  EXPECT_GT(resets, 8);
  // A different split of the world draws differently for the same local index.
  LocomotionEnv first(task, options(4));
  EXPECT_FALSE(torch::equal(first.commands(), half.commands()));
}

// Long randomised episodes (all randomisation on) stay finite: random actions and a default-pose
// hold, 10 000 env steps each, few envs.
class LongEpisode : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(LongEpisode, StaysFinite) {
  const auto& [name, random] = GetParam();
  const int n = 3;
  EnvOptions o = options(n);
  o.dtype = torch::kFloat32;
  LocomotionEnv env(loadTaskConfig(name), o);
  torch::manual_seed(6);
  double failures = 0, episodes = 0, falls = 0;
  bool finite = true;
  for (int t = 0; t < 10000 && finite; ++t) {
    const Tensor a = random ? 2 * torch::rand({n, 12}) - 1 : torch::zeros({n, 12});
    const StepResult r = env.step(a);
    finite =
        torch::isfinite(r.obs).all().item<bool>() && torch::isfinite(r.rewards).all().item<bool>();
    ASSERT_TRUE(finite) << "step " << t;
    failures += r.extras.log.at("Env/sim_failures");
    episodes += r.extras.resetIds.numel();
    falls += r.terminated.sum().item<double>();
  }
  std::cout << name << (random ? " random" : " hold") << ": " << episodes << " episodes, " << falls
            << " terminations, " << failures << " simulator failures\n";
  // Falls are allowed: holding the default pose is not a balance controller (the quadruped's
  // knees buckle after about 4.5 s at PD 20/1, with hard contact as well).
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(Tasks, LongEpisode,
                         ::testing::Combine(::testing::Values("walk", "velocity"),
                                            ::testing::Bool()));

// The differentiable mode runs the stages' VJP, whose tape holds at most 20 Gauss-Seidel sweeps
// and 32 soft sub-steps: more is an error naming the task and the key; the sampling mode steps
// them.
TEST(LocomotionEnv, DifferentiableModeRefusesSweepsItsVjpDoesNotHold) {
  TaskConfig task = loadTaskConfig("walk");
  task.freezeRandomization();
  task.sim.contact.iterations = 21;
  try {
    LocomotionEnv env(task, options(2, true));
    ADD_FAILURE() << "no error for 21 sweeps in the differentiable mode";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "sim.iterations: 21 is more than the differentiable mode's VJP holds (at most 20)"),
        std::string::npos)
        << e.what();
  }
  LocomotionEnv sampling(task, options(2, false));
  sampling.reset();
  sampling.step(torch::zeros({2, sampling.numActions()}, kF64));
  task.sim.contact.iterations = 10;
  task.sim.contact.model = sim::ContactModel::Soft;
  task.sim.contact.softSubsteps = 33;
  try {
    LocomotionEnv env(task, options(2, true));
    ADD_FAILURE() << "no error for 33 soft sub-steps in the differentiable mode";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sim.soft_substeps: 33 is more than"), std::string::npos)
        << e.what();
  }
}

// On terrain every env spawns at the centre of its tile, its lowest foot on the ground under it,
// and the base height the terms read is measured from that ground (on top of a pyramid as on
// flat ground).
TEST(LocomotionEnv, TerrainSpawnsOnTileCentresAboveTheGround) {
  TaskConfig task = loadTaskConfig("velocity_rough");
  task.reset.basePosNoise = 0;
  LocomotionEnv env(task, options(20));
  const Terrain& t = env.terrain();
  ASSERT_TRUE(t.field);
  const Tensor q = env.q(), feet = footPositions(env.link(), q);
  for (int i = 0; i < 20; ++i) {
    const int level = static_cast<int>(env.terrainLevels()[i].item<std::int64_t>());
    const int column = static_cast<int>(env.terrainColumns()[i].item<std::int64_t>());
    EXPECT_EQ(column, i % 20);
    EXPECT_LE(level, 3);  // max_init_level
    EXPECT_NEAR(q[i][0].item<double>(), t.centreX(level), 1e-12);
    EXPECT_NEAR(q[i][1].item<double>(), t.centreY(column), 1e-12);
    double lowest = 1e9;
    for (int f = 0; f < 4; ++f) {
      const double x = feet[i][f][0].item<double>(), y = feet[i][f][1].item<double>();
      lowest = std::min(lowest, feet[i][f][2].item<double>() - env.robot().model.feet[f].radius -
                                    sim::groundHeight(t.field.get(), x, y));
    }
    EXPECT_NEAR(lowest, 0.0, 1e-12) << "env " << i;
    const double ground = sim::groundHeight(t.field.get(), q[i][0].item<double>(), q[i][1].item<double>());
    EXPECT_GT(q[i][2].item<double>() - ground, 0.45) << "env " << i;
    EXPECT_LT(q[i][2].item<double>() - ground, 0.7) << "env " << i;
  }
  EXPECT_NE(env.summary().find("terrain: 10 levels x 20 tiles of 8 m"), std::string::npos)
      << env.summary();
}

// A stair tread narrower than the robot's foot is an error naming the task file and the key.
TEST(LocomotionEnv, TreadNarrowerThanAFootIsAnErrorNamingTheKey) {
  TaskConfig task = loadTaskConfig("velocity_rough");
  for (auto& t : task.terrain.types)
    if (t.name == "pyramid_stairs") t.run = 0.04;
  try {
    LocomotionEnv env(task, options(1));
    FAIL() << "a 4 cm tread was accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("velocity_rough.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("terrain.types.pyramid_stairs.run"), std::string::npos) << m;
    EXPECT_NE(m.find("narrower than the robot's foot"), std::string::npos) << m;
  }
  for (auto& t : task.terrain.types)
    if (t.name == "pyramid_stairs") t.run = 0.2;
  EXPECT_NO_THROW(LocomotionEnv(task, options(1)));
}

// legged_gym's rule at an episode's end: farther than half a tile from the start -> up a level;
// less than half the commanded distance -> down a level; the curriculum's mean level is logged.
TEST(LocomotionEnv, TerrainCurriculumPromotesAndDemotes) {
  TaskConfig task = loadTaskConfig("velocity_rough");
  task.terrain.curriculum.maxInitLevel = 5;
  LocomotionEnv env(task, options(3));
  const Tensor level0 = env.terrainLevels().clone();
  Tensor q = env.q().clone(), v = env.v().clone();
  // Every env ends its episode upside down (the tilt termination). Env 0 walked 5 m: promoted.
  // Env 1 stood still with a command of 1 m/s: demoted. Env 2 made 3 m of a 0.5 m/s command
  // (10 m over the episode): demoted.
  q[0][0] += 5.0;
  q[2][0] += 3.0;
  q.narrow(1, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64).expand({3, 4}));
  env.setState(q, v);
  env.setCommands(torch::tensor({{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.5, 0.0, 0.0}}, kF64));
  // One more step (with zero actions), after which every env is still upside down.
  const StepResult r = env.step(torch::zeros({3, 12}, kF64));
  ASSERT_EQ(r.extras.resetIds.numel(), 3);
  const Tensor level1 = env.terrainLevels();
  EXPECT_EQ(level1[0].item<std::int64_t>(), level0[0].item<std::int64_t>() + 1);
  EXPECT_EQ(level1[1].item<std::int64_t>(), std::max<std::int64_t>(0, level0[1].item<std::int64_t>() - 1));
  EXPECT_EQ(level1[2].item<std::int64_t>(), std::max<std::int64_t>(0, level0[2].item<std::int64_t>() - 1));
  EXPECT_NEAR(r.extras.log.at("Curriculum/terrain_level"),
              level1.to(torch::kDouble).mean().item<double>(), 1e-12);
  // Per sub-terrain type: the mean over the envs on its columns.
  std::map<std::string, std::pair<double, int>> byType;
  for (int i = 0; i < 3; ++i) {
    auto& s = byType[env.terrain().columnType[env.terrainColumns()[i].item<std::int64_t>()]];
    s.first += static_cast<double>(level1[i].item<std::int64_t>());
    s.second += 1;
  }
  for (const auto& [type, s] : byType)
    EXPECT_EQ(r.extras.log.at("Curriculum/terrain_level_" + type), s.first / s.second) << type;
  // New episodes start at their new tiles.
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(env.q()[i][0].item<double>(),
                env.terrain().centreX(static_cast<int>(level1[i].item<std::int64_t>())), 0.51);
  // Demotion from above level 0 (the first episodes may have started on it): every env walks
  // 5 m (promoted), then stands still with a command of 1 m/s (demoted back).
  const Tensor before = level1.clone();  // terrainLevels() is the env's own tensor
  auto endEpisodes = [&](double walked, double command) {
    Tensor qe = env.q().clone();
    qe.select(1, 0) += walked;
    qe.narrow(1, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64).expand({3, 4}));
    env.setState(qe, env.v().clone());
    env.setCommands(torch::tensor({{command, 0.0, 0.0}}, kF64).expand({3, 3}).clone());
    ASSERT_EQ(env.step(torch::zeros({3, 12}, kF64)).extras.resetIds.numel(), 3);
  };
  endEpisodes(5.0, 0.0);
  const Tensor level2 = env.terrainLevels().clone();
  endEpisodes(0.0, 1.0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(level2[i].item<std::int64_t>(), before[i].item<std::int64_t>() + 1) << i;
    EXPECT_EQ(env.terrainLevels()[i].item<std::int64_t>(), before[i].item<std::int64_t>()) << i;
  }
}

// past_last: an env promoted past the last level goes to a random level (legged_gym's rule, the
// default) or, with "stay", stays on the last level; every other promoted env moves up one.
TEST(LocomotionEnv, TerrainCurriculumPastTheLastLevel) {
  for (const std::string rule : {"random", "stay"}) {
    TaskConfig task = loadTaskConfig("velocity_rough");
    task.terrain.curriculum.maxInitLevel = 9;
    task.terrain.curriculum.pastLast = rule;
    const int n = 24;
    LocomotionEnv env(task, options(n));
    const Tensor level0 = env.terrainLevels().clone();
    // Every env walked 5 m (promoted) and ends its episode upside down.
    Tensor q = env.q().clone();
    q.select(1, 0) += 5.0;
    q.narrow(1, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64).expand({n, 4}));
    env.setState(q, env.v().clone());
    env.setCommands(torch::zeros({n, 3}, kF64));
    ASSERT_EQ(env.step(torch::zeros({n, 12}, kF64)).extras.resetIds.numel(), n) << rule;
    const Tensor level1 = env.terrainLevels();
    int atTop = 0, leftTop = 0;
    for (int i = 0; i < n; ++i) {
      const std::int64_t before = level0[i].item<std::int64_t>(),
                         after = level1[i].item<std::int64_t>();
      if (before < 9) {
        EXPECT_EQ(after, before + 1) << rule << " env " << i;
        continue;
      }
      ++atTop;
      if (rule == "stay") {
        EXPECT_EQ(after, 9) << "env " << i;
      }
      leftTop += after != 9;
    }
    ASSERT_GE(atTop, 3) << rule
                        << ": too few envs started on the last level to tell the rules apart";
    if (rule == "random") {
      EXPECT_GT(leftTop, 0);
    }
  }
}

// promote_through: face counts a promotion past promote x tile_size along the tile's x or y
// within 22.5 degrees of it; anywhere (legged_gym's) counts any direction. Envs carried from
// the tile's centre to (5, 0), (5, 1.5) (16.7 degrees), (3.5, 3.5) (45 degrees, 4.9 m from the
// centre) and (-0.5, -4.5) end their episodes upside down, standing commands (none demoted).
TEST(LocomotionEnv, TerrainCurriculumPromotionThroughAFace) {
  const double dx[] = {5.0, 5.0, 3.5, -0.5}, dy[] = {0.0, 1.5, 3.5, -4.5};
  for (const std::string rule : {"anywhere", "face"}) {
    TaskConfig task = loadTaskConfig("velocity_rough");
    task.terrain.curriculum.maxInitLevel = 0;
    task.terrain.curriculum.promoteThrough = rule;
    task.reset.basePosNoise = 0;  // every env spawned at its tile's centre
    ASSERT_EQ(task.terrain.tileSize * task.terrain.curriculum.promote, 4.0);
    const int n = 4;
    LocomotionEnv env(task, options(n));
    Tensor q = env.q().clone();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(env.terrainLevels()[i].item<std::int64_t>(), 0);
      q[i][0] += dx[i], q[i][1] += dy[i];
    }
    q.narrow(1, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64).expand({n, 4}));
    env.setState(q, env.v().clone());
    env.setCommands(torch::zeros({n, 3}, kF64));
    ASSERT_EQ(env.step(torch::zeros({n, 12}, kF64)).extras.resetIds.numel(), n) << rule;
    const std::int64_t expected[2][4] = {{1, 1, 1, 1}, {1, 1, 0, 1}};
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(env.terrainLevels()[i].item<std::int64_t>(), expected[rule == "face"][i])
          << rule << " env " << i;
  }
}

// demote_against: commanded_path. The commanded distance is what a perfect tracker would have
// covered (the commands integrated along the base's heading), and a fall moves down. Six-step
// episodes: env 0 stands while its command reverses halfway (a perfect tracker ends where it
// started: stays, where legged_gym's final command x length demotes it); env 1 stands under a
// steady 1 m/s (demoted by both rules); env 2 is carried 5 m and falls at step 4 (promoted by
// legged_gym's rule, demoted here); env 3 faces +y and is carried along its command (stays).
// demote_against: fall moves down env 2 alone.
TEST(LocomotionEnv, TerrainCurriculumAlongTheCommandedPath) {
  for (const std::string rule : {"final_command", "commanded_path", "fall"}) {
    TaskConfig task = loadTaskConfig("velocity_rough");
    task.terrain.curriculum.maxInitLevel = 8;  // a promotion from 9 would draw a random level
    task.terrain.curriculum.demoteAgainst = rule;
    task.episodeLengthS = 6 * task.envDt;
    task.reset.basePosNoise = 0;  // distances count from the tile's centre
    task.freezeRandomization();
    LocomotionEnv env(task, options(4));
    const Tensor level0 = env.terrainLevels().clone();
    for (int i = 0; i < 4; ++i) ASSERT_GT(level0[i].item<std::int64_t>(), 0) << "env " << i;
    Tensor q = env.q().clone(), v = torch::zeros_like(env.v());
    const double s = std::sqrt(0.5);  // yaw 90 degrees: (w, z) = (cos 45, sin 45)
    for (int i = 0; i < 4; ++i)
      q[i].narrow(0, 3, 4).copy_(i == 3 ? torch::tensor({s, 0.0, 0.0, s}, kF64)
                                        : torch::tensor({1.0, 0.0, 0.0, 0.0}, kF64));
    const auto ids = [](const Tensor& t) {
      std::vector<std::int64_t> out;
      for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(t[i].item<std::int64_t>());
      return out;
    };
    StepResult r;
    for (int t = 0; t < 6; ++t) {
      if (t == 3) {
        q[2][0] += 5.0;
        q[2].narrow(0, 3, 4).copy_(torch::tensor({0.0, 1.0, 0.0, 0.0}, kF64));  // upside down
      }
      if (t > 0) q[3][1] += 1.0 * task.envDt;  // the commanded 1 m/s along the base's x = world y
      env.setState(q, v);
      const double reverse = t < 3 ? 1.0 : -1.0;
      env.setCommands(torch::tensor(
          {{reverse, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}}, kF64));
      r = env.step(torch::zeros({4, 12}, kF64));
      if (t == 3) {
        ASSERT_EQ(ids(r.extras.resetIds), std::vector<std::int64_t>{2}) << rule;
      }
      q = env.q().clone();
    }
    ASSERT_EQ(ids(r.extras.resetIds), (std::vector<std::int64_t>{0, 1, 3})) << rule;
    const Tensor level1 = env.terrainLevels();
    const auto moved = [&](int i) {
      return level1[i].item<std::int64_t>() - level0[i].item<std::int64_t>();
    };
    const bool legged = rule == "final_command", fall = rule == "fall";
    EXPECT_EQ(moved(0), legged ? -1 : 0) << rule;
    EXPECT_EQ(moved(1), fall ? 0 : -1) << rule;
    EXPECT_EQ(moved(2), legged ? 1 : -1) << rule;
    EXPECT_EQ(moved(3), 0) << rule;
  }
}

// action_delay_steps: the joints get the action of k steps before (zeros before the first).
TEST(LocomotionEnv, ActionDelayLagsTheTargets) {
  TaskConfig task = loadTaskConfig("velocity");
  task.freezeRandomization();
  task.randomization.actionDelay = true;
  task.randomization.actionDelaySteps = {2, 2};
  LocomotionEnv env(task, options(2));
  const Tensor def = torch::from_blob(const_cast<double*>(env.robot().defaultJointPos.data()),
                                      {12}, kF64).clone();
  std::vector<Tensor> acts;
  for (int t = 0; t < 4; ++t) {
    acts.push_back(torch::rand({2, 12}, kF64) - 0.5);
    env.step(acts.back());
    const Tensor target = asTensor(env.link().batch().qTarget);
    const Tensor expected = t < 2 ? def.expand({2, 12}) : def + task.actionScale * acts[t - 2];
    EXPECT_LT((target - expected).abs().max().item<double>(), 1e-12) << "step " << t;
  }
}

// motor_strength: kp and kd scaled per env; the same as a task with the scaled gains.
TEST(LocomotionEnv, MotorStrengthScalesTheDrive) {
  TaskConfig task = loadTaskConfig("velocity");
  task.freezeRandomization();
  TaskConfig scaled = task;
  task.randomization.motorStrength = true;
  task.randomization.motorStrengthRange = {0.8, 0.8};
  scaled.sim.actuator.kp *= 0.8;
  scaled.sim.actuator.kd *= 0.8;
  TaskConfig nominal = scaled;
  nominal.sim.actuator = task.sim.actuator;
  LocomotionEnv a(task, options(2)), b(scaled, options(2)), c(nominal, options(2));
  b.setState(a.q(), a.v());
  c.setState(a.q(), a.v());
  const Tensor act = torch::rand({2, 12}, kF64) - 0.5;
  a.step(act);
  b.step(act);
  c.step(act);
  EXPECT_LT((a.q() - b.q()).abs().max().item<double>(), 1e-12);
  EXPECT_GT((a.q() - c.q()).abs().max().item<double>(), 1e-6);  // the strength made a difference
}

// foot_height_tracking's relief-following peak refuses a negative rough_height and a relief that
// is not positive (it divides by it), naming the task and the term.
TEST(LocomotionEnv, BadReliefPeakIsAnError) {
  for (const auto& [roughHeight, relief] :
       {std::pair{0.15, 0.0}, std::pair{-0.1, 0.05}, std::pair{0.15, std::nan("")}}) {
    TaskConfig task = loadTaskConfig("velocity");
    for (auto& r : task.rewards)
      if (r.name == "foot_height_tracking") {
        auto v = r.params.values();
        v["rough_height"] = {roughHeight};
        v["relief"] = {relief};
        r.params = TermParams(v);
      }
    try {
      LocomotionEnv env(task, options(2));
      ADD_FAILURE() << "no error for rough_height " << roughHeight << ", relief " << relief;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "foot_height_tracking: rough_height must be >= 0 and relief > 0"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("velocity"), std::string::npos) << e.what();
    }
  }
}

// foot_height_tracking's lookahead refuses a negative or NaN horizon and one past 2 s, naming the
// task and the term.
TEST(LocomotionEnv, BadLookaheadIsAnError) {
  for (double lookahead : {-0.1, 5.0, std::nan("")}) {
    TaskConfig task = loadTaskConfig("velocity");
    for (auto& r : task.rewards)
      if (r.name == "foot_height_tracking") {
        auto v = r.params.values();
        v["lookahead_s"] = {lookahead};
        r.params = TermParams(v);
      }
    try {
      LocomotionEnv env(task, options(2));
      ADD_FAILURE() << "no error for lookahead_s " << lookahead;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("foot_height_tracking: lookahead_s must be in [0, 2] s"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("velocity"), std::string::npos) << e.what();
    }
  }
}

// action_history: the last `steps` clipped actions, newest first (steps 1 = last_action), zeros
// before an episode's first decision and after a reset; its buffer also serves the latency.
TEST(LocomotionEnv, ActionHistoryHoldsTheLastActionsNewestFirst) {
  TaskConfig task = loadTaskConfig("velocity");
  task.freezeRandomization();
  task.randomization.actionDelay = true;  // a latency buffer (2) shallower than the term (3)
  task.randomization.actionDelaySteps = {1, 1};
  TermConfig term;
  term.name = "action_history";
  term.def = findTerm(TermKind::Observation, term.name);
  term.params = TermParams({{"steps", {3.0}}});
  task.observations.push_back(term);
  LocomotionEnv env(task, options(2));
  const auto layout = env.observationLayout();
  ASSERT_EQ(layout.back(), (std::pair<std::string, int>{"action_history", 36}));
  int lastAction = 0;
  for (const auto& [name, size] : layout) {
    if (name == "last_action") break;
    lastAction += size;
  }
  const std::int64_t at = env.numObs() - 36;
  env.reset();
  EXPECT_EQ(env.observations().narrow(1, at, 36).abs().max().item<double>(), 0.0);
  std::vector<Tensor> acts;
  for (int t = 0; t < 4; ++t) {
    acts.push_back(torch::rand({2, 12}, kF64) - 0.5);
    const StepResult r = env.step(acts.back());
    ASSERT_EQ(r.extras.resetIds.numel(), 0);
    for (int k = 0; k < 3; ++k) {
      const Tensor expected = t - k >= 0 ? acts[t - k] : torch::zeros({2, 12}, kF64);
      EXPECT_TRUE(torch::equal(r.obs.narrow(1, at + 12 * k, 12), expected)) << t << " " << k;
    }
    EXPECT_TRUE(torch::equal(r.obs.narrow(1, lastAction, 12), acts[t]));
  }
  const Tensor def =
      torch::from_blob(const_cast<double*>(env.robot().defaultJointPos.data()), {12}, kF64).clone();
  const Tensor target = asTensor(env.link().batch().qTarget);  // the latency reads the same buffer
  EXPECT_LT((target - (def + task.actionScale * acts[2])).abs().max().item<double>(), 1e-12);
  const Tensor s = env.stateDict().at("action_history");
  EXPECT_EQ(s.sizes(), torch::IntArrayRef({2, 3, 12}));
  EXPECT_TRUE(torch::equal(s.select(1, 2), acts[1]));

  for (double bad : {0.0, 17.0, 1.5, std::nan("")}) {
    task.observations.back().params = TermParams({{"steps", {bad}}});
    try {
      LocomotionEnv e(task, options(2));
      ADD_FAILURE() << "no error for steps " << bad;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "observations.action_history.steps must be an integer in [1, 16]"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("velocity"), std::string::npos) << e.what();
    }
  }
}

// The history carries the gradient of the actions it holds into the next observations.
TEST(LocomotionEnv, ActionHistoryCarriesTheActionsGradient) {
  TaskConfig task = loadTaskConfig("velocity");
  task.freezeRandomization();
  TermConfig term;
  term.name = "action_history";
  term.def = findTerm(TermKind::Observation, term.name);
  term.params = TermParams({{"steps", {2.0}}});
  task.observations.push_back(term);
  LocomotionEnv env(task, options(2, true));
  env.reset();
  const Tensor a0 = (0.2 * torch::rand({2, 12}, kF64)).requires_grad_();
  env.step(a0);
  const StepResult r = env.step(torch::zeros({2, 12}, kF64));
  const Tensor w = torch::rand({2, 12}, kF64);
  const Tensor g =
      torch::autograd::grad({(r.obs.narrow(1, env.numObs() - 12, 12) * w).sum()}, {a0})[0];
  EXPECT_TRUE(torch::equal(g, w));  // a0 is the older of the two: the last 12 values
}

// foot_stumble refuses a width that is not positive and a slope band that is empty or reversed
// (it divides by full_slope - slope), naming the task and the term.
TEST(LocomotionEnv, BadStumbleSlopeBandIsAnError) {
  for (const auto& [width, slope, fullSlope] :
       {std::tuple{0.0, 1.0, 2.0}, std::tuple{0.01, 2.0, 2.0}, std::tuple{0.01, 2.0, 1.0},
        std::tuple{0.01, -1.0, 2.0}, std::tuple{0.01, 1.0, std::nan("")}}) {
    TaskConfig task = loadTaskConfig("velocity");
    TermConfig t;
    t.name = "foot_stumble";
    t.def = findTerm(TermKind::Reward, "foot_stumble");
    t.params = TermParams({{"width", {width}}, {"slope", {slope}}, {"full_slope", {fullSlope}}});
    task.rewards.push_back(t);
    try {
      LocomotionEnv env(task, options(2));
      ADD_FAILURE() << "no error for width " << width << ", slope " << slope << ", full_slope "
                    << fullSlope;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(
          std::string(e.what()).find("foot_stumble: width must be > 0 and 0 <= slope < full_slope"),
          std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("velocity"), std::string::npos) << e.what();
    }
  }
}

TEST(LocomotionEnv, BadTiltBarrierAnglesAreAnError) {
  for (const auto& [start, angle] : {std::pair{0.5, 0.5}, std::pair{1.0, 0.5}, std::pair{-0.1, 1.0},
                                     std::pair{0.5, 4.0}, std::pair{std::nan(""), 1.0}}) {
    TaskConfig task = loadTaskConfig("velocity");
    TermConfig t;
    t.name = "base_tilt_barrier";
    t.def = findTerm(TermKind::Reward, "base_tilt_barrier");
    t.params = TermParams({{"start", {start}}, {"angle", {angle}}});
    task.rewards.push_back(t);
    try {
      LocomotionEnv env(task, options(2));
      ADD_FAILURE() << "no error for start " << start << ", angle " << angle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("base_tilt_barrier: 0 <= start < angle <= pi required"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("velocity"), std::string::npos) << e.what();
    }
  }
}

// critic_observations: the critic's own observations, noise-free (the policy's carry their noise),
// the privileged terms the envs' draws of the episode, through resets and a checkpoint, and
// differentiable through the simulator like the policy's.
TEST(LocomotionEnv, CriticObservationsAreNoiseFreeAndReadTheEnvsDraws) {
  TaskConfig task = loadTaskConfig("velocity");
  task.randomization.actionDelay = true;
  task.randomization.actionDelaySteps = {0, 2};
  task.randomization.motorStrength = true;
  task.randomization.motorStrengthRange = {0.8, 1.2};
  ASSERT_TRUE(task.randomization.observationNoise);
  for (const char* name :
       {"base_lin_vel", "friction", "motor_strength", "added_base_mass", "action_delay"}) {
    TermConfig t;
    t.name = name;
    t.def = findTerm(TermKind::Observation, name);
    task.criticObservations.push_back(t);
  }
  task.criticObservations[0].scale = 2.0;
  task.episodeLengthS = 0.4;  // time-outs within the steps below: resets draw anew
  LocomotionEnv env(task, options(8));
  ASSERT_EQ(env.numCriticObs(), 7);
  EXPECT_EQ(env.criticObservationLayout().front(), (std::pair<std::string, int>{"base_lin_vel", 3}));
  ASSERT_EQ(env.observationLayout().front().first, "base_lin_vel");
  const auto expectDraws = [&](const Tensor& c, const char* when) {
    const Tensor truth = 2.0 * stateFeatures(env.q(), env.v(), torch::zeros({12}, kF64)).linVelB;
    const Tensor mass = env.link().addedMass().defined() ? env.link().addedMass()
                                                         : torch::zeros({8}, kF64);
    EXPECT_LT((c.narrow(1, 0, 3) - truth).abs().max().item<double>(), 1e-12) << when;
    EXPECT_TRUE(torch::equal(c.select(1, 3), env.link().friction())) << when;
    EXPECT_TRUE(torch::equal(c.select(1, 4), env.link().motorStrength())) << when;
    EXPECT_TRUE(torch::equal(c.select(1, 5), mass)) << when;
    EXPECT_TRUE(torch::equal(c.select(1, 6), env.stateDict().at("action_delay").to(torch::kDouble)))
        << when;
  };
  env.reset();
  expectDraws(env.criticObservations(), "after reset");
  // The policy's velocity carries its noise, the critic's none.
  EXPECT_GT((env.observations().narrow(1, 0, 3) - 0.5 * env.criticObservations().narrow(1, 0, 3))
                .abs()
                .max()
                .item<double>(),
            1e-3);
  EXPECT_GT(env.criticObservations().select(1, 3).std().item<double>(), 0.0);  // drawn per env
  int resets = 0;
  for (int t = 0; t < 40; ++t) {
    const StepResult r = env.step(2 * torch::rand({8, 12}, kF64) - 1);
    ASSERT_TRUE(r.criticObs.defined());
    ASSERT_TRUE(r.extras.terminalCriticObs.defined());
    expectDraws(r.criticObs, "after a step");
    resets += static_cast<int>(r.extras.resetIds.numel());
  }
  EXPECT_GT(resets, 0) << "no env reset: the reset path was not exercised";
  LocomotionEnv copy(task, options(8));
  copy.loadStateDict(env.stateDict());
  EXPECT_TRUE(torch::equal(copy.criticObservations(), env.criticObservations()));

  // Differentiable: the critic's velocity has the actions' gradient (no latency to hold it back).
  TaskConfig frozen = task;
  frozen.freezeRandomization();
  LocomotionEnv diff(frozen, options(2, true));
  diff.reset();
  const Tensor a = (0.2 * torch::rand({2, 12}, kF64)).requires_grad_();
  const StepResult r = diff.step(a);
  const Tensor g = torch::autograd::grad({r.extras.terminalCriticObs.narrow(1, 0, 3).sum()}, {a})[0];
  EXPECT_GT(g.abs().max().item<double>(), 0.0);

  // Without critic_observations there are none.
  TaskConfig plain = loadTaskConfig("velocity");
  LocomotionEnv p(plain, options(2));
  EXPECT_EQ(p.numCriticObs(), 0);
  EXPECT_FALSE(p.criticObservations().defined());
  EXPECT_FALSE(p.step(torch::zeros({2, 12}, kF64)).criticObs.defined());
}
