// Term building blocks against the simulator's own Eigen computations.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "envs/sim_function.h"
#include "envs/terms.h"
#include "robots/robot.h"
#include "sim/actuator.h"
#include "sim/kinematics.h"

using namespace diffloco;
using namespace diffloco::envs;
using torch::Tensor;

namespace {
const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);
}

TEST(Terms, StateFeaturesMatchTheRotationMatrix) {
  torch::manual_seed(0);
  const int n = 20;
  Tensor q = torch::randn({n, 19}, kF64), v = torch::randn({n, 18}, kF64);
  Tensor quat = torch::randn({n, 4}, kF64);
  q.narrow(1, 3, 4).copy_(quat / quat.norm(2, 1, true));
  const Tensor def = torch::randn({12}, kF64);
  const StateFeatures s = stateFeatures(q, v, def);
  for (int i = 0; i < n; ++i) {
    const Tensor qi = q[i].contiguous();
    const sim::Mat3 R = sim::baseRotation(Eigen::Map<const sim::VecX>(qi.data_ptr<double>(), 19));
    const sim::Vec3 vw(v[i][0].item<double>(), v[i][1].item<double>(), v[i][2].item<double>());
    const sim::Vec3 vb = R.transpose() * vw, g = R.transpose() * sim::Vec3(0, 0, -1);
    for (int a = 0; a < 3; ++a) {
      EXPECT_NEAR(s.linVelB[i][a].item<double>(), vb[a], 1e-14);
      EXPECT_NEAR(s.gravityB[i][a].item<double>(), g[a], 1e-14);
    }
    EXPECT_NEAR(s.alignment[i].item<double>(), R(2, 2), 1e-14);
    EXPECT_NEAR(s.heading[i].item<double>(), R(0, 0), 1e-14);
  }
  EXPECT_TRUE(torch::equal(s.height, q.select(1, 2)));
  EXPECT_TRUE(torch::equal(s.quat, q.narrow(1, 3, 4)));
  EXPECT_TRUE(torch::equal(s.linVelW, v.narrow(1, 0, 3)));
  EXPECT_TRUE(torch::equal(s.angVelB, v.narrow(1, 3, 3)));
  EXPECT_TRUE(torch::allclose(s.jointPos, q.narrow(1, 7, 12) - def, 0, 1e-15));
  EXPECT_TRUE(torch::equal(s.jointVel, v.narrow(1, 6, 12)));
}

TEST(Terms, ActuatorTorqueMatchesTheSimulator) {
  torch::manual_seed(1);
  for (bool envelope : {false, true}) {
    sim::ActuatorOptions a;
    a.kp = 85;
    a.kd = 0.6;
    a.effort = 80;
    if (envelope) a.saturation = 120, a.velocityLimit = 7.5;
    const int n = 200;
    const Tensor effort = torch::full({3}, 70.0, kF64);
    const Tensor qt = torch::randn({n, 3}, kF64), q = torch::randn({n, 3}, kF64),
                 qd = 10 * torch::randn({n, 3}, kF64);
    const Tensor tau = actuatorTorque(a, effort, qt, q, qd);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(tau[i][j].item<double>(),
                    sim::actuatorTorque(a, 70.0, qt[i][j].item<double>(), q[i][j].item<double>(),
                                        qd[i][j].item<double>()),
                    1e-12);
  }
}

TEST(Terms, RegistriesHaveUniqueNamesAndDocumentedParameters) {
  for (auto kind : {TermKind::Observation, TermKind::Reward, TermKind::Termination}) {
    std::set<std::string> names;
    for (const auto& t : termRegistry(kind)) {
      EXPECT_TRUE(names.insert(t.name).second) << t.name;
      EXPECT_FALSE(t.formula.empty()) << t.name;
      EXPECT_TRUE(t.eval) << t.name;
      for (const auto& p : t.params) EXPECT_FALSE(p.doc.empty()) << t.name << "." << p.name;
    }
  }
  EXPECT_NE(findTerm(TermKind::Reward, "foot_height_tracking"), nullptr);
  EXPECT_EQ(findTerm(TermKind::Reward, "no_such_term"), nullptr);
}

