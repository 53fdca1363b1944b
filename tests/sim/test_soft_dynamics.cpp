// sim/soft_dynamics.h: the soft model's continuous dynamics on the stages. Its velocity part is the
// limit of the soft sub-step (sim::softSubstep) as the sub-step shrinks, its configuration part
// the limit of sim::integrate; every sphere is in the contact set; and its VJP, with the
// parameters' adjoints, agrees with central differences of the dynamics themselves, on ANYmal
// (feet and leg spheres) pressed into the plane, bumps and stairs, feet sliding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "robots/robot.h"
#include "sim/pack.h"
#include "sim/soft_dynamics.h"
#include "tests/sim/stages.h"

using namespace diffloco;
using D = sim::Quadruped;

namespace {

constexpr int NX = D::NQ + D::NV;

struct Case {
  std::unique_ptr<sim::StepModel<D>> m;
  sim::FixedOptions o;
  std::shared_ptr<sim::HeightField> field;
  sim::HeightFieldView view;
  std::vector<double> x, target;
  std::string name;
};

// ANYmal lowered 1-3 cm into the ground under it (a crouch for every third state, so that its
// knees touch), tilted, its joints moved, moving sideways (the feet slide) and down.
Case makeCase(const Robot& robot, std::shared_ptr<sim::HeightField> field, unsigned seed,
              const std::string& name) {
  Case c;
  sim::Model model = robot.model;
  robot.applyArmature(model);
  c.m = std::make_unique<sim::StepModel<D>>(sim::toStepModel<D>(model));
  sim::SimOptions opt = robot.simOptions(sim::ContactModel::Soft);
  opt.contact.terrain = field;
  opt.contact.terrainContact = sim::TerrainContact::Closest;
  c.o = sim::toStepOptions(opt);
  c.field = field;
  c.view = sim::toView(field.get());
  c.name = name;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  const sim::VecX qs = robot.standingConfiguration();
  c.x.assign(qs.data(), qs.data() + qs.size());
  const double ground = sim::groundHeight(field.get(), c.x[0], c.x[1]);
  c.x[2] += ground - 0.01 - 0.01 * std::abs(n(rng)) - (seed % 3 == 0 ? 0.08 : 0.0);
  double quat[4] = {1, 0.03 * n(rng), 0.03 * n(rng), 0.1 * n(rng)};
  const double r = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                             quat[3] * quat[3]);
  for (int k = 0; k < 4; ++k) c.x[3 + k] = quat[k] / r;
  for (int j = 0; j < D::NJ; ++j) c.x[7 + j] += 0.1 * n(rng);
  c.x.resize(NX);
  for (int k = 0; k < D::NV; ++k) c.x[D::NQ + k] = 0.2 * n(rng);
  c.x[D::NQ] = 0.8;  // sliding: friction in its Coulomb branch where the feet press hard
  c.x[D::NQ + 2] = -0.2;
  c.target.assign(robot.defaultJointPos.data(), robot.defaultJointPos.data() + D::NJ);
  for (int j = 0; j < D::NJ; ++j) c.target[j] += 0.2 * n(rng);
  return c;
}

std::vector<Case> cases() {
  const Robot robot = loadRobot("anymal");
  std::mt19937 rng(3);
  auto grounds = test::stairsThenBumps(rng);
  std::vector<Case> out;
  for (unsigned s = 0; s < 6; ++s) {
    out.push_back(makeCase(robot, nullptr, 10 + s, "plane"));
    out.push_back(makeCase(robot, grounds.second, 20 + s, "stairs and bumps"));
  }
  return out;
}

std::vector<double> dynamics(const Case& c, const std::vector<double>& x,
                             const std::vector<double>& target) {
  std::vector<double> xdot(NX);
  auto t = std::make_unique<sim::SoftDynamicsTape<D>>();
  sim::softDynamics(*c.m, c.o, c.view, x.data(), target.data(), xdot.data(), *t);
  return xdot;
}

}  // namespace

// v' is the limit of the soft sub-step's (v_h - v) / h (which sees q (+) h/2 v: first order in h),
// and q' that of integrate(q, h v); every sphere is in the set, and some touch.
TEST(SoftDynamics, IsTheLimitOfTheSoftSubstep) {
  for (const Case& c : cases()) {
    auto t = std::make_unique<sim::SoftDynamicsTape<D>>();
    std::vector<double> xdot(NX);
    sim::softDynamics(*c.m, c.o, c.view, c.x.data(), c.target.data(), xdot.data(), *t);
    EXPECT_EQ(t->fc.nc, c.m->nspheres) << c.name;
    int touching = 0;
    for (int a = 0; a < t->fc.nc; ++a) {
      EXPECT_EQ(t->fc.active[a], a);
      touching += t->fc.contact[a].depth >= 0;
    }
    EXPECT_GT(touching, 0) << c.name;
    double gap[2] = {0, 0}, scale = 0;
    for (int k = 0; k < D::NV; ++k) scale = std::max(scale, std::abs(xdot[D::NQ + k]));
    const double hs[2] = {1e-6, 5e-7};
    for (int i = 0; i < 2; ++i) {
      const double h = hs[i];
      auto d = std::make_unique<sim::StepData<D>>();
      auto fc = std::make_unique<sim::Contacts<D>>();
      double q1[D::NQ], v1[D::NV], u[D::NV];
      sim::softSubstep<D>(*c.m, sim::everySphere(c.o), c.view, h, c.x.data(),
                          c.x.data() + D::NQ, c.target.data(), q1, v1, *d, *fc, u, nullptr);
      for (int k = 0; k < D::NV; ++k)
        gap[i] = std::max(gap[i], std::abs((v1[k] - c.x[D::NQ + k]) / h - xdot[D::NQ + k]));
      double dv[D::NV], qh[D::NQ];
      for (int k = 0; k < D::NV; ++k) dv[k] = h * c.x[D::NQ + k];
      sim::integrate<D>(c.x.data(), dv, qh);
      for (int k = 0; k < D::NQ; ++k)
        EXPECT_NEAR((qh[k] - c.x[k]) / h, xdot[k], 1e-5 * (1 + std::abs(xdot[k]))) << c.name;
    }
    std::printf("%s: |v'| %.3g, sub-step gap %.3g at 1e-6, %.3g at 5e-7\n", c.name.c_str(), scale,
                gap[0], gap[1]);
    EXPECT_LT(gap[0], 1e-3 * scale) << c.name;
    EXPECT_LT(gap[1], 0.75 * gap[0] + 1e-9 * scale) << c.name;  // first order: it halves
  }
}

