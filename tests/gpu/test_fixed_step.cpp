// sim/moreau_step.h compiled for the CPU against sim::step: the functions gpu_check runs on a GPU
// give sim::step's result to rounding, for every contact model, on the plane and on height fields
// (both interpolants, vertical and closest-point contact), in and out of contact. Needs no GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gpu/parity.h"
#include "robots/robot.h"
#include "sim/moreau_step.h"
#include "sim/pack.h"
#include "tests/gpu/eigen_reference.h"

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

sim::SimOptions options(const Robot& r, sim::ContactModel cm) {
  sim::SimOptions o;
  o.dt = r.dt;
  o.actuator = r.actuator;
  o.contact.model = cm;
  return o;
}

}  // namespace

TEST(FixedStep, AnymalFitsTheFixedSizes) {
  const Anymal a;
  EXPECT_EQ(a.robot.model.nbodies(), NB);
  EXPECT_EQ(a.robot.model.nfeet(), NFEET);
  EXPECT_EQ(a.robot.model.nspheres(), MAXSPHERES);  // its knees and shank tubes
  EXPECT_EQ(sim::toStepModel<sim::Quadruped>(a.robot.model).nspheres, MAXSPHERES);
  EXPECT_GT(a.robot.armature, 0);  // the test covers the armature term
  sim::Model other = a.robot.model;
  other.feet.pop_back();
  EXPECT_THROW(sim::toStepModel<sim::Quadruped>(other), std::invalid_argument);
  other = a.robot.model;
  other.legSpheres.push_back(other.legSpheres.back());
  other.finalize();
  EXPECT_THROW(sim::toStepModel<sim::Quadruped>(other), std::invalid_argument);
}

// The contact problem holds every sphere: the base lying on the ground, every leg sphere deep in
// it, steps as sim::step does in every model.
TEST(FixedStep, EverySphereFitsTheContactProblem) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  EXPECT_EQ(MAXACTIVE, MAXSPHERES);
  WorldSet w;
  w.n = 1;
  w.q = a.qStand;
  w.q[2] = 0.1;
  w.v.assign(NV, 0.0);
  w.target.assign(a.qStand.begin() + 7, a.qStand.end());
  EXPECT_GT(contactCoverage(fm, sim::toView(nullptr), w).most, 16);
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
    const sim::SimOptions o = options(a.robot, cm);
    WorldSet dyn, fix;
    EXPECT_EQ(stepEigen(a.robot.model, o, w, dyn), 0) << sim::toString(cm);
    EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), sim::toView(nullptr), w, fix), 0)
        << sim::toString(cm);
    const Difference d = compare(fix, dyn);
    std::printf("%s, every sphere in the problem: max rel %.3g\n", sim::toString(cm), d.rel);
    EXPECT_LE(d.rel, 1e-9) << sim::toString(cm) << ": max abs " << d.abs;
  }
}

TEST(FixedStep, MatchesSimStepOnPlaneAndHeightField) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const int n = 1000;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 5 : 4);
    const HeightFieldView view = sim::toView(ground);
    const ContactCoverage cov = contactCoverage(fm, view, start);
    std::printf("%s: feet touching none/some/all %d/%d/%d, legs %d, most spheres %d\n",
                ground ? "height field" : "plane", cov.none, cov.some, cov.all, cov.legs, cov.most);
    EXPECT_GT(cov.none, n / 40);  // worlds out of contact, partly in, fully in
    EXPECT_GT(cov.some, n / 20);
    EXPECT_GT(cov.all, n / 20);
    EXPECT_GT(cov.legs, n / 10);  // knees and shanks on the ground
    for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      sim::SimOptions o = options(a.robot, cm);
      if (ground) o.contact.terrain = std::make_shared<sim::HeightField>(bumps);
      WorldSet dyn, fix;
      EXPECT_EQ(stepEigen(a.robot.model, o, start, dyn), 0);
      EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), view, start, fix), 0);
      const Difference d = compare(fix, dyn);
      std::printf("%s, %s: max rel %.3g, max abs %.3g\n", sim::toString(cm),
                  ground ? "height field" : "plane", d.rel, d.abs);
      EXPECT_LE(d.rel, 1e-10) << sim::toString(cm) << (ground ? " on the height field" : " on the plane")
                              << ": world " << d.world << ", max abs " << d.abs;
      // The step must have done something: states move by more than rounding.
      EXPECT_GT(compare(dyn, start).abs, 1e-3);
    }
  }
}

