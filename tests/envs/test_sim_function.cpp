// The autograd bridge: simStep, footPositions and legSpherePositions agree with the simulator in
// the forward pass and with central finite differences in the backward pass; a backward run after
// the per-world parameters changed uses the parameters its forward ran with.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "envs/sim_function.h"
#include "robots/robot.h"
#include "sim/kinematics.h"
#include "sim/moreau_step.h"
#include "sim/pack.h"

using namespace diffloco;
using namespace diffloco::envs;
using torch::Tensor;

namespace {

const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);

struct Fixture {
  Robot robot = loadRobot("anymal");
  sim::SimOptions opt;
  Fixture() {
    for (auto& j : robot.model.joints) j.armature = 0.1;
    opt.dt = 0.005;
    opt.actuator.kp = 85;
    opt.actuator.kd = 0.6;
    opt.actuator.effort = 80;
  }
  // Standing states with some velocity and a perturbed pose, feet near the ground.
  void states(int n, Tensor& q, Tensor& v, Tensor& qt, unsigned seed) {
    torch::manual_seed(seed);
    const sim::VecX q0 = robot.standingConfiguration();
    q = torch::from_blob(const_cast<double*>(q0.data()), {1, q0.size()}, kF64).repeat({n, 1});
    q.narrow(1, 7, 12) += 0.05 * torch::randn({n, 12}, kF64);
    q.narrow(1, 2, 1) -= 0.003;
    Tensor quat = q.narrow(1, 3, 4) + 0.02 * torch::randn({n, 4}, kF64);
    q.narrow(1, 3, 4).copy_(quat / quat.norm(2, 1, true));
    v = 0.3 * torch::randn({n, 18}, kF64);
    qt = q.narrow(1, 7, 12) + 0.1 * torch::randn({n, 12}, kF64);
  }
};

double relErr(const Tensor& a, const Tensor& b) {
  return (a - b).norm().item<double>() / std::max(1e-300, b.norm().item<double>());
}

}  // namespace

TEST(SimFunction, ForwardMatchesSimulator) {
  Fixture f;
  SimLink link(f.robot.model, f.opt, 3, 2);
  Tensor q, v, qt;
  f.states(3, q, v, qt, 1);
  const SimStepResult r = simStep(link, q.to(torch::kFloat), v, qt);  // float input is accepted
  // The batch steps with the stages (batch/batch_sim.h): exactly sim::fixedStep, world by world,
  // and the step moves the state.
  ASSERT_EQ(link.batch().path(), batch::BatchPath::Fixed);
  const sim::FixedModel fm = sim::toStepModel<sim::Quadruped>(f.robot.model);
  const sim::FixedOptions fo = sim::toStepOptions(f.opt);
  for (int w = 0; w < 3; ++w) {
    const Tensor qw = q[w].to(torch::kFloat).to(torch::kDouble).contiguous();
    const Tensor vw = v[w].contiguous(), tw = qt[w].contiguous();
    sim::VecX qf(19), vf(18);
    ASSERT_TRUE(sim::fixedStep(fm, fo, sim::toView(nullptr), qw.data_ptr<double>(),
                               vw.data_ptr<double>(), tw.data_ptr<double>(), qf.data(), vf.data()));
    for (int i = 0; i < 19; ++i) EXPECT_EQ(r.q[w][i].item<double>(), qf[i]);
    for (int i = 0; i < 18; ++i) EXPECT_EQ(r.v[w][i].item<double>(), vf[i]);
    EXPECT_GT((r.v[w] - vw).abs().max().item<double>(), 1e-6);
    EXPECT_FALSE(r.failed[w].item<bool>());
  }
}

// <gq', q'> + <gv', v'> differentiated by autograd and by central differences in every input.
TEST(SimFunction, StepGradientMatchesFiniteDifferences) {
  Fixture f;
  for (auto cm : {sim::ContactModel::Smoothed, sim::ContactModel::Hard}) {
    f.opt.contact.model = cm;
    SimLink link(f.robot.model, f.opt, 2, 2);
    Tensor q, v, qt;
    f.states(2, q, v, qt, 2);
    const Tensor gq = torch::randn({2, 19}, kF64), gv = torch::randn({2, 18}, kF64);
    auto objective = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
      const SimStepResult r = simStep(link, a, b, c);
      return (r.q * gq).sum() + (r.v * gv).sum();
    };
    const Tensor qa = q.clone().requires_grad_(), va = v.clone().requires_grad_(),
                 ta = qt.clone().requires_grad_();
    const auto grads = torch::autograd::grad({objective(qa, va, ta)}, {qa, va, ta});
    torch::NoGradGuard noGrad;
    const double h = 1e-6;
    std::vector<Tensor> inputs{q, v, qt};
    for (size_t k = 0; k < 3; ++k) {
      Tensor fd = torch::zeros_like(inputs[k]);
      for (int64_t i = 0; i < inputs[k].numel(); ++i) {
        std::vector<Tensor> plus{q.clone(), v.clone(), qt.clone()};
        std::vector<Tensor> minus{q.clone(), v.clone(), qt.clone()};
        plus[k].view(-1)[i] += h;
        minus[k].view(-1)[i] -= h;
        fd.view(-1)[i] =
            (objective(plus[0], plus[1], plus[2]) - objective(minus[0], minus[1], minus[2])) /
            (2 * h);
      }
      EXPECT_LT(relErr(grads[k], fd), 1e-5) << sim::toString(cm) << " input " << k;
    }
  }
}

