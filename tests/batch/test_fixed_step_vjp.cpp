// sim/moreau_step_vjp.h and sim/soft_step_vjp.h compiled for the CPU over sets of worlds (what
// gpu_check runs on a GPU): the VJP of the hard, smoothed and soft steps and the parameters'
// adjoints against central differences of the forward step, on random worlds in and out of
// contact, on the plane and on height fields (both interpolants, vertical and closest-point
// contact); straight_through and a straight-through terrain hand the VJP the smoothed model and
// the smoothed ground. Needs no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "batch/world_set.h"
#include "robots/robot.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"

using namespace diffloco;
using namespace diffloco::batch;
using sim::FixedAdjoint;
using sim::FixedParamBar;
using sim::fixedSoftStepVjp;
using sim::FixedSoftTape;
using sim::fixedStep;
using sim::fixedStepRecord;
using sim::fixedStepVjp;
using sim::FixedTape;
using sim::setZero;
using sim::SInertia;
using sim::v3;

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

// The central-difference checks' cases: the plane, a bumpy height field, the same bumps on the
// monotone surface with the closest-point contact, and stairs with the closest-point contact, each
// in the hard, smoothed and soft models, from the same random worlds and output seeds; on the
// plane also the smoothed model with a 1 cm cutoff (far spheres left out of the problem).
struct FdCase {
  const char* groundName;
  sim::ContactModel model;
  FixedOptions options;
  HeightFieldView view;
  const WorldSet& start;
  const WorldSet& seeds;
};

template <class Check>
void forEachFdCase(const Anymal& a, int worlds, Check check) {
  auto bumps = std::make_shared<sim::HeightField>(bumpyField(0.04, 11));
  auto monotoneBumps = std::make_shared<sim::HeightField>(*bumps);
  monotoneBumps->interpolant = sim::Interpolant::Monotone;
  monotoneBumps->finalize();
  auto stairs = std::make_shared<sim::HeightField>(stairsField(0.08, 0.3));
  struct Ground {
    std::shared_ptr<sim::HeightField> field;
    sim::TerrainContact contact;
    const char* name;
  };
  const Ground grounds[] = {
      {nullptr, sim::TerrainContact::Vertical, "plane"},
      {bumps, sim::TerrainContact::Vertical, "height field"},
      {monotoneBumps, sim::TerrainContact::Closest, "monotone height field, closest point"},
      {stairs, sim::TerrainContact::Closest, "stairs, closest point"}};
  for (const Ground& g : grounds) {
    const WorldSet start = randomWorlds(a.qStand, g.field.get(), worlds, g.field ? 21 : 20);
    const WorldSet seeds = randomSeeds(worlds, 22);
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      sim::SimOptions o = options(a.robot, cm, nullptr);
      o.contact.terrain = g.field;
      o.contact.terrainContact = g.contact;
      check(FdCase{g.name, cm, sim::toStepOptions(o), sim::toView(g.field.get()), start, seeds});
    }
    if (!g.field) {
      sim::SimOptions o = options(a.robot, sim::ContactModel::Smoothed, nullptr);
      o.contact.cutoff = 0.01;
      check(FdCase{"plane, cutoff 1 cm", sim::ContactModel::Smoothed, sim::toStepOptions(o),
                   sim::toView(nullptr), start, seeds});
    }
  }
}

// A central difference against the VJP's directional derivative in world w of case c; the
// largest relative gap so far in `worst`.
void expectAgrees(const FdCase& c, int w, double fd, double ad, double& worst) {
  const double rel = std::abs(fd - ad) / (1 + std::abs(ad));
  worst = std::max(worst, rel);
  EXPECT_LE(rel, 1e-5) << sim::toString(c.model) << ", " << c.groundName << ", world " << w
                       << ": FD " << fd << ", VJP " << ad;
}

// <seed of world w, (q', v')>: the scalar whose derivative the VJP gives.
double seeded(const WorldSet& seeds, int w, const double* qn, const double* vn) {
  double f = 0;
  for (int k = 0; k < NQ; ++k) f += seeds.q[w * NQ + k] * qn[k];
  for (int k = 0; k < NV; ++k) f += seeds.v[w * NV + k] * vn[k];
  return f;
}

}  // namespace

