// batch/batch_sim.h: BatchSim gives every world exactly the state that sim::fixedStep gives it
// alone, whatever the number of threads and whichever worker's scratch it lands on; a world that
// goes non-finite is flagged, keeps its state and does not disturb the others; a world with every
// sphere in contact is stepped and differentiated by the stages; a model or options the stages do
// not have are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "batch/batch_sim.h"
#include "batch/world_set.h"
#include "robots/robot.h"
#include "sim/moreau_step.h"
#include "sim/pack.h"
#include "sim/terrain.h"

using namespace diffloco;
using namespace diffloco::sim;
using batch::BatchPath;
using batch::BatchSim;

namespace {

// Exact equality, NaN included (a NaN the batch must leave alone compares equal to itself here).
bool bitwiseEqual(const Eigen::Ref<const VecX>& a, const Eigen::Ref<const VecX>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

struct Worlds {
  MatX q, v, qTarget;
};

// Different states per world: dropped from various heights (some feet in contact, some not),
// tilted, with random base and joint velocities and targets.
Worlds randomWorlds(const Robot& r, int n, unsigned seed) {
  const Model& m = r.model;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Worlds w{MatX(m.nq(), n), MatX(m.nv(), n), MatX(m.nj(), n)};
  for (int k = 0; k < n; ++k) {
    VecX q = r.standingConfiguration();
    q[0] = u(rng);
    q[2] += 0.03 * u(rng);
    Quat qt(1, 0.05 * u(rng), 0.05 * u(rng), 0.3 * u(rng));
    qt.normalize();
    q.segment<4>(3) << qt.w(), qt.x(), qt.y(), qt.z();
    for (int j = 0; j < m.nj(); ++j) q[7 + j] += 0.2 * u(rng);
    w.q.col(k) = q;
    for (int i = 0; i < m.nv(); ++i) w.v(i, k) = 0.5 * u(rng);
    for (int j = 0; j < m.nj(); ++j) w.qTarget(j, k) = r.defaultJointPos[j] + 0.3 * u(rng);
  }
  return w;
}

SimOptions options(ContactModel cm) {
  SimOptions o;
  o.dt = 0.005;
  o.contact.model = cm;
  o.contact.softSubsteps = 4;
  o.actuator.kp = 85;
  o.actuator.kd = 0.6;
  o.actuator.effort = 80;
  return o;
}

Robot anymal() {
  Robot r = loadRobot("anymal");
  for (auto& j : r.model.joints) j.armature = 0.1;
  return r;
}

// The reference: every world alone, one after the other, through sim::fixedStep.
void stepAlone(const Model& m, const SimOptions& o, Worlds& w) {
  VecX qn(m.nq()), vn(m.nv());
  const batch::FixedModel fm = sim::toStepModel<sim::Quadruped>(m);
  const batch::FixedOptions fo = sim::toStepOptions(o);
  for (int k = 0; k < w.q.cols(); ++k) {
    const VecX q = w.q.col(k), v = w.v.col(k), target = w.qTarget.col(k);
    ASSERT_TRUE(sim::fixedStep(fm, fo, sim::toView(o.contact.terrain.get()), q.data(), v.data(),
                               target.data(), qn.data(), vn.data()))
        << "world " << k;
    w.q.col(k) = qn;
    w.v.col(k) = vn;
  }
}

// The worlds' state and per-world friction, motor strength and (every third world) base mass.
void loadRandomised(BatchSim& b, const Worlds& start) {
  b.q = start.q;
  b.v = start.v;
  b.qTarget = start.qTarget;
  for (int w = 0; w < b.worlds(); ++w) {
    b.setFriction(w, 0.3 + 0.05 * w);
    b.setMotorStrength(w, 0.8 + 0.02 * w);
    if (w % 3 == 0) b.setAddedBaseMass(w, 0.5 * w - 4);
  }
}

// Entries uniform in [-1, 1] from seed's stream after `skip` rows of n draws (seeds of a VJP).
MatX randomMatrix(int rows, int n, unsigned seed, int skip = 0) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> s(-1, 1);
  for (int k = 0; k < skip * n; ++k) s(g);
  return MatX::NullaryExpr(rows, n, [&] { return s(g); });
}

// Every contact model on the plane and on `bumps` with `smooth` as its straight-through terrain
// (the rough task's), named for messages.
std::vector<std::pair<std::string, SimOptions>> planeAndTerrainCases(
    const std::shared_ptr<const HeightField>& bumps,
    const std::shared_ptr<const HeightField>& smooth) {
  std::vector<std::pair<std::string, SimOptions>> cases;
  for (bool terrain : {false, true})
    for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft,
                            ContactModel::StraightThrough}) {
      SimOptions o = options(cm);
      if (terrain) {
        o.contact.terrain = bumps;
        o.contact.backwardTerrain = smooth;
      }
      cases.emplace_back(std::string(toString(cm)) + (terrain ? ", height field" : ", plane"), o);
    }
  return cases;
}

}  // namespace

