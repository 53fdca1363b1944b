// The host-and-device stages instantiated for one free body (sim::SingleBody, no joints): the
// identification's cube (8 corner spheres) and a ball (one sphere), tumbling down onto the plane
// and onto a bumpy slope (vertical and closest-point contact), in the hard, smoothed and soft
// models. Along each of the stages' drops: their VJP (called as batch::BatchSim calls it) against
// central differences of their own forward step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ident/sysid.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#include "sim/terrain.h"
#include "tests/sim/stages.h"

using namespace diffloco;

namespace {

using D = sim::SingleBody;
using BodyModel = sim::StepModel<D>;
constexpr int NQ = D::NQ, NV = D::NV;
// A free body has no joint targets; the stages read none (their joint loops run to NJ = 0).
const double kNoTargets[1] = {0.0};
constexpr int kSteps = 120;  // 0.6 s at the cube's 5 ms: the fall, the landing, the tumble after

struct Body {
  const char* name;
  sim::Model model;
};

// The identification's cube (sysid::cubeModel, 8 corner spheres) and a ball: the same body with
// one sphere of 5 cm at its centre (fewer spheres than D::NFEET, as the toys have).
std::vector<Body> bodies() {
  const sim::Model cube = sysid::cubeSystem().model;
  sim::Model ball = cube;
  ball.name = "ball";
  ball.feet.resize(1);
  ball.feet[0].offset = sim::Vec3::Zero();
  ball.feet[0].radius = 0.05;
  ball.finalize();
  return {{"cube", cube}, {"ball", ball}};
}

// A slope of 0.2 along x with 1 cm bumps, over [-2, 2]^2 m at 5 cm spacing: the spheres meet it
// with tilted, curved normals.
std::shared_ptr<sim::HeightField> bumpySlope() {
  auto hf = std::make_shared<sim::HeightField>();
  hf->originX = hf->originY = -2.0;
  hf->spacing = 0.05;
  hf->nx = hf->ny = 81;
  for (int iy = 0; iy < hf->ny; ++iy)
    for (int ix = 0; ix < hf->nx; ++ix) {
      const double x = hf->originX + ix * hf->spacing, y = hf->originY + iy * hf->spacing;
      hf->heights.push_back(0.2 * x + 0.01 * std::sin(20 * x) * std::cos(15 * y));
    }
  hf->finalize();
  return hf;
}

struct Ground {
  const char* name;
  std::shared_ptr<const sim::HeightField> field;  // null: the plane
  sim::TerrainContact contact;
};

std::vector<Ground> grounds() {
  const std::shared_ptr<const sim::HeightField> slope = bumpySlope();
  return {{"plane", nullptr, sim::TerrainContact::Vertical},
          {"bumpy slope", slope, sim::TerrainContact::Vertical},
          {"bumpy slope, closest point", slope, sim::TerrainContact::Closest}};
}

// The cube's identification options (5 ms, mu 0.3, the soft coefficients scaled to its mass).
sim::SimOptions options(sim::ContactModel cm, const Ground& g) {
  sim::SimOptions o = sysid::cubeSystem().opt;
  o.contact.model = cm;
  o.contact.terrain = g.field;
  o.contact.terrainContact = g.contact;
  return o;
}

std::string describe(const Body& b, const Ground& g, sim::ContactModel cm) {
  return std::string(b.name) + ", " + g.name + ", " + sim::toString(cm);
}

// The stages' states along a drop: 15 cm above the ground under it, tilted, moving sideways and
// down and spinning about all three axes.
struct Trajectory {
  std::vector<sim::VecX> q, v;
};

Trajectory drop(const sim::Model& model, const sim::SimOptions& o) {
  sim::VecX q = sim::neutralConfiguration(model), v(NV);
  sim::Quat tilt(0.9, 0.3, -0.2, 0.25);
  tilt.normalize();
  q[3] = tilt.w(), q[4] = tilt.x(), q[5] = tilt.y(), q[6] = tilt.z();
  q[2] = sim::groundHeight(o.contact.terrain.get(), q[0], q[1]) + 0.15;
  v << 0.4, -0.2, -0.8, 6, -4, 8;
  Trajectory t{{q}, {v}};
  const test::Stages<D> st(model, o);
  sim::VecX qn(NQ), vn(NV);
  for (int k = 0; k < kSteps; ++k) {
    EXPECT_TRUE(st.step(t.q.back(), t.v.back(), sim::VecX::Zero(0), qn, vn)) << "step " << k;
    t.q.push_back(qn);
    t.v.push_back(vn);
  }
  return t;
}

// Spheres touching the ground (depth >= 0) at configuration q, through the stages' own geometry.
int spheresTouching(const BodyModel& m, sim::FixedOptions o, const sim::HeightFieldView& view,
                    const double* q) {
  sim::StepData<D> d;
  sim::Contacts<D> fc;
  sim::forwardKinematics(m, d, q);
  o.footEntry = o.legEntry = 0;
  sim::collectContacts(m, o, d, view, fc);
  return fc.nc;
}

}  // namespace