// Every output with a random cotangent, against central differences in q and v.
TEST(Terms, StateFeaturesGradientMatchesFiniteDifferences) {
  torch::manual_seed(2);
  const int n = 4;
  Tensor q = torch::randn({n, 19}, kF64), v = torch::randn({n, 18}, kF64);
  const Tensor quat = q.narrow(1, 3, 4);
  quat.copy_(quat / quat.norm(2, 1, true));
  const Tensor def = torch::randn({12}, kF64);
  auto all = [&](const Tensor& a, const Tensor& b) {
    const StateFeatures s = stateFeatures(a, b, def);
    return std::vector<Tensor>{s.height,   s.quat,      s.linVelW, s.linVelB,  s.angVelB,
                               s.gravityB, s.alignment, s.heading, s.jointPos, s.jointVel};
  };
  std::vector<Tensor> cot;
  for (const auto& t : all(q, v)) cot.push_back(torch::randn_like(t));
  auto objective = [&](const Tensor& a, const Tensor& b) {
    Tensor sum = torch::zeros({}, kF64);
    const auto outs = all(a, b);
    for (size_t k = 0; k < outs.size(); ++k) sum = sum + (outs[k] * cot[k]).sum();
    return sum;
  };
  const Tensor qa = q.clone().requires_grad_(), va = v.clone().requires_grad_();
  const auto grads = torch::autograd::grad({objective(qa, va)}, {qa, va});
  // Only some outputs used: the others' undefined gradients count as zero.
  const Tensor onlyHeading =
      torch::autograd::grad({stateFeatures(qa, va, def).heading.sum()}, {qa})[0];
  EXPECT_TRUE(torch::isfinite(onlyHeading).all().item<bool>());
  torch::NoGradGuard noGrad;
  const double h = 1e-6;
  const Tensor inputs[2] = {q, v};
  for (int k = 0; k < 2; ++k) {
    Tensor fd = torch::zeros_like(inputs[k]);
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      Tensor p[2] = {q.clone(), v.clone()}, m[2] = {q.clone(), v.clone()};
      p[k].view(-1)[i] += h;
      m[k].view(-1)[i] -= h;
      fd.view(-1)[i] = (objective(p[0], p[1]) - objective(m[0], m[1])) / (2 * h);
    }
    EXPECT_LT((grads[k] - fd).norm().item<double>() / fd.norm().item<double>(), 1e-8) << k;
  }
}

// The two linear-velocity tracking terms against their formulas in base axes, and the quadratic
// term's slope at a large error (where the kernel's has vanished).
TEST(Terms, LinearVelocityTrackingTermsInBaseAxes) {
  torch::manual_seed(3);
  const int n = 6;
  Tensor q = torch::randn({n, 19}, kF64), v = torch::randn({n, 18}, kF64);
  q.narrow(1, 3, 4).copy_(q.narrow(1, 3, 4) / q.narrow(1, 3, 4).norm(2, 1, true));
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  TermContext c(k);
  c.q = q;
  c.v = v;
  c.command = torch::randn({n, 3}, kF64);
  const Tensor kernel =
      findTerm(TermKind::Reward, "lin_vel_tracking")->eval(c, TermParams({{"sigma", {0.25}}}));
  const Tensor l2 = findTerm(TermKind::Reward, "lin_vel_tracking_l2")->eval(c, TermParams());
  for (int i = 0; i < n; ++i) {
    const Tensor qi = q[i].contiguous();
    const sim::Mat3 R = sim::baseRotation(Eigen::Map<const sim::VecX>(qi.data_ptr<double>(), 19));
    const sim::Vec3 vb = R.transpose() * sim::Vec3(v[i][0].item<double>(), v[i][1].item<double>(),
                                                   v[i][2].item<double>());
    const double ex = vb[0] - c.command[i][0].item<double>(),
                 ey = vb[1] - c.command[i][1].item<double>();
    const double e2 = ex * ex + ey * ey;
    EXPECT_NEAR(kernel[i].item<double>(), std::exp(-e2 / 0.25), 1e-12);
    EXPECT_NEAR(l2[i].item<double>(), -e2, 1e-12);
  }
  // Slopes with respect to the base velocity at |e| = 1.4 m/s (base aligned with the world).
  TermContext big(k);
  big.q = torch::zeros({1, 19}, kF64);
  big.q[0][3] = 1.0;
  big.v = torch::zeros({1, 18}, kF64).requires_grad_();
  big.command = torch::tensor({1.4, 0.0, 0.0}, kF64).view({1, 3});
  auto slope = [&](const char* name, const TermParams& p) {
    TermContext fresh(k);
    fresh.q = big.q, fresh.v = big.v, fresh.command = big.command;
    const Tensor r = findTerm(TermKind::Reward, name)->eval(fresh, p).sum();
    return torch::autograd::grad({r}, {big.v})[0][0][0].item<double>();
  };
  EXPECT_NEAR(slope("lin_vel_tracking_l2", TermParams()), 2 * 1.4, 1e-12);
  EXPECT_LT(slope("lin_vel_tracking", TermParams({{"sigma", {0.25}}})), 0.02 * 2.8);
}

