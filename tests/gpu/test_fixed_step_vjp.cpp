// gpu/fixed_step_vjp.h and gpu/fixed_soft_vjp.h compiled for the CPU: the VJP of the fixed-size
// hard, smoothed and soft steps against sim::stepVjp on random worlds in and out of contact, on the
// plane and on a bumpy height field, and against central differences of the fixed forward step
// itself. Needs no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gpu/fixed_convert.h"
#include "gpu/fixed_soft_vjp.h"
#include "gpu/parity.h"
#include "robots/robot.h"

using namespace diffloco;
using namespace diffloco::gpu;

namespace {

struct Anymal {
  Robot robot = loadRobot("anymal");
  std::vector<double> qStand;
  Anymal() {
    for (auto& j : robot.model.joints) j.armature = robot.armature;
    const sim::VecX q = robot.standingConfiguration();
    qStand.assign(q.data(), q.data() + q.size());
  }
};

sim::SimOptions options(const Robot& r, sim::ContactModel cm, const sim::HeightField* ground) {
  sim::SimOptions o;
  o.dt = r.dt;
  o.actuator = r.actuator;
  o.contact.model = cm;
  if (ground) o.contact.terrain = std::make_shared<sim::HeightField>(*ground);
  return o;
}

double largest(const std::vector<double>& x) {
  double m = 0;
  for (double e : x) m = std::max(m, std::abs(e));
  return m;
}

}  // namespace

TEST(FixedStepVjp, MatchesSimStepVjpOnPlaneAndHeightField) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const int n = 1000;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 7 : 6);
    const WorldSet seeds = randomSeeds(n, ground ? 9 : 8);
    const HeightFieldView view = toView(ground);
    const ContactCoverage cov = contactCoverage(fm, view, start);
    EXPECT_GT(cov.none, n / 40);  // worlds out of contact, partly in, fully in
    EXPECT_GT(cov.some, n / 20);
    EXPECT_GT(cov.all, n / 20);
    EXPECT_GT(cov.legs, n / 10);  // knees and shanks on the ground
    EXPECT_EQ(cov.overflow, 0);
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      const sim::SimOptions o = options(a.robot, cm, ground);
      WorldSet dyn, fix;
      EXPECT_EQ(vjpDynamic(a.robot.model, o, start, seeds, dyn), 0);
      EXPECT_EQ(vjpFixed(fm, toFixed(o), view, start, seeds, fix), 0);
      const Difference d = compareWithTargets(fix, dyn);
      std::printf("VJP %s, %s: max rel %.3g, max abs %.3g, largest adjoint %.3g\n",
                  sim::toString(cm), ground ? "height field" : "plane", d.rel, d.abs,
                  std::max({largest(dyn.q), largest(dyn.v), largest(dyn.target)}));
      EXPECT_LE(d.rel, 1e-10) << sim::toString(cm)
                              << (ground ? " on the height field" : " on the plane") << ": world "
                              << d.world << ", max abs " << d.abs;
      EXPECT_GT(largest(dyn.target), 1e-3);  // the adjoints are not trivially zero
    }
  }
}

// The smoothed model with a finite cutoff: a varying contact count through the VJP.
TEST(FixedStepVjp, SmoothedWithCutoffMatches) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const int n = 300;
  const WorldSet start = randomWorlds(a.qStand, nullptr, n, 12);
  const WorldSet seeds = randomSeeds(n, 13);
  sim::SimOptions o = options(a.robot, sim::ContactModel::Smoothed, nullptr);
  o.contact.cutoff = 0.01;
  WorldSet dyn, fix;
  EXPECT_EQ(vjpDynamic(a.robot.model, o, start, seeds, dyn), 0);
  EXPECT_EQ(vjpFixed(fm, toFixed(o), toView(nullptr), start, seeds, fix), 0);
  const Difference d = compareWithTargets(fix, dyn);
  std::printf("VJP smoothed, cutoff 1 cm: max rel %.3g\n", d.rel);
  EXPECT_LE(d.rel, 1e-10) << "world " << d.world;
}