// An independent check of the fixed VJP: the directional derivative of <seed, step(x)> by central
// differences of fixedStep, against <VJP(seed), direction>, on a few worlds per model and ground.
TEST(FixedStepVjp, AgreesWithCentralDifferences) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const int n = 6;
  const double eps = 1e-6;
  forEachFdCase(a, n, [&](const FdCase& c) {
    WorldSet adj;
    ASSERT_EQ(vjpFixed(fm, c.options, c.view, c.start, c.seeds, adj), 0);
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> u(-1, 1);
    double worst = 0;
    for (int w = 0; w < n; ++w) {
      const double* q = &c.start.q[w * NQ];
      const double* v = &c.start.v[w * NV];
      const double* t = &c.start.target[w * NJ];
      double dq[NQ], dv[NV], dt[NJ];
      for (double& x : dq) x = u(rng);
      for (double& x : dv) x = u(rng);
      for (double& x : dt) x = u(rng);
      auto objective = [&](double s) {
        double qs[NQ], vs[NV], ts[NJ], qn[NQ], vn[NV];
        for (int k = 0; k < NQ; ++k) qs[k] = q[k] + s * dq[k];
        for (int k = 0; k < NV; ++k) vs[k] = v[k] + s * dv[k];
        for (int k = 0; k < NJ; ++k) ts[k] = t[k] + s * dt[k];
        EXPECT_TRUE(fixedStep(fm, c.options, c.view, qs, vs, ts, qn, vn));
        return seeded(c.seeds, w, qn, vn);
      };
      const double fd = (objective(eps) - objective(-eps)) / (2 * eps);
      double ad = 0;
      for (int k = 0; k < NQ; ++k) ad += adj.q[w * NQ + k] * dq[k];
      for (int k = 0; k < NV; ++k) ad += adj.v[w * NV + k] * dv[k];
      for (int k = 0; k < NJ; ++k) ad += adj.target[w * NJ + k] * dt[k];
      expectAgrees(c, w, fd, ad, worst);
    }
    std::printf("FD check %s, %s: %d worlds, max rel %.3g\n", sim::toString(c.model), c.groundName,
                n, worst);
  });
}

// straight_through is the hard step forward and the smoothed model's VJP backward, and a
// straight-through terrain (contact.backwardTerrain) hands the VJP the smoothed ground: what
// sim::toStepOptionsBackward and sim::backwardView give the fixed VJP, against the VJP called
// with the smoothed model and the smoothed ground directly.
TEST(FixedStepVjp, StraightThroughIsTheHardStepWithTheSmoothedVjp) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const auto smooth = std::make_shared<sim::HeightField>(sim::smoothHeightField(bumps, 0.05));
  const int n = 300;
  const WorldSet start = randomWorlds(a.qStand, &bumps, n, 31);
  const WorldSet seeds = randomSeeds(n, 32);
  const sim::SimOptions st = options(a.robot, sim::ContactModel::StraightThrough, &bumps);
  EXPECT_EQ(sim::toStepOptions(st).model, FixedContact::Hard);
  EXPECT_EQ(sim::toStepOptionsBackward(st).model, FixedContact::Smoothed);
  const HeightFieldView onBumps = sim::toView(&bumps), onSmooth = sim::toView(smooth.get());
  WorldSet forward, hard;
  EXPECT_EQ(stepFixed(fm, sim::toStepOptions(st), onBumps, start, forward), 0);
  EXPECT_EQ(stepFixed(fm, sim::toStepOptions(options(a.robot, sim::ContactModel::Hard, &bumps)),
                      onBumps, start, hard), 0);
  EXPECT_EQ(compare(forward, hard).abs, 0);
  for (auto cm : {sim::ContactModel::StraightThrough, sim::ContactModel::Hard,
                  sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
    sim::SimOptions o = options(a.robot, cm, &bumps);
    const FixedOptions backward = sim::toStepOptionsBackward(o);
    WorldSet onTerrain, direct;
    EXPECT_EQ(vjpFixed(fm, backward, sim::backwardView(o), start, seeds, onTerrain), 0);
    if (cm == sim::ContactModel::StraightThrough) {
      const FixedOptions smoothed =
          sim::toStepOptions(options(a.robot, sim::ContactModel::Smoothed, &bumps));
      EXPECT_EQ(vjpFixed(fm, smoothed, onBumps, start, seeds, direct), 0);
      EXPECT_EQ(compareWithTargets(onTerrain, direct).abs, 0);
    }
    o.contact.backwardTerrain = smooth;
    WorldSet onSmoothed, smoothDirect;
    EXPECT_EQ(vjpFixed(fm, sim::toStepOptionsBackward(o), sim::backwardView(o), start, seeds,
                       onSmoothed), 0);
    EXPECT_EQ(vjpFixed(fm, backward, onSmooth, start, seeds, smoothDirect), 0);
    EXPECT_EQ(compareWithTargets(onSmoothed, smoothDirect).abs, 0) << sim::toString(cm);
    // the smoothed ground changes the adjoints
    EXPECT_GT(compareWithTargets(onSmoothed, onTerrain).abs, 1e-3) << sim::toString(cm);
  }
}