TEST(BatchSim, MatchesSingleWorldStepBitwiseOnOneAndTwoThreads) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 37;  // more than two chunks of the batch's grain, with a ragged last chunk
  for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft}) {
    const SimOptions o = options(cm);
    const Worlds start = randomWorlds(r, n, 7);
    Worlds ref = start;
    for (int k = 0; k < 20; ++k) stepAlone(m, o, ref);
    ASSERT_FALSE(HasFatalFailure());
    // The worlds must have moved apart, or equality would say little.
    EXPECT_GT((ref.q - start.q).norm(), 1e-3);
    EXPECT_GT((ref.q.col(0) - ref.q.col(1)).norm(), 1e-3);

    for (int threads : {1, 2}) {
      BatchSim batch(m, o, n, threads);
      ASSERT_EQ(batch.path(), BatchPath::Fixed);
      ASSERT_EQ(batch.worlds(), n);
      batch.q = start.q;
      batch.v = start.v;
      batch.qTarget = start.qTarget;
      for (int k = 0; k < 20; ++k) ASSERT_EQ(batch.step(), 0) << "step " << k;
      for (int w = 0; w < n; ++w) {
        EXPECT_EQ(batch.failed[w], 0);
        EXPECT_TRUE(bitwiseEqual(batch.q.col(w), ref.q.col(w)))
            << toString(cm) << ", " << threads << " threads, world " << w << ": max |dq| "
            << (batch.q.col(w) - ref.q.col(w)).cwiseAbs().maxCoeff();
        EXPECT_TRUE(bitwiseEqual(batch.v.col(w), ref.v.col(w)))
            << toString(cm) << ", " << threads << " threads, world " << w << ": max |dv| "
            << (batch.v.col(w) - ref.v.col(w)).cwiseAbs().maxCoeff();
      }
    }
  }
}

TEST(BatchSim, NonFiniteWorldIsFlaggedAndKeepsItsState) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 40;
  const SimOptions o = options(ContactModel::Smoothed);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Worlds start = randomWorlds(r, n, 11);
  start.v(3, 5) = nan;         // NaN base angular velocity
  start.q(9, 17) = inf;        // infinite joint angle
  start.qTarget(2, 33) = nan;  // NaN actuator input
  const std::vector<int> bad = {5, 17, 33};
  auto isBad = [&](int w) { return std::find(bad.begin(), bad.end(), w) != bad.end(); };

  for (int threads : {1, 2}) {
    // The good worlds' reference, alone.
    Worlds ref = start;
    for (int w = 0; w < n; ++w) {
      if (isBad(w)) continue;
      Worlds one{ref.q.col(w), ref.v.col(w), ref.qTarget.col(w)};
      stepAlone(m, o, one);
      ref.q.col(w) = one.q;
      ref.v.col(w) = one.v;
    }
    ASSERT_FALSE(HasFatalFailure());
    BatchSim batch(m, o, n, threads);
    batch.q = start.q;
    batch.v = start.v;
    batch.qTarget = start.qTarget;
    EXPECT_EQ(batch.step(), 3) << threads << " threads";
    for (int w = 0; w < n; ++w) {
      EXPECT_EQ(batch.failed[w], isBad(w) ? 1 : 0) << "world " << w;
      const Worlds& expect = isBad(w) ? start : ref;  // a failed world keeps its previous state
      EXPECT_TRUE(bitwiseEqual(batch.q.col(w), expect.q.col(w))) << "world " << w;
      EXPECT_TRUE(bitwiseEqual(batch.v.col(w), expect.v.col(w))) << "world " << w;
    }

    // The owner resets world 5; the flag clears on its next step while 17 and 33 stay failed.
    batch.q.col(5) = r.standingConfiguration();
    batch.v.col(5).setZero();
    EXPECT_EQ(batch.step(), 2);
    EXPECT_EQ(batch.failed[5], 0);
    EXPECT_TRUE(batch.q.col(5).allFinite());
    EXPECT_EQ(batch.failed[17], 1);
    EXPECT_EQ(batch.failed[33], 1);
    EXPECT_TRUE(bitwiseEqual(batch.q.col(17), start.q.col(17)));
    EXPECT_EQ(std::count(batch.failed.begin(), batch.failed.end(), 1), 2);
  }
}

