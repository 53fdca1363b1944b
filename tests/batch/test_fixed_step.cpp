// sim/moreau_step.h compiled for the CPU over sets of worlds (batch/world_set.h, what gpu_check runs
// on a GPU): ANYmal and every shipped robot fit the quadruped sizes, every sphere fits the contact
// problem, the two depth bounds of the leg spheres give the same steps, and every model steps
// worlds in and out of contact on the plane and on height fields. The step's physics is checked
// against MuJoCo and by finite differences in tests/sim. Needs no GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "batch/world_set.h"
#include "robots/robot.h"
#include "sim/moreau_step.h"
#include "sim/pack.h"

using namespace diffloco;
using namespace diffloco::batch;

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
// it, each model steps to a finite state in which the ground has held the robot.
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
    WorldSet fix;
    std::vector<char> failed;
    EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), sim::toView(nullptr), w, fix, &failed), 0)
        << sim::toString(cm);
    // Gravity alone would leave the base falling at g dt; the ground takes most of that away.
    std::printf("%s, every sphere in the problem: base vz %.3g m/s\n", sim::toString(cm), fix.v[2]);
    EXPECT_GT(fix.v[2], -0.1 * 9.81 * o.dt) << sim::toString(cm);
  }
}

// The leg spheres' depth bound from the cells (a finalized field, every task's ground) and from
// the 16 samples around each sphere (a field without cell bounds) settle the same spheres: both
// bound the true depth, so the two give the same steps.
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
        WorldSet fromCells, fromSamples;
        const std::string what =
            std::string(sim::toString(cm)) + ", " + sim::toString(ip) + ", " + sim::toString(tc);
        EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), cells, start, fromCells), 0) << what;
        stepFixed(fm, sim::toStepOptions(o), samples, start, fromSamples);
        EXPECT_EQ(compare(fromCells, fromSamples).abs, 0) << what;
        EXPECT_GT(compare(fromCells, start).abs, 1e-3) << what;  // the step moved the worlds
      }
    }
}

// The fixed sizes are those of a 12-joint quadruped with 4 feet and up to MAXLEG leg spheres:
// every robot shipped in configs/robots fits them, each with its own dt, drive and armature, and
// steps its worlds, in and out of contact, to finite states in every model.
TEST(FixedStep, EveryShippedRobotSteps) {
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
        WorldSet fix;
        EXPECT_EQ(stepFixed(fm, sim::toStepOptions(o), sim::toView(ground), start, fix), 0) << name;
        EXPECT_GT(compare(fix, start).abs, 1e-3) << name << ", " << sim::toString(cm);
      }
    }
  }
}
