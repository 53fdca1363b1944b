// gpu/fixed_step.h compiled for the CPU against sim::step: the functions gpu_check runs on a GPU
// give sim::step's result to rounding, for every contact model, on the plane and on a bumpy height
// field, in and out of contact. Needs no GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "gpu/fixed_convert.h"
#include "gpu/fixed_step.h"
#include "gpu/parity.h"
#include "robots/robot.h"

using namespace diffloco;
using namespace diffloco::gpu;

namespace {

struct Anymal {
  Robot robot = loadRobot("anymal");
  std::vector<double> qStand;
  Anymal() {
    robot.model = feetOnly(robot.model);
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
  EXPECT_GT(a.robot.armature, 0);  // the test covers the armature term
  sim::Model other = a.robot.model;
  other.feet.pop_back();
  EXPECT_THROW(toFixed(other), std::invalid_argument);
}

TEST(FixedStep, MatchesSimStepOnPlaneAndHeightField) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const sim::HeightField bumps = bumpyField(0.04, 11);
  const int n = 1000;
  for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
    const WorldSet start = randomWorlds(a.qStand, ground, n, ground ? 5 : 4);
    const HeightFieldView view = toView(ground);
    const ContactCoverage cov = contactCoverage(fm, view, start);
    EXPECT_GT(cov.none, n / 20);  // worlds out of contact, partly in, fully in
    EXPECT_GT(cov.some, n / 20);
    EXPECT_GT(cov.all, n / 20);
    for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
      sim::SimOptions o = options(a.robot, cm);
      if (ground) o.contact.terrain = std::make_shared<sim::HeightField>(bumps);
      WorldSet dyn, fix;
      EXPECT_EQ(stepDynamic(a.robot.model, o, start, dyn), 0);
      EXPECT_EQ(stepFixed(fm, toFixed(o), view, start, fix), 0);
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

// The smoothed model with a finite cutoff leaves far feet out of the problem (a varying contact
// count through the same code path as the hard model).
TEST(FixedStep, SmoothedWithCutoffMatches) {
  const Anymal a;
  const FixedModel fm = toFixed(a.robot.model);
  const WorldSet start = randomWorlds(a.qStand, nullptr, 300, 9);
  sim::SimOptions o = options(a.robot, sim::ContactModel::Smoothed);
  o.contact.cutoff = 0.01;
  WorldSet dyn, fix;
  stepDynamic(a.robot.model, o, start, dyn);
  stepFixed(fm, toFixed(o), toView(nullptr), start, fix);
  EXPECT_LE(compare(fix, dyn).rel, 1e-10);
}

// The fixed sizes are those of a 12-joint quadruped with 4 feet: every robot shipped in
// configs/robots fits them, each with its own dt, drive and armature.
TEST(FixedStep, MatchesSimStepOnEveryShippedRobot) {
  const sim::HeightField bumps = bumpyField(0.02, 12);
  for (const char* name : {"anymal", "quadruped", "go_like"}) {
    Robot r = loadRobot(name);
    r.model = feetOnly(r.model);
    for (auto& j : r.model.joints) j.armature = r.armature;
    const sim::VecX qs = r.standingConfiguration();
    const std::vector<double> qStand(qs.data(), qs.data() + qs.size());
    const FixedModel fm = toFixed(r.model);
    for (const sim::HeightField* ground : {static_cast<const sim::HeightField*>(nullptr), &bumps}) {
      const WorldSet start = randomWorlds(qStand, ground, 300, 21);
      const ContactCoverage cov = contactCoverage(fm, toView(ground), start);
      EXPECT_GT(cov.some + cov.all, 30) << name;
      for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
        sim::SimOptions o = options(r, cm);
        if (ground) o.contact.terrain = std::make_shared<sim::HeightField>(bumps);
        WorldSet dyn, fix;
        EXPECT_EQ(stepDynamic(r.model, o, start, dyn), 0) << name;
        EXPECT_EQ(stepFixed(fm, toFixed(o), toView(ground), start, fix), 0) << name;
        const Difference d = compare(fix, dyn);
        EXPECT_LE(d.rel, 1e-10) << name << ", " << sim::toString(cm)
                                << (ground ? " on the height field" : " on the plane") << ": world "
                                << d.world << ", max abs " << d.abs;
      }
    }
  }
}