// base_tilt_barrier on a base rolled by theta about its x axis: 0 up to `start`, the closed form
// beyond it, 1 at the termination's angle; its slope in theta against central differences and
// in closed form (d/dtheta = -2 u sin(theta) / (cos(start) - cos(angle))), pulling upright.
TEST(Terms, TiltBarrierRisesToOneAtTheTerminationAngle) {
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  const TermDef* term = findTerm(TermKind::Reward, "base_tilt_barrier");
  ASSERT_NE(term, nullptr);
  const double start = 0.5, angle = 1.0, span = std::cos(start) - std::cos(angle);
  const TermParams params({{"start", {start}}, {"angle", {angle}}});
  auto barrier = [&](const Tensor& theta) {
    TermContext c(k);
    const int64_t n = theta.size(0);
    c.q = torch::cat({torch::zeros({n, 3}, kF64), torch::cos(theta / 2).unsqueeze(1),
                      torch::sin(theta / 2).unsqueeze(1), torch::zeros({n, 14}, kF64)},
                     1);
    c.v = torch::zeros({theta.size(0), 18}, kF64);
    return term->eval(c, params);
  };
  const std::vector<double> thetas = {0.0, 0.3, 0.49, 0.6, 0.8, 1.0, -0.9};
  const Tensor theta = torch::tensor(thetas, kF64).requires_grad_();
  const Tensor r = barrier(theta);
  const Tensor grad = torch::autograd::grad({r.sum()}, {theta})[0];
  for (size_t i = 0; i < thetas.size(); ++i) {
    const double u = std::max(std::cos(start) - std::cos(thetas[i]), 0.0) / span;
    EXPECT_NEAR(r[i].item<double>(), -u * u, 1e-12) << thetas[i];
    EXPECT_NEAR(grad[i].item<double>(), -2 * u * std::sin(thetas[i]) / span, 1e-9) << thetas[i];
    const double eps = 1e-6;
    const double fd = (barrier(torch::tensor({thetas[i] + eps}, kF64)).item<double>() -
                       barrier(torch::tensor({thetas[i] - eps}, kF64)).item<double>()) /
                      (2 * eps);
    EXPECT_NEAR(grad[i].item<double>(), fd, 1e-6) << thetas[i];
  }
  EXPECT_EQ(r[0].item<double>(), 0.0);  // upright and below start: free
  EXPECT_EQ(r[2].item<double>(), 0.0);
  EXPECT_NEAR(r[5].item<double>(), -1.0, 1e-12);  // at the termination's angle
  EXPECT_LT(grad[4].item<double>(), 0.0);         // rolling further costs
  EXPECT_GT(grad[6].item<double>(), 0.0);         // either way
}

// leg_contact on a robot lowered onto its knees (the plane): the value from the simulator's own
// kinematics, and its slope with respect to the base height in closed form (raising the base
// raises every sphere alike: d/dz = sum_k s_k (1 - s_k) / width).
TEST(Terms, LegContactCostsTouchingLegSpheresAndLiftsThem) {
  const Robot robot = loadRobot("anymal");
  const sim::Model& m = robot.model;
  sim::SimOptions opt;
  SimLink link(m, opt, 1, 1);
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  k.link = &link;
  k.legSphereRadius = torch::empty({static_cast<int64_t>(m.legSpheres.size())}, kF64);
  for (size_t l = 0; l < m.legSpheres.size(); ++l) k.legSphereRadius[l] = m.legSpheres[l].radius;
  sim::VecX q0 = robot.standingConfiguration();
  q0[2] -= 0.3;  // the knees at the ground
  const Tensor q = torch::from_blob(q0.data(), {1, 19}, kF64).clone().requires_grad_();
  TermContext c(k);
  c.q = q;
  const double width = 0.02;
  const Tensor r =
      findTerm(TermKind::Reward, "leg_contact")->eval(c, TermParams({{"width", {width}}}));
  sim::Data d(m);
  sim::forwardKinematics(m, d, q0);
  double value = 0, slope = 0;
  int touching = 0;
  for (const sim::Foot& s : m.legSpheres) {
    const double h = sim::worldPoint(d, s.body, s.offset).z() - s.radius;
    const double sig = 1 / (1 + std::exp(h / width));
    value -= sig;
    slope += sig * (1 - sig) / width;
    touching += h <= 0;
  }
  EXPECT_GE(touching, 2);  // both front or both hind knees, at least
  EXPECT_NEAR(r.item<double>(), value, 1e-12);
  const double dz = torch::autograd::grad({r.sum()}, {q})[0][0][2].item<double>();
  EXPECT_NEAR(dz, slope, 1e-9 * std::max(1.0, slope));
  EXPECT_GT(dz, 0);  // lifting the legs off the ground is rewarded
}