namespace {

// The fixed VJP of world w with its parameters' adjoints (the backward model's options fo).
bool fixedParamVjp(const FixedModel& fm, const FixedOptions& fo, const HeightFieldView& view,
                   const WorldSet& in, const WorldSet& seeds, int w, FixedParamBar& p) {
  const double* q = &in.q[w * NQ];
  const double* v = &in.v[w * NV];
  const double* t = &in.target[w * NJ];
  const double* gq = &seeds.q[w * NQ];
  const double* gv = &seeds.v[w * NV];
  FixedAdjoint a;
  setZero(a);
  setZero(p);
  if (fo.model == FixedContact::Soft) {
    auto tape = std::make_unique<FixedSoftTape>();
    return fixedSoftStepVjp(fm, fo, view, q, v, t, gq, gv, *tape, a, p);
  }
  auto tape = std::make_unique<FixedTape>();
  double qn[NQ], vn[NV];
  if (!fixedStepRecord(fm, fo, view, q, v, t, qn, vn, *tape)) return false;
  fixedStepVjp(fm, fo, view, q, v, t, *tape, gq, gv, a, p);
  return true;
}

}  // namespace

// The parameters' adjoints against central differences of the fixed step itself: the derivative
// of <seed, step> along a direction in every parameter at once (friction, kappa, the gains, the
// soft coefficients, each sphere's offset, each body's mass, first moment and a symmetric change
// of its rotational inertia).
TEST(FixedStepVjp, ParameterAdjointsAgreeWithCentralDifferences) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const int n = 6;
  const double eps = 1e-6;
  forEachFdCase(a, n, [&](const FdCase& c) {
    const FixedOptions& fo = c.options;
    std::mt19937 rng(24);
    std::uniform_real_distribution<double> u(-1, 1);
    double worst = 0, largest = 0;
    for (int w = 0; w < n; ++w) {
      FixedParamBar p;
      ASSERT_TRUE(fixedParamVjp(fm, fo, c.view, c.start, c.seeds, w, p));
      // A direction, scaled to each parameter's size.
      FixedParamBar dir;
      setZero(dir);
      dir.mu = 0.1 * u(rng), dir.kappa = 10 * u(rng), dir.kp = u(rng), dir.kd = 0.1 * u(rng);
      dir.softKp = 100 * u(rng), dir.softKd = u(rng), dir.softKf = 10 * u(rng);
      for (int j = 0; j < fm.nspheres; ++j) dir.footOffset[j] = v3(u(rng), u(rng), u(rng));
      for (int i = 0; i < NB; ++i) {
        const SInertia& I = fm.inertia[i];
        dir.inertia[i].m = I.m * u(rng);
        dir.inertia[i].h = v3(0.01 * u(rng), 0.01 * u(rng), 0.01 * u(rng));
        for (int r = 0; r < 3; ++r)
          for (int k = r; k < 3; ++k)
            dir.inertia[i].Io(r, k) = dir.inertia[i].Io(k, r) = 0.01 * u(rng);
      }
      auto objective = [&](double s) {
        FixedModel ms = fm;
        FixedOptions os = fo;
        os.mu += s * dir.mu, os.kappa += s * dir.kappa, os.kp += s * dir.kp;
        os.kd += s * dir.kd, os.softKp += s * dir.softKp, os.softKd += s * dir.softKd;
        os.softKf += s * dir.softKf;
        for (int j = 0; j < fm.nspheres; ++j)
          for (int r = 0; r < 3; ++r) ms.footOffset[j][r] += s * dir.footOffset[j][r];
        for (int i = 0; i < NB; ++i) {
          ms.inertia[i].m += s * dir.inertia[i].m;
          for (int r = 0; r < 3; ++r) ms.inertia[i].h[r] += s * dir.inertia[i].h[r];
          for (int k = 0; k < 9; ++k) ms.inertia[i].Io.e[k] += s * dir.inertia[i].Io.e[k];
        }
        double qn[NQ], vn[NV];
        EXPECT_TRUE(fixedStep(ms, os, c.view, &c.start.q[w * NQ], &c.start.v[w * NV],
                              &c.start.target[w * NJ], qn, vn));
        return seeded(c.seeds, w, qn, vn);
      };
      const double fd = (objective(eps) - objective(-eps)) / (2 * eps);
      double ad = p.mu * dir.mu + p.kappa * dir.kappa + p.kp * dir.kp + p.kd * dir.kd +
                  p.softKp * dir.softKp + p.softKd * dir.softKd + p.softKf * dir.softKf;
      for (int j = 0; j < fm.nspheres; ++j)
        for (int r = 0; r < 3; ++r) ad += p.footOffset[j][r] * dir.footOffset[j][r];
      for (int i = 0; i < NB; ++i) {
        ad += p.inertia[i].m * dir.inertia[i].m;
        for (int r = 0; r < 3; ++r) ad += p.inertia[i].h[r] * dir.inertia[i].h[r];
        for (int k = 0; k < 9; ++k) ad += p.inertia[i].Io.e[k] * dir.inertia[i].Io.e[k];
      }
      expectAgrees(c, w, fd, ad, worst);
      largest = std::max(largest, std::abs(ad));
    }
    std::printf("parameter FD check %s, %s: %d worlds, max rel %.3g, largest %.3g\n",
                sim::toString(c.model), c.groundName, n, worst, largest);
    EXPECT_GT(largest, 1e-3) << "not trivially zero";
  });
}
