// sim/moreau_step_vjp.h and sim/soft_step_vjp.h compiled for the CPU: the VJP of the fixed-size
// hard, smoothed and soft steps against sim::stepVjp on random worlds in and out of contact, on the
// plane and on height fields (both interpolants, vertical and closest-point contact), and against
// central differences of the fixed forward step itself. Needs no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "gpu/parity.h"
#include "robots/robot.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#include "sim/step_vjp.h"
#include "tests/gpu/eigen_reference.h"

using namespace diffloco;
using namespace diffloco::gpu;
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

double largest(const std::vector<double>& x) {
  double m = 0;
  for (double e : x) m = std::max(m, std::abs(e));
  return m;
}

// The central-difference checks' cases: the plane, a bumpy height field, the same bumps on the
// monotone surface with the closest-point contact, and stairs with the closest-point contact, each
// in the hard, smoothed and soft models, from the same random worlds and output seeds.
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

TEST(FixedStepVjp, MatchesSimStepVjpOnPlaneAndHeightField) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const int n = 1000;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 7 : 6);
    const WorldSet seeds = randomSeeds(n, ground ? 9 : 8);
    const HeightFieldView view = sim::toView(ground);
    const ContactCoverage cov = contactCoverage(fm, view, start);
    EXPECT_GT(cov.none, n / 40);  // worlds out of contact, partly in, fully in
    EXPECT_GT(cov.some, n / 20);
    EXPECT_GT(cov.all, n / 20);
    EXPECT_GT(cov.legs, n / 10);  // knees and shanks on the ground
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      const sim::SimOptions o = options(a.robot, cm, ground);
      WorldSet dyn, fix;
      EXPECT_EQ(vjpEigen(a.robot.model, o, start, seeds, dyn), 0);
      EXPECT_EQ(vjpFixed(fm, sim::toStepOptions(o), view, start, seeds, fix), 0);
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

// The closest-point contact and the monotone surface, on bumps and on stairs.
TEST(FixedStepVjp, MatchesSimStepVjpWithClosestContactAndMonotoneSurface) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const int n = 300;
  for (const TerrainOption& t : terrainOptions({bumpyField(0.04, 16), stairsField(0.08, 0.3)})) {
    const WorldSet start = randomWorlds(a.qStand, t.field.get(), n, 17);
    const WorldSet seeds = randomSeeds(n, 18);
    const HeightFieldView view = sim::toView(t.field.get());
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      sim::SimOptions o = options(a.robot, cm, nullptr);
      o.contact.terrain = t.field;
      o.contact.terrainContact = t.contact;
      const FixedOptions fo = sim::toStepOptions(o);
      WorldSet dyn, fix;
      EXPECT_EQ(vjpEigen(a.robot.model, o, start, seeds, dyn), 0);
      EXPECT_EQ(vjpFixed(fm, fo, view, start, seeds, fix), 0);
      const Difference d = compareWithTargets(fix, dyn);
      std::printf("VJP %s, %s: max rel %.3g, max abs %.3g\n", sim::toString(cm), t.name.c_str(),
                  d.rel, d.abs);
      // The soft model's sub-steps differentiate the closest point through the inverse of its
      // Hessian, which amplifies rounding: moving these worlds' inputs by 1e-15 (relative) moves
      // sim::stepVjp's soft adjoints by up to 4e-11 with the closest point and 2e-12 with the
      // vertical contact, and the two codes round differently.
      const bool amplifies =
          cm == sim::ContactModel::Soft && t.contact == sim::TerrainContact::Closest;
      EXPECT_LE(d.rel, amplifies ? 1e-9 : 1e-10)
          << sim::toString(cm) << ", " << t.name << ": world " << d.world;
      EXPECT_GT(largest(dyn.target), 1e-3);
    }
  }
}

// The smoothed model with a finite cutoff: a varying contact count through the VJP.
TEST(FixedStepVjp, SmoothedWithCutoffMatches) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const int n = 300;
  const WorldSet start = randomWorlds(a.qStand, nullptr, n, 12);
  const WorldSet seeds = randomSeeds(n, 13);
  sim::SimOptions o = options(a.robot, sim::ContactModel::Smoothed, nullptr);
  o.contact.cutoff = 0.01;
  WorldSet dyn, fix;
  EXPECT_EQ(vjpEigen(a.robot.model, o, start, seeds, dyn), 0);
  EXPECT_EQ(vjpFixed(fm, sim::toStepOptions(o), sim::toView(nullptr), start, seeds, fix), 0);
  const Difference d = compareWithTargets(fix, dyn);
  std::printf("VJP smoothed, cutoff 1 cm: max rel %.3g\n", d.rel);
  EXPECT_LE(d.rel, 1e-10) << "world " << d.world;
}

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

// straight_through (its VJP is the smoothed model's at the state) and a straight-through terrain
// (the VJP of the step on a smoothed copy of the ground): what sim::toStepOptionsBackward and
// sim::backwardView hand the fixed VJP, against sim::stepVjp with the same options.
TEST(FixedStepVjp, StraightThroughAndBackwardTerrainMatch) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
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
      EXPECT_EQ(vjpEigen(a.robot.model, o, start, seeds, dyn), 0);
      EXPECT_EQ(
          vjpFixed(fm, sim::toStepOptionsBackward(o), sim::backwardView(o), start, seeds, fix), 0);
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
  EXPECT_EQ(stepEigen(a.robot.model, o, start, dyn), 0);
  EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), sim::toView(&bumps), start, fix), 0);
  EXPECT_LE(compare(fix, dyn).rel, 1e-10);
  EXPECT_EQ(sim::toStepOptions(o).model, FixedContact::Hard);
  EXPECT_EQ(sim::toStepOptionsBackward(o).model, FixedContact::Smoothed);
}