// foot_height_tracking with rough_height: the reference's peak is `height` on the plane,
// rough_height where the relief around the base reaches `relief`, and the linear blend between.
// On a 10 % slope the 1.2 m square around the base spans 0.12 m; each case must equal the plain
// term (rough_height 0) with the blended peak as its height.
TEST(Terms, FootHeightPeakFollowsTheReliefAroundTheBase) {
  const Robot robot = loadRobot("anymal");
  const sim::Model& m = robot.model;
  sim::SimOptions opt;
  SimLink link(m, opt, 1, 1);
  auto slope = std::make_shared<sim::HeightField>();
  slope->nx = 60, slope->ny = 60, slope->spacing = 0.1, slope->originX = -3, slope->originY = -3;
  for (int j = 0; j < slope->ny; ++j)
    for (int i = 0; i < slope->nx; ++i) slope->heights.push_back(0.1 * (-3 + 0.1 * i));
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  k.link = &link;
  k.footRadius = torch::empty({static_cast<int64_t>(m.feet.size())}, kF64);
  for (size_t f = 0; f < m.feet.size(); ++f) k.footRadius[f] = m.feet[f].radius;
  sim::VecX q0 = robot.standingConfiguration();
  q0[0] = 0.05, q0[1] = -0.02;
  const Tensor q = torch::from_blob(q0.data(), {1, 19}, kF64).clone();
  const TermDef* term = findTerm(TermKind::Reward, "foot_height_tracking");
  auto reward = [&](const std::shared_ptr<const sim::HeightField>& ground, double height,
                    double roughHeight, double relief) {
    TaskConstants kk = k;
    kk.terrain = ground;
    TermContext c(kk);
    c.q = q;
    c.time = torch::full({1}, 0.1, kF64);  // feet 0 and 3 near their peak, 1 and 2 in stance
    return term
        ->eval(c, TermParams({{"height", {height}},
                              {"rough_height", {roughHeight}},
                              {"relief", {relief}},
                              {"sigma", {0.05}},
                              {"lookahead_s", {0.0}},
                              {"frequency", {2.0}},
                              {"phase_offsets", {0.0, 0.5, 0.5, 0.0}}}))
        .item<double>();
  };
  EXPECT_DOUBLE_EQ(reward(nullptr, 0.10, 0.15, 0.05), reward(nullptr, 0.10, 0.0, 0.05));
  EXPECT_NEAR(reward(slope, 0.10, 0.15, 0.05), reward(slope, 0.15, 0.0, 0.05), 1e-12);
  EXPECT_NEAR(reward(slope, 0.10, 0.15, 0.24), reward(slope, 0.125, 0.0, 0.05), 1e-12);
  // The three peaks give three different rewards (the feet are not at any of them).
  EXPECT_GT(std::abs(reward(slope, 0.15, 0.0, 0.05) - reward(slope, 0.125, 0.0, 0.05)), 1e-4);
  EXPECT_GT(std::abs(reward(slope, 0.10, 0.0, 0.05) - reward(slope, 0.125, 0.0, 0.05)), 1e-4);
}

