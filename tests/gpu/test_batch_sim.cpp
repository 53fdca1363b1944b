// gpu/batch_sim.h: BatchSim gives every world exactly the state that its step function gives it
// alone (sim::fixedStep on the fixed path, sim::step on the dynamic one), whatever the number of
// threads and whichever worker's scratch it lands on, and the two paths agree to rounding; a world
// that goes non-finite is flagged, keeps its state and does not disturb the others; what the fixed
// path cannot hold (a contact set larger than its arrays, options it does not have) is stepped and
// differentiated by sim::step and sim::stepVjp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gpu/batch_sim.h"
#include "gpu/parity.h"
#include "robots/robot.h"
#include "sim/moreau_step.h"
#include "sim/pack.h"
#include "sim/step.h"
#include "sim/step_vjp.h"
#include "sim/terrain.h"

using namespace diffloco;
using namespace diffloco::sim;
using gpu::BatchPath;
using gpu::BatchSim;

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

// The reference: every world alone, one after the other, through one Data (its content left by the
// previous world must not matter either), or through sim::fixedStep.
void stepAlone(const Model& m, const SimOptions& o, Data& data, Worlds& w, BatchPath path) {
  VecX qn(m.nq()), vn(m.nv());
  const gpu::FixedModel fm = sim::toStepModel<sim::Quadruped>(m);
  const gpu::FixedOptions fo = sim::toStepOptions(o);
  for (int k = 0; k < w.q.cols(); ++k) {
    const VecX q = w.q.col(k), v = w.v.col(k), target = w.qTarget.col(k);
    if (path == BatchPath::Dynamic)
      ASSERT_TRUE(step(m, o, data, q, v, target, qn, vn)) << "world " << k;
    else
      ASSERT_TRUE(sim::fixedStep(fm, fo, sim::toView(nullptr), q.data(), v.data(), target.data(),
                                 qn.data(), vn.data()))
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

const char* name(BatchPath p) {
  return p == BatchPath::Fixed ? "fixed" : "dynamic";
}

}  // namespace

TEST(BatchSim, MatchesSingleWorldStepBitwiseOnOneAndTwoThreads) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 37;  // more than two chunks of the batch's grain, with a ragged last chunk
  for (BatchPath path : {BatchPath::Fixed, BatchPath::Dynamic})
    for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft}) {
      const SimOptions o = options(cm);
      const Worlds start = randomWorlds(r, n, 7);
      Worlds ref = start;
      Data data(m);
      for (int k = 0; k < 20; ++k) stepAlone(m, o, data, ref, path);
      ASSERT_FALSE(HasFatalFailure());
      // The worlds must have moved apart, or equality would say little.
      EXPECT_GT((ref.q - start.q).norm(), 1e-3);
      EXPECT_GT((ref.q.col(0) - ref.q.col(1)).norm(), 1e-3);

      for (int threads : {1, 2}) {
        BatchSim batch(m, o, n, threads, path);
        ASSERT_EQ(batch.path(), path);
        ASSERT_EQ(batch.worlds(), n);
        batch.q = start.q;
        batch.v = start.v;
        batch.qTarget = start.qTarget;
        for (int k = 0; k < 20; ++k) ASSERT_EQ(batch.step(), 0) << "step " << k;
        for (int w = 0; w < n; ++w) {
          EXPECT_EQ(batch.failed[w], 0);
          EXPECT_TRUE(bitwiseEqual(batch.q.col(w), ref.q.col(w)))
              << name(path) << ", " << toString(cm) << ", " << threads << " threads, world " << w
              << ": max |dq| " << (batch.q.col(w) - ref.q.col(w)).cwiseAbs().maxCoeff();
          EXPECT_TRUE(bitwiseEqual(batch.v.col(w), ref.v.col(w)))
              << name(path) << ", " << toString(cm) << ", " << threads << " threads, world " << w
              << ": max |dv| " << (batch.v.col(w) - ref.v.col(w)).cwiseAbs().maxCoeff();
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

  for (BatchPath path : {BatchPath::Fixed, BatchPath::Dynamic})
    for (int threads : {1, 2}) {
      // The good worlds' reference, alone.
      Worlds ref = start;
      for (int w = 0; w < n; ++w) {
        if (isBad(w)) continue;
        Worlds one{ref.q.col(w), ref.v.col(w), ref.qTarget.col(w)};
        Data data(m);
        stepAlone(m, o, data, one, path);
        ref.q.col(w) = one.q;
        ref.v.col(w) = one.v;
      }
      ASSERT_FALSE(HasFatalFailure());
      BatchSim batch(m, o, n, threads, path);
      batch.q = start.q;
      batch.v = start.v;
      batch.qTarget = start.qTarget;
      EXPECT_EQ(batch.step(), 3) << name(path) << ", " << threads << " threads";
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

// The two paths agree to rounding, one step and its VJP, on the plane and a bumpy height field
// with a straight-through terrain (the rough task's), in every contact model.
TEST(BatchSim, FixedAndDynamicPathsAgree) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 24;
  auto bumps = std::make_shared<HeightField>();
  bumps->originX = bumps->originY = -3;
  bumps->nx = bumps->ny = 61;
  bumps->spacing = 0.1;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.03, 0.03);
  for (int k = 0; k < bumps->nx * bumps->ny; ++k) bumps->heights.push_back(u(rng));
  bumps->finalize();
  auto smooth = std::make_shared<HeightField>(smoothHeightField(*bumps, 0.05));
  smooth->finalize();
  const Worlds start = randomWorlds(r, n, 21);
  for (const auto& [what, o] : planeAndTerrainCases(bumps, smooth)) {
    BatchSim fixed(m, o, n, 2, BatchPath::Fixed), dynamic(m, o, n, 2, BatchPath::Dynamic);
    ASSERT_EQ(fixed.path(), BatchPath::Fixed) << fixed.whyDynamic();
    for (BatchSim* b : {&fixed, &dynamic}) {
      loadRandomised(*b, start);
      EXPECT_EQ(b->step(), 0);
    }
    EXPECT_EQ(fixed.lastFallbacks(), 0) << what;
    const double dq = (fixed.q - dynamic.q).cwiseAbs().maxCoeff();
    const double dv = (fixed.v - dynamic.v).cwiseAbs().maxCoeff();
    EXPECT_LE(dq, 1e-10 * (1 + dynamic.q.cwiseAbs().maxCoeff())) << what;
    EXPECT_LE(dv, 1e-10 * (1 + dynamic.v.cwiseAbs().maxCoeff())) << what;
    EXPECT_GT((dynamic.q - start.q).cwiseAbs().maxCoeff(), 1e-4) << what;

    const MatX gqNext = randomMatrix(m.nq(), n, 5), gvNext = randomMatrix(m.nv(), n, 5, m.nq());
    MatX aq[2], av[2], at[2];
    fixed.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[0], av[0], at[0]);
    EXPECT_EQ(fixed.lastFallbacks(), 0) << what;
    dynamic.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[1], av[1], at[1]);
    for (const auto& [a, b] : {std::pair{&aq[0], &aq[1]}, {&av[0], &av[1]}, {&at[0], &at[1]}}) {
      EXPECT_LE((*a - *b).cwiseAbs().maxCoeff(), 1e-9 * (1 + b->cwiseAbs().maxCoeff())) << what;
      EXPECT_GT(b->cwiseAbs().maxCoeff(), 1e-3) << what;
    }
  }
}