// footPositions (the feet) and legSpherePositions (knees and shank tubes) against forward
// kinematics and central differences.
TEST(SimFunction, SpherePositionsMatchKinematicsAndFiniteDifferences) {
  Fixture f;
  SimLink link(f.robot.model, f.opt, 1, 2);
  const sim::Model& m = f.robot.model;
  ASSERT_EQ(m.legSpheres.size(), 24u);
  Tensor q, v, qt;
  f.states(5, q, v, qt, 3);
  for (const bool legs : {false, true}) {
    const auto positions = [&](const Tensor& x) {
      return legs ? legSpherePositions(link, x) : footPositions(link, x);
    };
    const int first = legs ? m.nfeet() : 0, count = legs ? 24 : 4;
    const Tensor points = positions(q);
    ASSERT_EQ(points.sizes(), (std::vector<int64_t>{5, count, 3}));
    sim::Data d(m);
    for (int i = 0; i < 5; ++i) {
      const Tensor qi = q[i].contiguous();
      sim::forwardKinematics(m, d, Eigen::Map<const sim::VecX>(qi.data_ptr<double>(), 19));
      for (int k = 0; k < count; ++k) {
        const sim::Foot& s = m.sphere(first + k);
        const sim::Vec3 x = sim::worldPoint(d, s.body, s.offset);
        for (int a = 0; a < 3; ++a) EXPECT_NEAR(points[i][k][a].item<double>(), x[a], 1e-14);
      }
    }
    const Tensor g = torch::randn({5, count, 3}, kF64);
    const Tensor qa = q.clone().requires_grad_();
    const Tensor grad = torch::autograd::grad({(positions(qa) * g).sum()}, {qa})[0];
    torch::NoGradGuard noGrad;
    Tensor fd = torch::zeros_like(q);
    const double h = 1e-6;
    for (int64_t i = 0; i < q.numel(); ++i) {
      Tensor p = q.clone(), mq = q.clone();
      p.view(-1)[i] += h;
      mq.view(-1)[i] -= h;
      fd.view(-1)[i] = ((positions(p) - positions(mq)) * g).sum() / (2 * h);
    }
    EXPECT_LT(relErr(grad, fd), 1e-7) << (legs ? "leg spheres" : "feet");
  }
}

// Randomisation at a reset replaces the per-world parameters between a step's forward and
// backward passes; the backward must still use those of the forward.
TEST(SimFunction, BackwardUsesTheParametersOfItsForward) {
  Fixture f;
  SimLink link(f.robot.model, f.opt, 2, 1);
  Tensor q, v, qt;
  f.states(2, q, v, qt, 4);
  v.narrow(1, 0, 2) += 1.0;  // sliding feet: friction matters
  auto gradWith = [&](double mu, double dm, double muAfter, double dmAfter) {
    link.setWorldParams(torch::full({2}, mu, kF64), torch::full({2}, dm, kF64));
    const Tensor va = v.clone().requires_grad_();
    const SimStepResult r = simStep(link, q, va, qt);
    link.setWorldParams(torch::full({2}, muAfter, kF64), torch::full({2}, dmAfter, kF64));
    return torch::autograd::grad({(r.v * r.v).sum()}, {va})[0];
  };
  const Tensor reference = gradWith(0.8, 2.0, 0.8, 2.0);
  const Tensor swapped = gradWith(0.8, 2.0, 0.3, -4.0);
  const Tensor other = gradWith(0.3, -4.0, 0.3, -4.0);
  EXPECT_LT(relErr(swapped, reference), 1e-14);
  EXPECT_GT(relErr(other, reference), 1e-3);  // the parameters do matter here
  EXPECT_EQ(link.friction()[0].item<double>(), 0.3);
  EXPECT_EQ(link.batch().friction(1), 0.3);  // and the current ones are back after backward
}

TEST(SimFunction, RejectsWrongShapes) {
  Fixture f;
  SimLink link(f.robot.model, f.opt, 2, 1);
  EXPECT_THROW(simStep(link, torch::zeros({3, 19}), torch::zeros({2, 18}), torch::zeros({2, 12})),
               std::invalid_argument);
  EXPECT_THROW(footPositions(link, torch::zeros({2, 18})), std::invalid_argument);
}