// foot_height_tracking with lookahead_s: the swing's target is z*_j (1 + r_j / peak), r_j the
// rise of the ground within lookahead_s seconds of the commanded world-frame velocity from foot
// j. A 15 cm step 0.1 m ahead of the front feet: walking forward at 0.5 m/s for 0.5 s, they see
// it (r = the highest of ten points along 0.25 m, by the simulator's own ground; LF swings, RF
// stands) and the hind feet do not; standing or walking backward, no foot sees a rise and the term is the plain one.
TEST(Terms, FootHeightReferenceRisesOverTheGroundAhead) {
  const Robot robot = loadRobot("anymal");
  const sim::Model& m = robot.model;
  sim::SimOptions opt;
  SimLink link(m, opt, 1, 1);
  const sim::VecX q0 = robot.standingConfiguration();
  sim::Data d(m);
  sim::forwardKinematics(m, d, q0);
  const sim::Vec3 lf = sim::worldPoint(d, m.feet[0].body, m.feet[0].offset);
  auto step = std::make_shared<sim::HeightField>();
  step->nx = 80, step->ny = 80, step->spacing = 0.05;
  step->originX = lf.x() + 0.1 - 40 * 0.05;  // the riser at sample 40, 0.1 m ahead of LF
  step->originY = lf.y() - 40 * 0.05;
  for (int j = 0; j < step->ny; ++j)
    for (int i = 0; i < step->nx; ++i) step->heights.push_back(i >= 40 ? 0.15 : 0.0);
  step->finalize();
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  k.link = &link;
  k.terrain = step;
  const int nf = static_cast<int>(m.feet.size());
  k.footRadius = torch::empty({nf}, kF64);
  for (int f = 0; f < nf; ++f) k.footRadius[f] = m.feet[f].radius;
  const Tensor q = torch::from_blob(const_cast<double*>(q0.data()), {1, 19}, kF64).clone();
  const TermDef* term = findTerm(TermKind::Reward, "foot_height_tracking");
  const double peak = 0.1, sigma = 0.05, time = 0.1, lookahead = 0.5;
  auto reward = [&](double vx, double lookaheadS) {
    TermContext c(k);
    c.q = q;
    c.v = torch::zeros({1, 18}, kF64);
    c.time = torch::full({1}, time, kF64);  // feet 0 and 3 near their peak, 1 and 2 in stance
    c.command = torch::tensor({vx, 0.0, 0.0}, kF64).unsqueeze(0);
    return term
        ->eval(c, TermParams({{"height", {peak}},
                              {"rough_height", {0.0}},
                              {"relief", {0.05}},
                              {"sigma", {sigma}},
                              {"lookahead_s", {lookaheadS}},
                              {"frequency", {2.0}},
                              {"phase_offsets", {0.0, 0.5, 0.5, 0.0}}}))
        .item<double>();
  };
  const double phases[4] = {0.0, 0.5, 0.5, 0.0};
  double expected = 0;
  for (int f = 0; f < nf; ++f) {
    const sim::Vec3 p = sim::worldPoint(d, m.feet[f].body, m.feet[f].offset);
    const double under = sim::groundHeight(step.get(), p.x(), p.y());
    double rise = 0;
    for (int s = 1; s <= 10; ++s)
      rise = std::max(rise, sim::groundHeight(step.get(), p.x() + 0.5 * lookahead * s / 10, p.y()) -
                                under);
    if (f < 2) EXPECT_GE(rise, 0.15 - 1e-12) << "front foot " << f;  // RF: in stance, ref 0
    else EXPECT_EQ(rise, 0.0) << "hind foot " << f;
    const double ref = peak * std::max(std::sin(2 * M_PI * (2.0 * time + phases[f])), 0.0);
    const double z = p.z() - m.feet[f].radius - under;
    expected += ref / peak * std::exp(-std::pow(z - ref * (1 + rise / peak), 2) / sigma);
  }
  EXPECT_NEAR(reward(0.5, lookahead), expected, 1e-12);
  EXPECT_GT(std::abs(reward(0.5, lookahead) - reward(0.5, 0.0)), 1e-3);
  EXPECT_DOUBLE_EQ(reward(0.0, lookahead), reward(0.0, 0.0));
  EXPECT_DOUBLE_EQ(reward(-0.5, lookahead), reward(-0.5, 0.0));
}