// An independent check of the fixed VJP: the directional derivative of <seed, step(x)> by central
// differences of fixedStep, against <VJP(seed), direction>, on a few worlds per model and ground.
TEST(FixedStepVjp, AgreesWithCentralDifferences) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const int n = 6;
  const double eps = 1e-6;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 21 : 20);
    const WorldSet seeds = randomSeeds(n, 22);
    const HeightFieldView view = toView(ground);
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      const FixedOptions fo = toFixed(options(a.robot, cm, ground));
      WorldSet adj;
      ASSERT_EQ(vjpFixed(fm, fo, view, start, seeds, adj), 0);
      std::mt19937 rng(23);
      std::uniform_real_distribution<double> u(-1, 1);
      double worst = 0;
      for (int w = 0; w < n; ++w) {
        const double* q = &start.q[w * NQ];
        const double* v = &start.v[w * NV];
        const double* t = &start.target[w * NJ];
        double dq[NQ], dv[NV], dt[NJ];
        for (double& x : dq) x = u(rng);
        for (double& x : dv) x = u(rng);
        for (double& x : dt) x = u(rng);
        auto objective = [&](double s) {
          double qs[NQ], vs[NV], ts[NJ], qn[NQ], vn[NV];
          for (int k = 0; k < NQ; ++k) qs[k] = q[k] + s * dq[k];
          for (int k = 0; k < NV; ++k) vs[k] = v[k] + s * dv[k];
          for (int k = 0; k < NJ; ++k) ts[k] = t[k] + s * dt[k];
          EXPECT_TRUE(fixedStep(fm, fo, view, qs, vs, ts, qn, vn));
          double f = 0;
          for (int k = 0; k < NQ; ++k) f += seeds.q[w * NQ + k] * qn[k];
          for (int k = 0; k < NV; ++k) f += seeds.v[w * NV + k] * vn[k];
          return f;
        };
        const double fd = (objective(eps) - objective(-eps)) / (2 * eps);
        double ad = 0;
        for (int k = 0; k < NQ; ++k) ad += adj.q[w * NQ + k] * dq[k];
        for (int k = 0; k < NV; ++k) ad += adj.v[w * NV + k] * dv[k];
        for (int k = 0; k < NJ; ++k) ad += adj.target[w * NJ + k] * dt[k];
        const double rel = std::abs(fd - ad) / (1 + std::abs(ad));
        worst = std::max(worst, rel);
        EXPECT_LE(rel, 1e-5) << sim::toString(cm) << (ground ? " height field" : " plane")
                             << ", world " << w << ": FD " << fd << ", VJP " << ad;
      }
      std::printf("FD check %s, %s: %d worlds, max rel %.3g\n", sim::toString(cm),
                  ground ? "height field" : "plane", n, worst);
    }
  }
}

// straight_through (its VJP is the smoothed model's at the state) and a straight-through terrain
// (the VJP of the step on a smoothed copy of the ground): what toFixedBackward and backwardView
// hand the fixed VJP, against sim::stepVjp with the same options.
TEST(FixedStepVjp, StraightThroughAndBackwardTerrainMatch) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const auto smooth = std::make_shared<sim::HeightField>(sim::smoothHeightField(bumps, 0.05));
  const int n = 300;
  const WorldSet start = randomWorlds(a.qStand, &bumps, n, 31);
  const WorldSet seeds = randomSeeds(n, 32);
  for (auto cm : {sim::ContactModel::StraightThrough, sim::ContactModel::Hard,
                  sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
    WorldSet onTerrain;
    for (bool backward : {false, true}) {
      sim::SimOptions o = options(a.robot, cm, &bumps);
      if (backward) o.contact.backwardTerrain = smooth;
      WorldSet dyn, fix;
      EXPECT_EQ(vjpDynamic(a.robot.model, o, start, seeds, dyn), 0);
      EXPECT_EQ(vjpFixed(fm, toFixedBackward(o), backwardView(o), start, seeds, fix), 0);
      const Difference d = compareWithTargets(fix, dyn);
      std::printf("VJP %s%s: max rel %.3g\n", sim::toString(cm),
                  backward ? ", backward terrain" : "", d.rel);
      EXPECT_LE(d.rel, 1e-10) << sim::toString(cm) << (backward ? ", backward terrain" : "")
                              << ": world " << d.world;
      if (backward)  // the smoothed ground changes the adjoints
        EXPECT_GT(compareWithTargets(fix, onTerrain).abs, 1e-3) << sim::toString(cm);
      else
        onTerrain = fix;
    }
  }
  // straight_through's forward is the hard step.
  sim::SimOptions o = options(a.robot, sim::ContactModel::StraightThrough, &bumps);
  WorldSet dyn, fix;
  EXPECT_EQ(stepDynamic(a.robot.model, o, start, dyn), 0);
  EXPECT_EQ(stepFixed(fm, toFixed(o), toView(&bumps), start, fix), 0);
  EXPECT_LE(compare(fix, dyn).rel, 1e-10);
  EXPECT_EQ(toFixed(o).model, FixedContact::Hard);
  EXPECT_EQ(toFixedBackward(o).model, FixedContact::Smoothed);
}
