// sim/batch.h: BatchSim gives every world exactly the state that sim::step gives it alone, whatever
// the number of threads and whichever worker's scratch Data it lands on; a world that goes
// non-finite is flagged, keeps its state and does not disturb the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "robots/robot.h"
#include "sim/batch.h"
#include "sim/step.h"

using namespace diffloco;
using namespace diffloco::sim;

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
// previous world must not matter either).
void stepAlone(const Model& m, const SimOptions& o, Data& data, Worlds& w) {
  VecX qn(m.nq()), vn(m.nv());
  for (int k = 0; k < w.q.cols(); ++k) {
    const VecX q = w.q.col(k), v = w.v.col(k), target = w.qTarget.col(k);
    ASSERT_TRUE(step(m, o, data, q, v, target, qn, vn)) << "world " << k;
    w.q.col(k) = qn;
    w.v.col(k) = vn;
  }
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
    Data data(m);
    for (int k = 0; k < 20; ++k) stepAlone(m, o, data, ref);
    ASSERT_FALSE(HasFatalFailure());
    // The worlds must have moved apart, or equality would say little.
    EXPECT_GT((ref.q - start.q).norm(), 1e-3);
    EXPECT_GT((ref.q.col(0) - ref.q.col(1)).norm(), 1e-3);

    for (int threads : {1, 2}) {
      BatchSim batch(m, o, n, threads);
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

  // The good worlds' reference, alone.
  Worlds ref = start;
  Data data(m);
  VecX qn(m.nq()), vn(m.nv());
  for (int w = 0; w < n; ++w) {
    if (isBad(w)) continue;
    const VecX q = ref.q.col(w), v = ref.v.col(w), target = ref.qTarget.col(w);
    ASSERT_TRUE(step(m, o, data, q, v, target, qn, vn));
    ref.q.col(w) = qn;
    ref.v.col(w) = vn;
  }

  for (int threads : {1, 2}) {
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