// Every world failing at once is not an error of the batch either.
TEST(BatchSim, AllWorldsFailing) {
  const Robot r = anymal();
  BatchSim batch(r.model, options(ContactModel::Hard), 20, 2);
  batch.v.setConstant(std::numeric_limits<double>::quiet_NaN());
  const MatX q0 = batch.q;
  EXPECT_EQ(batch.step(), 20);
  EXPECT_EQ(std::count(batch.failed.begin(), batch.failed.end(), 1), 20);
  EXPECT_TRUE(batch.q == q0);
}

// A world whose contact set holds every sphere (the base lying on the ground, every leg sphere in
// it) is stepped as sim::fixedStep steps it alone and differentiated, not failed.
TEST(BatchSim, WorldWithEverySphereInContactIsSteppedAndDifferentiated) {
  const Robot r = anymal();
  const Model& m = r.model;
  ASSERT_FALSE(m.legSpheres.empty());
  for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft}) {
    const SimOptions o = options(cm);
    Worlds w = randomWorlds(r, 3, 8);
    w.q(2, 1) = 0.1;  // world 1 lies on the ground
    w.v.col(1).setZero();
    Worlds ref = w;
    stepAlone(m, o, ref);
    ASSERT_FALSE(HasFatalFailure());
    BatchSim batch(m, o, 3, 1);
    batch.q = w.q;
    batch.v = w.v;
    batch.qTarget = w.qTarget;
    EXPECT_EQ(batch.step(), 0) << toString(cm);
    EXPECT_TRUE(bitwiseEqual(batch.q.col(1), ref.q.col(1))) << toString(cm);
    EXPECT_TRUE(bitwiseEqual(batch.v.col(1), ref.v.col(1))) << toString(cm);
    const MatX gq = MatX::Ones(m.nq(), 3), gv = MatX::Ones(m.nv(), 3);
    MatX aq, av, at;
    batch.stepVjp(w.q, w.v, w.qTarget, gq, gv, aq, av, at);
    EXPECT_EQ(batch.failedVjp[1], 0) << toString(cm);
    EXPECT_TRUE(aq.col(1).allFinite() && av.col(1).allFinite() && at.col(1).allFinite());
    EXPECT_GT(aq.col(1).cwiseAbs().maxCoeff(), 0) << toString(cm);
  }
}