// <xdotBar, f(x + e dx, target + e dt)> by central differences against the VJP's <xBar, dx> +
// <targetBar, dt>, and the same along a direction in every parameter.
TEST(SoftDynamics, VjpAgreesWithCentralDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  double worst = 0, largest = 0;
  for (const Case& c : cases()) {
    std::vector<double> seed(NX), dx(NX), dt(D::NJ);
    for (double& s : seed) s = u(rng);
    for (double& s : dx) s = u(rng);
    for (double& s : dt) s = u(rng);
    auto t = std::make_unique<sim::SoftDynamicsTape<D>>();
    std::vector<double> xdot(NX), xBar(NX, 0.0), tBar(D::NJSLOTS, 0.0);
    sim::softDynamics(*c.m, c.o, c.view, c.x.data(), c.target.data(), xdot.data(), *t);
    sim::ParamBar<D> p;
    sim::setZero(p);
    sim::softDynamicsVjp<true>(*c.m, c.o, c.view, c.x.data(), c.target.data(), *t, seed.data(),
                               xBar.data(), tBar.data(), &p);
    auto objective = [&](double e) {
      std::vector<double> x = c.x, target = c.target;
      for (int k = 0; k < NX; ++k) x[k] += e * dx[k];
      for (int j = 0; j < D::NJ; ++j) target[j] += e * dt[j];
      const std::vector<double> f = dynamics(c, x, target);
      double s = 0;
      for (int k = 0; k < NX; ++k) s += seed[k] * f[k];
      return s;
    };
    double ad = 0;
    for (int k = 0; k < NX; ++k) ad += xBar[k] * dx[k];
    for (int j = 0; j < D::NJ; ++j) ad += tBar[j] * dt[j];
    const double eps = 1e-6;
    const double fd = (objective(eps) - objective(-eps)) / (2 * eps);
    const double rel = std::abs(fd - ad) / (1 + std::abs(ad));
    worst = std::max(worst, rel);
    largest = std::max(largest, std::abs(ad));
    EXPECT_LE(rel, 1e-5) << c.name << ": FD " << fd << ", VJP " << ad;

    // The parameters: friction, the gains, the soft coefficients, each sphere's offset, each
    // body's mass.
    sim::ParamBar<D> dir;
    sim::setZero(dir);
    dir.mu = 0.1 * u(rng), dir.kp = u(rng), dir.kd = 0.1 * u(rng);
    dir.softKp = 100 * u(rng), dir.softKd = u(rng), dir.softKf = 10 * u(rng);
    for (int j = 0; j < c.m->nspheres; ++j) dir.footOffset[j] = sim::v3(u(rng), u(rng), u(rng));
    for (int i = 0; i < D::NB; ++i) dir.inertia[i].m = c.m->inertia[i].m * u(rng);
    auto paramObjective = [&](double e) {
      Case s{std::make_unique<sim::StepModel<D>>(*c.m), c.o, c.field, c.view, c.x, c.target, c.name};
      s.o.mu += e * dir.mu, s.o.kp += e * dir.kp, s.o.kd += e * dir.kd;
      s.o.softKp += e * dir.softKp, s.o.softKd += e * dir.softKd, s.o.softKf += e * dir.softKf;
      for (int j = 0; j < c.m->nspheres; ++j)
        for (int r = 0; r < 3; ++r) s.m->footOffset[j][r] += e * dir.footOffset[j][r];
      for (int i = 0; i < D::NB; ++i) s.m->inertia[i].m += e * dir.inertia[i].m;
      const std::vector<double> f = dynamics(s, c.x, c.target);
      double sum = 0;
      for (int k = 0; k < NX; ++k) sum += seed[k] * f[k];
      return sum;
    };
    double pad = p.mu * dir.mu + p.kp * dir.kp + p.kd * dir.kd + p.softKp * dir.softKp +
                 p.softKd * dir.softKd + p.softKf * dir.softKf;
    for (int j = 0; j < c.m->nspheres; ++j)
      for (int r = 0; r < 3; ++r) pad += p.footOffset[j][r] * dir.footOffset[j][r];
    for (int i = 0; i < D::NB; ++i) pad += p.inertia[i].m * dir.inertia[i].m;
    const double pfd = (paramObjective(eps) - paramObjective(-eps)) / (2 * eps);
    const double prel = std::abs(pfd - pad) / (1 + std::abs(pad));
    worst = std::max(worst, prel);
    EXPECT_LE(prel, 1e-5) << c.name << ", parameters: FD " << pfd << ", VJP " << pad;
  }
  std::printf("soft dynamics VJP against central differences: max rel %.3g, largest %.3g\n", worst,
              largest);
  EXPECT_GT(largest, 1.0);  // not trivially zero
}