namespace {

// Every parameter adjoint of a sim::ParamGrad as one list: the scalars, each sphere's offset, each
// body's contracted mass and its (m, h, Io).
std::vector<double> flatten(const sim::ParamGrad& g) {
  std::vector<double> x = {g.mu, g.kappa, g.kp, g.kd, g.softKp, g.softKd, g.softKf};
  for (const sim::Vec3& o : g.footOffset) x.insert(x.end(), o.data(), o.data() + 3);
  for (int i = 0; i < g.mass.size(); ++i) x.push_back(g.mass[i]);
  for (const sim::InertiaBar& b : g.inertia) {
    x.push_back(b.m);
    x.insert(x.end(), b.h.data(), b.h.data() + 3);
    x.insert(x.end(), b.Io.data(), b.Io.data() + 9);
  }
  return x;
}

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

// The parameters' adjoints (sim/param_bar.h) against sim::stepVjp's ParamGrad, world by
// world: friction, kappa, the PD gains, the soft coefficients, the spheres' offsets, the bodies'
// masses and inertias, in every contact model on the plane and the height field.
TEST(FixedStepVjp, ParameterAdjointsMatchSimStepVjp) {
  const Anymal a;
  const sim::Model& model = a.robot.model;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const auto smooth = std::make_shared<sim::HeightField>(sim::smoothHeightField(bumps, 0.05));
  const int n = 200;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 41 : 40);
    const WorldSet seeds = randomSeeds(n, 42);
    for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft,
                    sim::ContactModel::StraightThrough}) {
      sim::SimOptions o = options(a.robot, cm, ground);
      if (ground && cm == sim::ContactModel::StraightThrough) o.contact.backwardTerrain = smooth;
      const FixedOptions fo = sim::toStepOptionsBackward(o);
      const HeightFieldView view = sim::backwardView(o);
      double worst = 0, largestSim = 0;
      std::vector<double> largestEach;
      int failed = 0;
      for (int w = 0; w < n; ++w) {
        FixedParamBar p;
        if (!fixedParamVjp(fm, fo, view, start, seeds, w, p)) {
          ++failed;
          continue;
        }
        sim::Data data(model);
        sim::StepAdjoint adj(model);
        const Eigen::Map<const sim::VecX> q(&start.q[w * NQ], NQ), v(&start.v[w * NV], NV),
            t(&start.target[w * NJ], NJ), gq(&seeds.q[w * NQ], NQ), gv(&seeds.v[w * NV], NV);
        sim::stepVjp(model, o, data, q, v, t, gq, gv, adj);
        const std::vector<double> fix = flatten(sim::toParamGrad(model, p)),
                                  dyn = flatten(adj.params);
        ASSERT_EQ(fix.size(), dyn.size());
        largestEach.resize(dyn.size(), 0.0);
        for (size_t k = 0; k < dyn.size(); ++k) {
          const double rel = std::abs(fix[k] - dyn[k]) / (1 + std::abs(dyn[k]));
          EXPECT_LE(rel, 1e-10) << sim::toString(cm) << (ground ? " height field" : " plane")
                                << ", world " << w << ", entry " << k << ": fixed " << fix[k]
                                << ", sim " << dyn[k];
          worst = std::max(worst, rel);
          largestSim = std::max(largestSim, std::abs(dyn[k]));
          largestEach[k] = std::max(largestEach[k], std::abs(dyn[k]));
        }
      }
      std::printf("parameter adjoints %s, %s: max rel %.3g, largest %.3g\n", sim::toString(cm),
                  ground ? "height field" : "plane", worst, largestSim);
      EXPECT_EQ(failed, 0);
      // not trivially zero: friction, the gains, every sphere offset's body and every body's mass
      const bool soft = cm == sim::ContactModel::Soft;
      EXPECT_GT(largestEach[0], 1e-6) << "mu";
      EXPECT_GT(largestEach[2], 1e-6) << "kp";
      EXPECT_GT(largestEach[3], 1e-9) << "kd";
      if (cm == sim::ContactModel::Smoothed || cm == sim::ContactModel::StraightThrough) {
        EXPECT_GT(largestEach[1], 1e-9) << "kappa";
      }
      if (soft) {
        EXPECT_GT(largestEach[4], 1e-9) << "soft_kp";
      }
      const size_t offsets = 7, masses = offsets + 3 * model.nspheres();
      for (int i = 0; i < model.nbodies(); ++i)
        EXPECT_GT(largestEach[masses + i], 1e-9) << "mass of body " << i;
      EXPECT_GT(largestEach[offsets + 2], 1e-9) << "first foot's offset z";
    }
  }
}

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
    double worst = 0;
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
    }
    std::printf("parameter FD check %s, %s: %d worlds, max rel %.3g\n", sim::toString(c.model),
                c.groundName, n, worst);
  });
}