// foot_stumble with the front feet over a 12 cm step edge (the middle of the Catmull-Rom ramp
// between two 5 cm samples: slope 1.5 * 0.12 / 0.05 - (1.2 + 1.2) / 4 = 3.0) and the hind feet on
// the flat tread below: the value from the simulator's kinematics and the field's own slope, the
// ramp between `slope` and `full_slope`, and the slope with respect to the base height in closed
// form (raising the base raises every foot alike: d/dz = sum_j s_j (1 - s_j) / width * steep_j).
TEST(Terms, FootStumbleCostsFeetNearSteepGround) {
  const Robot robot = loadRobot("anymal");
  const sim::Model& m = robot.model;
  sim::SimOptions opt;
  SimLink link(m, opt, 1, 1);
  sim::VecX q0 = robot.standingConfiguration();
  sim::Data d(m);
  sim::forwardKinematics(m, d, q0);
  const sim::Vec3 lf = sim::worldPoint(d, m.feet[0].body, m.feet[0].offset);
  auto step = std::make_shared<sim::HeightField>();
  step->nx = 80, step->ny = 80, step->spacing = 0.05;
  step->originX = lf.x() - 0.025 - 40 * 0.05;  // samples 40 and 41 on either side of the foot
  step->originY = lf.y() - 40 * 0.05;
  for (int j = 0; j < step->ny; ++j)
    for (int i = 0; i < step->nx; ++i) step->heights.push_back(i >= 41 ? 0.12 : 0.0);
  step->finalize();
  // The foot's lowest point 5 mm above the ramp under its centre.
  q0[2] += sim::groundHeight(step.get(), lf.x(), lf.y()) - (lf.z() - m.feet[0].radius) + 0.005;
  sim::forwardKinematics(m, d, q0);
  TaskConstants k;
  k.defaultJointPos = torch::zeros({12}, kF64);
  k.link = &link;
  k.terrain = step;
  k.footRadius = torch::empty({static_cast<int64_t>(m.feet.size())}, kF64);
  for (size_t f = 0; f < m.feet.size(); ++f) k.footRadius[f] = m.feet[f].radius;
  const TermDef* term = findTerm(TermKind::Reward, "foot_stumble");
  for (const auto& [slope, fullSlope] : {std::pair{1.0, 2.0}, std::pair{2.0, 4.0}}) {
    const Tensor q = torch::from_blob(q0.data(), {1, 19}, kF64).clone().requires_grad_();
    TermContext c(k);
    c.q = q;
    const double width = 0.01;
    const Tensor r = term->eval(
        c, TermParams({{"width", {width}}, {"slope", {slope}}, {"full_slope", {fullSlope}}}));
    double value = 0, dzExpected = 0;
    int steepFeet = 0;
    for (const sim::Foot& foot : m.feet) {
      const sim::Vec3 p = sim::worldPoint(d, foot.body, foot.offset);
      const sim::SurfacePoint s = sim::sampleSurface(*step, p.x(), p.y());
      const double h = p.z() - foot.radius - s.h;
      const double steep =
          std::clamp((std::hypot(s.hx, s.hy) - slope) / (fullSlope - slope), 0.0, 1.0);
      const double sig = 1 / (1 + std::exp(h / width));
      value -= sig * steep;
      dzExpected += sig * (1 - sig) / width * steep;
      steepFeet += steep > 0;
    }
    EXPECT_EQ(steepFeet, 2);  // the front feet
    EXPECT_NEAR(r.item<double>(), value, 1e-12);
    // Twice sigmoid(-0.5) = 0.378 times the ramp: 3.0 is past full_slope 2, halfway from 2 to 4.
    EXPECT_NEAR(r.item<double>(), -2 * 0.3775 * (slope == 1.0 ? 1.0 : 0.5), 0.01);
    const Tensor grad = torch::autograd::grad({r.sum()}, {q})[0][0];
    const double dz = grad[2].item<double>();
    EXPECT_NEAR(dz, dzExpected, 1e-9 * std::max(1.0, dzExpected));
    EXPECT_GT(dz, 0);  // lifting the foot off the edge is rewarded
    // Central differences in the base position and every joint: the steepness weight is constant
    // nearby (3.0 is past full_slope 2 at the front feet, 0 at the hind feet) only in the first
    // band, where the whole gradient is the height's.
    if (slope != 1.0) continue;
    auto reward = [&](const sim::VecX& qq) {
      TermContext cc(k);
      cc.q = torch::from_blob(const_cast<double*>(qq.data()), {1, 19}, kF64).clone();
      return term
          ->eval(cc,
                 TermParams({{"width", {width}}, {"slope", {slope}}, {"full_slope", {fullSlope}}}))
          .item<double>();
    };
    for (int i : {0, 1, 2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}) {
      const double eps = 1e-6;
      sim::VecX qp = q0, qm = q0;
      qp[i] += eps, qm[i] -= eps;
      const double fd = (reward(qp) - reward(qm)) / (2 * eps);
      EXPECT_NEAR(grad[i].item<double>(), fd, 1e-5 * std::max(1.0, std::abs(fd)))
          << "q[" << i << "]";
    }
  }
  // On the plane nothing is steep.
  k.terrain = nullptr;
  TermContext flat(k);
  flat.q = torch::from_blob(q0.data(), {1, 19}, kF64).clone();
  EXPECT_EQ(
      term->eval(flat, TermParams({{"width", {0.01}}, {"slope", {1.0}}, {"full_slope", {2.0}}}))
          .item<double>(),
      0.0);
}