// A world whose contact set is larger than the fixed arrays (the base lying on the ground, every
// leg sphere in it) is stepped and differentiated by sim::step and sim::stepVjp, not failed.
TEST(BatchSim, ContactSetBeyondTheFixedArraysFallsBackToTheDynamicStep) {
  const Robot r = anymal();
  const Model& m = r.model;
  ASSERT_FALSE(m.legSpheres.empty());
  const SimOptions o = options(ContactModel::Hard);
  Worlds w = randomWorlds(r, 3, 8);
  w.q(2, 1) = 0.1;  // world 1 lies on the ground
  w.v.col(1).setZero();
  BatchSim fixed(m, o, 3, 1, BatchPath::Fixed), dynamic(m, o, 3, 1, BatchPath::Dynamic);
  for (BatchSim* b : {&fixed, &dynamic}) {
    b->q = w.q;
    b->v = w.v;
    b->qTarget = w.qTarget;
    EXPECT_EQ(b->step(), 0);
  }
  EXPECT_EQ(fixed.lastFallbacks(), 1);
  EXPECT_TRUE(bitwiseEqual(fixed.q.col(1), dynamic.q.col(1)));
  EXPECT_TRUE(bitwiseEqual(fixed.v.col(1), dynamic.v.col(1)));
  const MatX gq = MatX::Ones(m.nq(), 3), gv = MatX::Ones(m.nv(), 3);
  MatX aq[2], av[2], at[2];
  fixed.stepVjp(w.q, w.v, w.qTarget, gq, gv, aq[0], av[0], at[0]);
  EXPECT_EQ(fixed.lastFallbacks(), 1);
  dynamic.stepVjp(w.q, w.v, w.qTarget, gq, gv, aq[1], av[1], at[1]);
  EXPECT_TRUE(bitwiseEqual(aq[0].col(1), aq[1].col(1)));
  EXPECT_TRUE(bitwiseEqual(at[0].col(1), at[1].col(1)));
  EXPECT_EQ(fixed.failedVjp[1], 0);
}