// The cube fits sim::SingleBody, and so does a body with fewer spheres; the sizes name what does
// not fit.
TEST(SingleBodyStep, CubeFitsTheSingleBodySizes) {
  const sim::Model cube = sysid::cubeSystem().model;
  EXPECT_EQ(sim::notInStepModel<D>(cube), "");
  const BodyModel m = sim::toStepModel<D>(cube);
  EXPECT_EQ(m.nspheres, 8);
  for (int a = 0; a < m.nspheres; ++a) {
    EXPECT_EQ(m.footBody[a], 0);
    EXPECT_EQ(m.footDofCount[a], 6);  // the base's dofs
    for (int b = 0; b < m.nspheres; ++b) EXPECT_EQ(m.footCommon[a][b], 6);
  }
  for (int k = 0; k < NV; ++k) EXPECT_EQ(m.dofParent[k], k - 1);
  // The quadruped's sizes refuse the cube, by its body count.
  EXPECT_NE(sim::notInStepModel<sim::Quadruped>(cube).find("1 body"), std::string::npos)
      << sim::notInStepModel<sim::Quadruped>(cube);
  EXPECT_THROW(sim::toStepModel<sim::Quadruped>(cube), std::invalid_argument);
  sim::Model one = cube;
  one.feet.resize(1);
  one.finalize();
  EXPECT_EQ(sim::toStepModel<D>(one).nspheres, 1);
  sim::Model nine = cube;
  nine.feet.push_back(nine.feet.back());
  nine.finalize();
  EXPECT_NE(sim::notInStepModel<D>(nine).find("9 feet"), std::string::npos)
      << sim::notInStepModel<D>(nine);
  EXPECT_THROW(sim::toStepModel<D>(nine), std::invalid_argument);
  sim::Model withLeg = one;  // a leg sphere would take a foot's place in the stages
  withLeg.legSpheres.push_back(cube.feet[1]);
  withLeg.finalize();
  EXPECT_THROW(sim::toStepModel<D>(withLeg), std::invalid_argument);
}