// groundHeight: the height field's surface, its slope as the gradient; zero without a field.
TEST(SimFunction, GroundHeightMatchesTheSurfaceAndFiniteDifferences) {
  auto hf = std::make_shared<sim::HeightField>();
  hf->nx = 30, hf->ny = 20, hf->spacing = 0.1, hf->originX = -1, hf->originY = -1;
  for (int k = 0; k < hf->nx * hf->ny; ++k) hf->heights.push_back(0.05 * std::sin(0.7 * k));
  torch::manual_seed(4);
  const Tensor x = torch::rand({3, 5}, kF64) * 2.5 - 0.8, y = torch::rand({3, 5}, kF64) * 1.6 - 0.8;
  const Tensor h = groundHeight(hf, x, y);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_DOUBLE_EQ(h[i][j].item<double>(),
                       sim::sampleSurface(*hf, x[i][j].item<double>(), y[i][j].item<double>()).h);
  const Tensor xa = x.clone().requires_grad_(), ya = y.clone().requires_grad_();
  const Tensor w = torch::randn({3, 5}, kF64);
  const auto g = torch::autograd::grad({(groundHeight(hf, xa, ya) * w).sum()}, {xa, ya});
  torch::NoGradGuard noGrad;
  const double e = 1e-6;
  const Tensor fx = ((groundHeight(hf, x + e, y) - groundHeight(hf, x - e, y)) * w) / (2 * e);
  const Tensor fy = ((groundHeight(hf, x, y + e) - groundHeight(hf, x, y - e)) * w) / (2 * e);
  EXPECT_LT(relErr(g[0], fx), 1e-7);
  EXPECT_LT(relErr(g[1], fy), 1e-7);
  EXPECT_EQ(groundHeight(nullptr, x, y).abs().max().item<double>(), 0.0);
}

// On a link's pool (points in chunks over its threads) the heights and slopes are the serial ones.
TEST(SimFunction, GroundHeightOnThePoolIsTheSerialOne) {
  Fixture f;
  SimLink link(f.robot.model, f.opt, 2, 2);
  auto hf = std::make_shared<sim::HeightField>();
  hf->nx = 30, hf->ny = 20, hf->spacing = 0.1, hf->originX = -1, hf->originY = -1;
  for (int k = 0; k < hf->nx * hf->ny; ++k) hf->heights.push_back(0.05 * std::sin(0.7 * k));
  auto smooth = std::make_shared<const sim::HeightField>(sim::smoothHeightField(*hf, 0.15));
  torch::manual_seed(6);
  const Tensor x = torch::rand({64, 187}, kF64) * 2.5 - 0.8,
               y = torch::rand({64, 187}, kF64) * 1.6 - 0.8;
  const Tensor w = torch::randn({64, 187}, kF64);
  std::vector<Tensor> h, gx, gy;
  for (SimLink* l : {static_cast<SimLink*>(nullptr), &link}) {
    const Tensor xa = x.clone().requires_grad_(), ya = y.clone().requires_grad_();
    h.push_back(groundHeight(hf, xa, ya, smooth, l));
    const auto g = torch::autograd::grad({(h.back() * w).sum()}, {xa, ya});
    gx.push_back(g[0]), gy.push_back(g[1]);
  }
  EXPECT_TRUE(torch::equal(h[0], h[1]));
  EXPECT_TRUE(torch::equal(gx[0], gx[1]));
  EXPECT_TRUE(torch::equal(gy[0], gy[1]));
}

// Straight-through terrain: the heights are the field's, their derivative the smoothed copy's
// slope (finite differences of the smoothed field's heights); a grid that differs is an error.
TEST(SimFunction, GroundHeightTakesItsSlopesFromTheSlopesField) {
  auto hf = std::make_shared<sim::HeightField>();
  hf->nx = 30, hf->ny = 20, hf->spacing = 0.1, hf->originX = -1, hf->originY = -1;
  for (int k = 0; k < hf->nx * hf->ny; ++k) hf->heights.push_back(0.05 * std::sin(0.7 * k));
  auto smooth = std::make_shared<const sim::HeightField>(sim::smoothHeightField(*hf, 0.15));
  torch::manual_seed(5);
  const Tensor x = torch::rand({7}, kF64) * 2.5 - 0.8, y = torch::rand({7}, kF64) * 1.6 - 0.8;
  const Tensor xa = x.clone().requires_grad_(), ya = y.clone().requires_grad_();
  const Tensor h = groundHeight(hf, xa, ya, smooth);
  EXPECT_LT((h - groundHeight(hf, x, y)).abs().max().item<double>(), 1e-15);
  const Tensor w = torch::randn({7}, kF64);
  const auto g = torch::autograd::grad({(h * w).sum()}, {xa, ya});
  torch::NoGradGuard noGrad;
  const double e = 1e-6;
  const Tensor fx = ((groundHeight(smooth, x + e, y) - groundHeight(smooth, x - e, y)) * w) / (2 * e);
  const Tensor fy = ((groundHeight(smooth, x, y + e) - groundHeight(smooth, x, y - e)) * w) / (2 * e);
  EXPECT_LT(relErr(g[0], fx), 1e-7);
  EXPECT_LT(relErr(g[1], fy), 1e-7);
  EXPECT_GT(relErr(g[0], ((groundHeight(hf, x + e, y) - groundHeight(hf, x - e, y)) * w) / (2 * e)),
            1e-2);
  auto coarse = std::make_shared<sim::HeightField>(*hf);
  coarse->spacing = 0.2;
  EXPECT_THROW(groundHeight(hf, x, y, coarse), std::invalid_argument);
}