// Options the fixed path does not have put the whole batch on sim::step, and say why.
TEST(BatchSim, OptionsTheFixedPathDoesNotHaveRunDynamic) {
  const Robot r = anymal();
  SimOptions o = options(ContactModel::Soft);
  BatchSim batch(r.model, o, 4, 1);
  EXPECT_EQ(batch.path(), BatchPath::Fixed);
  EXPECT_EQ(batch.whyDynamic(), "");
  batch.options.contact.integrator = Integrator::Adaptive;
  EXPECT_EQ(batch.path(), BatchPath::Dynamic);
  EXPECT_NE(batch.whyDynamic().find("adaptive"), std::string::npos);
  EXPECT_EQ(batch.step(), 0);
  EXPECT_EQ(batch.lastFallbacks(), 0);
  BatchSim asked(r.model, options(ContactModel::Hard), 4, 1, BatchPath::Dynamic);
  EXPECT_EQ(asked.path(), BatchPath::Dynamic);
  EXPECT_EQ(asked.whyDynamic(), "");
}

// A world's VJP does not depend on which worlds a worker differentiated before it (the tapes are
// per worker and reused): each world alone in a batch of one gives bitwise the same adjoints.
TEST(BatchSim, VjpOfAWorldDoesNotDependOnTheWorldsBeforeIt) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 12;
  const auto bumps = std::make_shared<HeightField>(gpu::bumpyField(0.03, 4));
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
// straight-through terrain, and a world that the device fails (a contact set beyond MAXACTIVE) is
// stepped and differentiated by the CPU exactly as on the fixed path.
TEST(BatchSim, CudaPathMatchesTheFixedPathOrSaysWhyNot) {
  const Robot r = anymal();
  const Model& m = r.model;
  const int n = 40;
  if (const std::string why = gpu::cudaUnavailable(); !why.empty()) {
    try {
      BatchSim batch(m, options(ContactModel::Hard), n, 1, BatchPath::Cuda);
      FAIL() << "BatchPath::Cuda constructed without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "the simulator on a CUDA device: " + why);
    }
    GTEST_SKIP() << "the error without a device is checked; the device comparison needs one: "
                 << why;
  }
  auto bumps = std::make_shared<HeightField>(gpu::bumpyField(0.03, 4));
  auto smooth = std::make_shared<HeightField>(smoothHeightField(*bumps, 0.05));
  smooth->finalize();
  Worlds start = randomWorlds(r, n, 41);
  start.q(2, 7) = 0.1;  // world 7 lies on the ground: its contact set is beyond the device's
  start.v.col(7).setZero();
  for (const auto& [what, o] : planeAndTerrainCases(bumps, smooth)) {
    BatchSim fixed(m, o, n, 2, BatchPath::Fixed), cuda(m, o, n, 2, BatchPath::Cuda);
    ASSERT_EQ(cuda.path(), BatchPath::Cuda) << cuda.whyDynamic();
    for (BatchSim* b : {&fixed, &cuda}) {
      loadRandomised(*b, start);
      EXPECT_EQ(b->step(), 0);
    }
    EXPECT_EQ(cuda.lastFallbacks(), fixed.lastFallbacks()) << what;
    EXPECT_TRUE(bitwiseEqual(cuda.q.col(7), fixed.q.col(7))) << what;
    EXPECT_LE((cuda.q - fixed.q).cwiseAbs().maxCoeff(), 1e-10 * (1 + fixed.q.cwiseAbs().maxCoeff()))
        << what;
    EXPECT_LE((cuda.v - fixed.v).cwiseAbs().maxCoeff(), 1e-10 * (1 + fixed.v.cwiseAbs().maxCoeff()))
        << what;
    const MatX gqNext = randomMatrix(m.nq(), n, 6), gvNext = randomMatrix(m.nv(), n, 6, m.nq());
    MatX aq[2], av[2], at[2];
    fixed.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[0], av[0], at[0]);
    cuda.stepVjp(start.q, start.v, start.qTarget, gqNext, gvNext, aq[1], av[1], at[1]);
    for (const auto& [a, b] : {std::pair{&aq[1], &aq[0]}, {&av[1], &av[0]}, {&at[1], &at[0]}}) {
      EXPECT_LE((*a - *b).cwiseAbs().maxCoeff(), 1e-10 * (1 + b->cwiseAbs().maxCoeff())) << what;
      EXPECT_TRUE(bitwiseEqual(a->col(7), b->col(7))) << what;
    }
  }
}