// The terrain options beside the default (vertical contact, Catmull-Rom): the closest-point
// contact and the monotone interpolant, each and both, on bumps and on stairs (risers, where the
// closest point lies farthest from the one under a sphere).
TEST(FixedStep, MatchesSimStepWithClosestContactAndMonotoneSurface) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  for (const TerrainOption& t : terrainOptions({bumpyField(0.04, 14), stairsField(0.08, 0.3)})) {
    const WorldSet start = randomWorlds(a.qStand, t.field.get(), 300, 15);
    const HeightFieldView view = sim::toView(t.field.get());
    ASSERT_NE(view.cellBounds, nullptr);
    EXPECT_EQ(view.monotone, t.field->interpolant == sim::Interpolant::Monotone);
    for (auto cm :
         {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      sim::SimOptions o = options(a.robot, cm);
      o.contact.terrain = t.field;
      o.contact.terrainContact = t.contact;
      const FixedOptions fo = sim::toStepOptions(o);
      EXPECT_EQ(fo.closestTerrain, t.contact == sim::TerrainContact::Closest);
      WorldSet dyn, fix;
      EXPECT_EQ(stepEigen(a.robot.model, o, start, dyn), 0);
      EXPECT_EQ(stepFixed(fm, fo, view, start, fix), 0);
      const Difference d = compare(fix, dyn);
      std::printf("%s, %s: max rel %.3g\n", sim::toString(cm), t.name.c_str(), d.rel);
      EXPECT_LE(d.rel, 1e-10) << sim::toString(cm) << ", " << t.name << ": world " << d.world;
      EXPECT_GT(compare(dyn, start).abs, 1e-3);
    }
  }
}

// The smoothed model with a finite cutoff leaves far feet out of the problem (a varying contact
// count through the same code path as the hard model).
TEST(FixedStep, SmoothedWithCutoffMatches) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  const WorldSet start = randomWorlds(a.qStand, nullptr, 300, 9);
  sim::SimOptions o = options(a.robot, sim::ContactModel::Smoothed);
  o.contact.cutoff = 0.01;
  WorldSet dyn, fix;
  stepEigen(a.robot.model, o, start, dyn);
  stepFixed(fm, sim::toStepOptions(o), sim::toView(nullptr), start, fix);
  EXPECT_LE(compare(fix, dyn).rel, 1e-10);
}

// The leg spheres' depth bound from the cells (a finalized field, every task's ground) and from
// the 16 samples around each sphere (a field without cell bounds) settle the same spheres: both
// bound the true depth, so the two give the same steps, and both agree with sim::step.
TEST(FixedStep, CellBoundsAndSampleBoundsGiveTheSameStep) {
  const Anymal a;
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(a.robot.model);
  for (auto ip : {sim::Interpolant::CatmullRom, sim::Interpolant::Monotone})
    for (auto tc : {sim::TerrainContact::Vertical, sim::TerrainContact::Closest}) {
      auto bumps = std::make_shared<sim::HeightField>(bumpyField(0.04, 12));
      bumps->interpolant = ip;
      bumps->finalize();
      const WorldSet start = randomWorlds(a.qStand, bumps.get(), 300, 13);
      for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed}) {
        sim::SimOptions o = options(a.robot, cm);
        o.contact.terrain = bumps;
        o.contact.terrainContact = tc;
        HeightFieldView cells = sim::toView(bumps.get()), samples = cells;
        ASSERT_NE(cells.cellBounds, nullptr);
        samples.cellBounds = nullptr;
        WorldSet dyn, fromCells, fromSamples;
        stepEigen(a.robot.model, o, start, dyn);
        const std::string what =
            std::string(sim::toString(cm)) + ", " + sim::toString(ip) + ", " + sim::toString(tc);
        EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), cells, start, fromCells), 0) << what;
        stepFixed(fm, sim::toStepOptions(o), samples, start, fromSamples);
        EXPECT_EQ(compare(fromCells, fromSamples).abs, 0) << what;
        EXPECT_LE(compare(fromCells, dyn).rel, 1e-10) << what;
      }
    }
}

// The fixed sizes are those of a 12-joint quadruped with 4 feet and up to MAXLEG leg spheres:
// every robot shipped in configs/robots fits them, each with its own dt, drive and armature.
TEST(FixedStep, MatchesSimStepOnEveryShippedRobot) {
  const sim::HeightField bumps = bumpyField(0.02, 12);
  for (const char* name : {"anymal", "quadruped", "go_like"}) {
    Robot r = loadRobot(name);
    for (auto& j : r.model.joints) j.armature = r.armature;
    const sim::VecX qs = r.standingConfiguration();
    const std::vector<double> qStand(qs.data(), qs.data() + qs.size());
    const FixedModel fm = sim::toStepModel<sim::Quadruped>(r.model);
    for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
      const WorldSet start = randomWorlds(qStand, ground, 300, 21);
      const ContactCoverage cov = contactCoverage(fm, sim::toView(ground), start);
      EXPECT_GT(cov.some + cov.all, 30) << name;
      for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
        sim::SimOptions o = options(r, cm);
        if (ground) o.contact.terrain = std::make_shared<sim::HeightField>(bumps);
        WorldSet dyn, fix;
        EXPECT_EQ(stepEigen(r.model, o, start, dyn), 0) << name;
        EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), sim::toView(ground), start, fix), 0) << name;
        const Difference d = compare(fix, dyn);
        EXPECT_LE(d.rel, 1e-10) << name << ", " << sim::toString(cm)
                                << (ground ? " on the height field" : " on the plane") << ": world "
                                << d.world << ", max abs " << d.abs;
      }
    }
  }
}