// Every drop falls through the air, then touches the ground.
TEST(SingleBodyStep, TumblingDropsFallThenTouch) {
  for (const Body& b : bodies()) {
    const BodyModel m = sim::toStepModel<D>(b.model);
    for (const Ground& g : grounds())
      for (auto cm :
           {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
        const sim::SimOptions o = options(cm, g);
        const sim::FixedOptions fo = sim::toStepOptions(o);
        const sim::HeightFieldView view = sim::toView(g.field.get());
        const Trajectory ref = drop(b.model, o);
        int touching = 0;
        for (int k = 0; k < kSteps; ++k)
          touching += spheresTouching(m, fo, view, ref.q[k].data()) > 0;
        std::printf("%s: %d of %d steps touching\n", describe(b, g, cm).c_str(), touching, kSteps);
        // The fall in the air, then contact (the soft model bounces: its damping acts only on
        // approach, so a contact lasts a few steps between flights).
        EXPECT_LT(touching, kSteps) << describe(b, g, cm);
        EXPECT_GE(touching, 10) << describe(b, g, cm);
      }
  }
}

namespace {

// The stages' VJP as batch::BatchSim::vjpWorld calls it: the soft model's own, else the hard or
// smoothed step recorded on a tape and run backwards. False when the forward step failed.
bool stageVjp(const BodyModel& m, const sim::FixedOptions& o, const sim::HeightFieldView& view,
              const double* q, const double* v, const double* gq, const double* gv,
              sim::StateAdjoint<D>& out) {
  sim::setZero(out);
  if (o.model == sim::FixedContact::Soft) {
    auto tape = std::make_unique<sim::SoftTape<D>>();
    return sim::fixedSoftStepVjp(m, o, view, q, v, kNoTargets, gq, gv, *tape, out);
  }
  auto tape = std::make_unique<sim::StepTape<D>>();
  double qn[NQ], vn[NV];
  if (!sim::fixedStepRecord(m, o, view, q, v, kNoTargets, qn, vn, *tape)) return false;
  sim::fixedStepVjp(m, o, view, q, v, kNoTargets, *tape, gq, gv, out);
  return true;
}

// The seeds of one VJP: the adjoints of (q', v'), every entry uniform in [-1, 1].
struct Seeds {
  double q[NQ], v[NV];
};

Seeds randomSeeds(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Seeds s;
  for (double& x : s.q) x = u(rng);
  for (double& x : s.v) x = u(rng);
  return s;
}

// <seeds, (q', v')> after the stages' step from (q + s dq, v + s dv).
double seededStep(const BodyModel& m, const sim::FixedOptions& o, const sim::HeightFieldView& view,
                  const double* q, const double* v, const Seeds& dir, double s,
                  const Seeds& seeds) {
  double qs[NQ], vs[NV], qn[NQ], vn[NV];
  for (int k = 0; k < NQ; ++k) qs[k] = q[k] + s * dir.q[k];
  for (int k = 0; k < NV; ++k) vs[k] = v[k] + s * dir.v[k];
  EXPECT_TRUE(sim::fixedStep(m, o, view, qs, vs, kNoTargets, qn, vn));
  double f = 0;
  for (int k = 0; k < NQ; ++k) f += seeds.q[k] * qn[k];
  for (int k = 0; k < NV; ++k) f += seeds.v[k] * vn[k];
  return f;
}

// What one drop's VJP checks found: the largest gap, and the central differences passed over
// because the step is not differentiable within their reach (a contact or friction switch).
struct VjpChecks {
  double worstFd = 0, largestAdjoint = 0;
  int fdCompared = 0, fdStraddling = 0;
};

// At every 8th state of the drop, the stages' VJP along two random directions against central
// differences of the stages' forward step. A central difference that moves when its step shrinks
// tenfold straddles a switch and is counted apart, not compared.
VjpChecks checkVjpAlongDrop(const BodyModel& m, const sim::SimOptions& o, const Trajectory& ref) {
  const sim::FixedOptions fo = sim::toStepOptionsBackward(o);
  const sim::HeightFieldView view = sim::backwardView(o);
  const double eps = 1e-6;
  std::mt19937 rng(5);
  VjpChecks r;
  for (int k = 0; k < kSteps; k += 8) {
    const double* q = ref.q[k].data();
    const double* v = ref.v[k].data();
    const Seeds seeds = randomSeeds(rng);
    sim::StateAdjoint<D> adj;
    EXPECT_TRUE(stageVjp(m, fo, view, q, v, seeds.q, seeds.v, adj)) << "state " << k;
    for (int i = 0; i < NV; ++i) r.largestAdjoint = std::max(r.largestAdjoint, std::abs(adj.v[i]));
    for (int t = 0; t < 2; ++t) {
      const Seeds dir = randomSeeds(rng);
      auto central = [&](double h) {
        return (seededStep(m, fo, view, q, v, dir, h, seeds) -
                seededStep(m, fo, view, q, v, dir, -h, seeds)) /
               (2 * h);
      };
      const double fd = central(eps), fdFine = central(0.1 * eps);
      if (std::abs(fd - fdFine) > 1e-4 * (1 + std::abs(fd))) {
        ++r.fdStraddling;
        continue;
      }
      double ad = 0;
      for (int i = 0; i < NQ; ++i) ad += adj.q[i] * dir.q[i];
      for (int i = 0; i < NV; ++i) ad += adj.v[i] * dir.v[i];
      const double rel = std::abs(fd - ad) / (1 + std::abs(ad));
      r.worstFd = std::max(r.worstFd, rel);
      ++r.fdCompared;
      EXPECT_LE(rel, 1e-5) << "state " << k << ": FD " << fd << ", VJP " << ad;
    }
  }
  return r;
}

}  // namespace

TEST(SingleBodyStepVjp, MatchesCentralDifferences) {
  for (const Body& b : bodies()) {
    const BodyModel m = sim::toStepModel<D>(b.model);
    for (const Ground& g : grounds())
      for (auto cm :
           {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
        SCOPED_TRACE(describe(b, g, cm));
        const sim::SimOptions o = options(cm, g);
        const VjpChecks r = checkVjpAlongDrop(m, o, drop(b.model, o));
        std::printf("VJP %s: FD max rel %.3g over %d directions, %d straddling a switch\n",
                    describe(b, g, cm).c_str(), r.worstFd, r.fdCompared, r.fdStraddling);
        EXPECT_LE(r.fdStraddling, 3);
        EXPECT_GT(r.largestAdjoint, 1e-3);  // not trivially zero
      }
  }
}