// What the stages do not have is refused with the reason: a model of other sizes and the soft
// model's adaptive integrator at construction (std::invalid_argument), and in stepVjp more
// Gauss-Seidel sweeps or soft sub-steps than the VJP's tape holds, whose forward steps.
TEST(BatchSim, WhatTheStagesDoNotHaveIsRefused) {
  const Robot r = anymal();
  auto refusal = [&](const Model& m, const SimOptions& o) -> std::string {
    try {
      BatchSim batch(m, o, 4, 1);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  SimOptions adaptive = options(ContactModel::Soft);
  adaptive.contact.integrator = Integrator::Adaptive;
  EXPECT_NE(refusal(r.model, adaptive).find("adaptive"), std::string::npos);
  Model threeFeet = r.model;
  threeFeet.feet.pop_back();
  EXPECT_NE(refusal(threeFeet, options(ContactModel::Hard)).find("3 feet"), std::string::npos)
      << refusal(threeFeet, options(ContactModel::Hard));

  const Worlds w = randomWorlds(r, 4, 9);
  const MatX gq = MatX::Ones(r.model.nq(), 4), gv = MatX::Ones(r.model.nv(), 4);
  MatX aq, av, at;
  SimOptions sweeps = options(ContactModel::Smoothed);
  sweeps.contact.iterations = sim::Quadruped::MAXGSITER + 1;
  SimOptions substeps = options(ContactModel::Soft);
  substeps.contact.softSubsteps = sim::Quadruped::MAXSOFTSUBSTEPS + 1;
  for (const auto& [o, what] :
       {std::pair{sweeps, "Gauss-Seidel sweeps"}, {substeps, "sub-steps"}}) {
    BatchSim batch(r.model, o, 4, 1);
    batch.q = w.q;
    batch.v = w.v;
    batch.qTarget = w.qTarget;
    EXPECT_EQ(batch.step(), 0) << what;
    try {
      batch.stepVjp(w.q, w.v, w.qTarget, gq, gv, aq, av, at);
      ADD_FAILURE() << "no error for " << what << " beyond the tape";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

// A world's VJP does not depend on which worlds a worker differentiated before it (the tapes are
// per worker and reused): each world alone in a batch of one gives bitwise the same adjoints.
TEST(BatchSim, VjpOfAWorldDoesNotDependOnTheWorldsBeforeIt) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 12;
  const auto bumps = std::make_shared<HeightField>(batch::bumpyField(0.03, 4));
  const Worlds start = randomWorlds(r, n, 31);
  for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft,
                          ContactModel::StraightThrough})
    for (bool terrain : {false, true}) {
      SimOptions o = options(cm);
      if (terrain) o.contact.terrain = bumps;
      const MatX gq = MatX::Ones(m.nq(), n), gv = MatX::Ones(m.nv(), n);
      BatchSim all(m, o, n, 1);
      MatX aq, av, at;
      all.stepVjp(start.q, start.v, start.qTarget, gq, gv, aq, av, at);
      for (int w = 0; w < n; ++w) {
        BatchSim one(m, o, 1, 1);
        MatX bq, bv, bt;
        one.stepVjp(start.q.col(w), start.v.col(w), start.qTarget.col(w), gq.col(w), gv.col(w), bq,
                    bv, bt);
        EXPECT_TRUE(bitwiseEqual(aq.col(w), bq.col(0)) && bitwiseEqual(av.col(w), bv.col(0)) &&
                    bitwiseEqual(at.col(w), bt.col(0)))
            << toString(cm) << (terrain ? ", height field" : ", plane") << ", world " << w
            << ": max |dq| " << (aq.col(w) - bq.col(0)).cwiseAbs().maxCoeff();
      }
    }
}

// BatchPath::Cuda: without a usable device (this build without CUDA, or no GPU) the constructor
// says why; with one, the device's step and VJP agree with the fixed path on the CPU to rounding,
// with per-world friction, strength and mass, on the plane and a height field with a
// straight-through terrain, a world with every sphere in contact included.
TEST(BatchSim, CudaPathMatchesTheFixedPathOrSaysWhyNot) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 40;
  if (const std::string why = batch::cudaUnavailable(); !why.empty()) {
    try {
      BatchSim batch(m, options(ContactModel::Hard), n, 1, BatchPath::Cuda);
      FAIL() << "BatchPath::Cuda constructed without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "the simulator on a CUDA device: " + why);
    }
    GTEST_SKIP() << "the error without a device is checked; the device comparison needs one: "
                 << why;
  }
  auto bumps = std::make_shared<HeightField>(batch::bumpyField(0.03, 4));
  auto smooth = std::make_shared<HeightField>(smoothHeightField(*bumps, 0.05));
  smooth->finalize();
  Worlds start = randomWorlds(r, n, 41);
  start.q(2, 7) = 0.1;  // world 7 lies on the ground: every sphere in its contact problem
  start.v.col(7).setZero();
  for (const auto& [what, o] : planeAndTerrainCases(bumps, smooth)) {
    BatchSim fixed(m, o, n, 2, BatchPath::Fixed), cuda(m, o, n, 2, BatchPath::Cuda);
    ASSERT_EQ(cuda.path(), BatchPath::Cuda);
    for (BatchSim* b : {&fixed, &cuda}) {
      loadRandomised(*b, start);
      EXPECT_EQ(b->step(), 0);
    }
    EXPECT_LE((cuda.q - fixed.q).cwiseAbs().maxCoeff(), 1e-10 * (1 + fixed.q.cwiseAbs().maxCoeff()))
        << what;
    EXPECT_LE((cuda.v - fixed.v).cwiseAbs().maxCoeff(), 1e-10 * (1 + fixed.v.cwiseAbs().maxCoeff()))
        << what;
    const MatX gqNext = randomMatrix(m.nq(), n, 6), gvNext = randomMatrix(m.nv(), n, 6, m.nq());
    MatX aq[2], av[2], at[2];
    fixed.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[0], av[0], at[0]);
    cuda.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[1], av[1], at[1]);
    for (const auto& [a, b] : {std::pair{&aq[1], &aq[0]}, {&av[1], &av[0]}, {&at[1], &at[0]}})
      EXPECT_LE((*a - *b).cwiseAbs().maxCoeff(), 1e-10 * (1 + b->cwiseAbs().maxCoeff())) << what;
    EXPECT_EQ(cuda.failedVjp, fixed.failedVjp) << what;
  }
}
