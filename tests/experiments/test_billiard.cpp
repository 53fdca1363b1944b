// The billiard toy (DiffMJX Figure 8): the hand-written reverse pass of the two-ball simulator
// against central finite differences (per step and through the rollout), the straight-through
// trick (hard forward bitwise, smoothed backward along the hard trajectory), the zero hard gradient
// on a miss, and the gradient descent that only straight-through completes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "experiments/toys/billiard.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;
using toys::BallState;
using toys::BilliardParams;
using toys::Vec2;
using CM = sim::ContactModel;

namespace {

// The state as 8 numbers and back.
Eigen::Matrix<double, 8, 1> flat(const BallState& s) {
  Eigen::Matrix<double, 8, 1> f;
  f << s.x1, s.v1, s.x2, s.v2;
  return f;
}
BallState unflat(const Eigen::Matrix<double, 8, 1>& f) {
  BallState s;
  s.x1 = f.segment<2>(0);
  s.v1 = f.segment<2>(2);
  s.x2 = f.segment<2>(4);
  s.v2 = f.segment<2>(6);
  return s;
}

// g^T d step(s) / d s by central differences of `model`'s forward step.
Eigen::Matrix<double, 8, 1> fdVjp(const BilliardParams& P, CM model, const BallState& s,
                                  const BallState& g, double eps = 1e-7) {
  const auto x = flat(s), gn = flat(g);
  Eigen::Matrix<double, 8, 1> out;
  for (int i = 0; i < 8; ++i) {
    auto up = x, down = x;
    up[i] += eps;
    down[i] -= eps;
    out[i] = gn.dot(flat(toys::billiardStep(P, model, unflat(up))) -
                    flat(toys::billiardStep(P, model, unflat(down)))) /
             (2 * eps);
  }
  return out;
}

// A state whose contact is about to be (or is being) made: the cue ball at the origin moving
// right, the object ball at centre distance 2 r + gap at a small angle.
BallState nearContact(const BilliardParams& P, double gap) {
  BallState s;
  s.v1 = Vec2(1.5, 0.1);
  const double ang = 0.3;
  s.x2 = (2 * P.radius + gap) * Vec2(std::cos(ang), std::sin(ang));
  s.v2 = Vec2(0.1, -0.05);
  return s;
}

double lossAtRest(const BilliardParams& P) {
  return (Vec2(P.distance, 0.0) - P.target).squaredNorm();
}

}  // namespace

// One step's reverse pass against central differences of the step, for a random adjoint: hard and
// smoothed (overlapping, nearly touching, apart, separating), and straight_through against the
// smoothed step's differences at the same state.
TEST(Billiard, StepVjpMatchesFiniteDifferences) {
  BilliardParams P;
  const BallState g{Vec2(0.3, -1.2), Vec2(0.7, 0.4), Vec2(-0.9, 0.5), Vec2(1.1, -0.6)};
  for (double gap : {-0.002, -0.0005, 0.003, 0.02}) {
    for (bool separating : {false, true}) {
      BallState s = nearContact(P, gap);
      if (separating) {  // the object ball runs away from the cue ball
        std::swap(s.v1, s.v2);
        s.v2 *= 3;
      }
      for (CM m : {CM::Hard, CM::Smoothed, CM::StraightThrough}) {
        const CM ref = m == CM::StraightThrough ? CM::Smoothed : m;
        const auto vjp = flat(toys::billiardStepVjp(P, m, s, g));
        const auto fd = fdVjp(P, ref, s, g);
        for (int i = 0; i < 8; ++i)
          EXPECT_NEAR(vjp[i], fd[i], 1e-6 * std::max(1.0, std::abs(fd[i])))
              << sim::toString(m) << " gap " << gap << " separating " << separating << " i " << i;
      }
    }
  }
  // The contact really is in these states: hard pushes when overlapping and approaching only.
  toys::BilliardStepInfo info;
  toys::billiardStep(P, CM::Hard, nearContact(P, -0.002), &info);
  EXPECT_TRUE(info.active);
  EXPECT_GT(info.impulse, 0);
  toys::billiardStep(P, CM::Hard, nearContact(P, 0.003), &info);
  EXPECT_FALSE(info.active);
  toys::billiardStep(P, CM::Smoothed, nearContact(P, 0.003), &info);
  EXPECT_GT(info.impulse, 0);  // forces at a distance
}

// Momentum: the contact impulse is internal, only the table drag changes it; with e = 1 and equal
// masses a head-on hit stops the cue ball.
TEST(Billiard, ContactConservesMomentumAndHeadOnStopsTheCueBall) {
  BilliardParams P;
  for (CM m : {CM::Hard, CM::Smoothed}) {
    const BallState s = nearContact(P, -0.001);
    const BallState n = toys::billiardStep(P, m, s);
    const Vec2 before = (1 - P.dt * P.damping) * (s.v1 + s.v2), after = n.v1 + n.v2;
    EXPECT_NEAR((after - before).norm(), 0.0, 1e-14) << sim::toString(m);
  }
  BallState s;
  s.x2 = Vec2(2 * P.radius - 1e-4, 0);
  s.v1 = Vec2(1.0, 0);
  const BallState n = toys::billiardStep(P, CM::Hard, s);
  EXPECT_NEAR(n.v1.norm(), 0.0, 1e-14);
  EXPECT_NEAR(n.v2.x(), 1 - P.dt * P.damping, 1e-14);
}

// Smoothed is smooth in theta: the reverse pass through the whole rollout matches central
// differences of the loss everywhere on the sweep range, hits and misses alike.
TEST(Billiard, SmoothedGradientMatchesFiniteDifferencesEverywhere) {
  BilliardParams P;
  for (double th = -0.297; th < 0.3; th += 0.0237) {
    const auto r = toys::billiardShot(P, CM::Smoothed, th);
    const double fd = toys::billiardLossFd(P, CM::Smoothed, th, 1e-6);
    EXPECT_NEAR(r.dloss_dtheta, fd, 1e-5 * std::max(1.0, std::abs(fd))) << "theta " << th;
  }
}

// Hard: where the cue ball hits, between the thetas at which the contact step changes, the loss
// is smooth and the reverse pass matches central differences; where it misses, the loss is the
// object ball's resting loss bitwise and the gradient exactly zero.
TEST(Billiard, HardGradientMatchesFiniteDifferencesAwayFromTheSwitch) {
  BilliardParams P;
  const double eps = 1e-7;
  int checked = 0;
  for (double th = -0.105; th < 0.106; th += 0.0071) {
    const auto r = toys::billiardShot(P, CM::Hard, th);
    const auto up = toys::billiardShot(P, CM::Hard, th + eps, false);
    const auto down = toys::billiardShot(P, CM::Hard, th - eps, false);
    ASSERT_GT(r.contactSteps, 0) << "theta " << th << " should hit";
    if (up.firstContact != r.firstContact || down.firstContact != r.firstContact ||
        up.contactSteps != r.contactSteps || down.contactSteps != r.contactSteps)
      continue;  // a contact switch within eps
    const double fd = (up.loss - down.loss) / (2 * eps);
    EXPECT_NEAR(r.dloss_dtheta, fd, 1e-5 * std::max(1.0, std::abs(fd))) << "theta " << th;
    ++checked;
  }
  EXPECT_GE(checked, 25);
  for (double th : {-0.3, -0.2, -0.13, 0.125, 0.2, 0.29}) {
    const auto r = toys::billiardShot(P, CM::Hard, th);
    EXPECT_EQ(r.contactSteps, 0) << "theta " << th;
    EXPECT_GT(r.minGap, 0);
    EXPECT_EQ(r.loss, lossAtRest(P));
    EXPECT_EQ(r.dloss_dtheta, 0.0);
    EXPECT_EQ(toys::billiardLossFd(P, CM::Hard, th, 1e-6), 0.0);
  }
}

// Straight-through's forward pass is hard's, bit for bit.
TEST(Billiard, StraightThroughForwardIsHardBitwise) {
  BilliardParams P;
  for (double th = -0.3; th <= 0.3; th += 0.0173) {
    const auto h = toys::billiardShot(P, CM::Hard, th);
    const auto st = toys::billiardShot(P, CM::StraightThrough, th);
    EXPECT_EQ(st.loss, h.loss) << th;
    EXPECT_EQ(flat(st.final), flat(h.final)) << th;
    EXPECT_EQ(st.contactSteps, h.contactSteps) << th;
  }
}

// Straight-through's gradient is the smoothed model's backward pass along the hard trajectory:
// chain, from the last step back, the central-difference VJPs of the smoothed step at the hard
// states. (The smoothed rollout's own finite differences are not the reference: on a miss it
// follows another trajectory, the object ball pushed from a distance. They agree in sign there.)
TEST(Billiard, StraightThroughGradientIsSmoothedBackwardAlongHard) {
  BilliardParams P;
  for (double th : {-0.25, -0.15, -0.05, 0.03, 0.2}) {
    const auto path = toys::billiardPath(P, CM::Hard, th);
    BallState g;
    g.x2 = 2.0 * (path.back().x2 - P.target);
    for (int k = static_cast<int>(path.size()) - 2; k >= 0; --k)
      g = unflat(fdVjp(P, CM::Smoothed, path[k], g));
    const double ref = g.v1.dot((P.impulse / P.mass) * Vec2(-std::sin(th), std::cos(th)));
    const auto st = toys::billiardShot(P, CM::StraightThrough, th);
    EXPECT_NEAR(st.dloss_dtheta, ref, 1e-5 * std::max(1.0, std::abs(ref))) << "theta " << th;
    if (st.contactSteps == 0) {
      const double fdSmoothed = toys::billiardLossFd(P, CM::Smoothed, th, 1e-6);
      EXPECT_GT(st.dloss_dtheta * fdSmoothed, 0.0) << "theta " << th;
    }
  }
}

// Where hard gives zero (a miss), straight-through's gradient is non-zero and points towards the
// hit region: negative left of it, positive right of it (descent moves theta inwards). The
// smoothed forward pass, unlike hard's, moves the object ball without the balls ever touching.
TEST(Billiard, StraightThroughPointsTowardsTheHitWhereHardIsZero) {
  BilliardParams P;
  for (double th : {-0.3, -0.25, -0.2, -0.15, -0.12}) {
    EXPECT_EQ(toys::billiardShot(P, CM::Hard, th).dloss_dtheta, 0.0);
    EXPECT_LT(toys::billiardShot(P, CM::StraightThrough, th).dloss_dtheta, -1e-3) << th;
  }
  for (double th : {0.12, 0.15, 0.2, 0.25, 0.3}) {
    EXPECT_EQ(toys::billiardShot(P, CM::Hard, th).dloss_dtheta, 0.0);
    EXPECT_GT(toys::billiardShot(P, CM::StraightThrough, th).dloss_dtheta, 1e-3) << th;
  }
  const auto path = toys::billiardPath(P, CM::Smoothed, -0.2);
  double gap = 1e9;
  for (const auto& s : path) gap = std::min(gap, (s.x2 - s.x1).norm() - 2 * P.radius);
  EXPECT_GT(gap, 0.02);
  EXPECT_GT((path.back().x2 - path.front().x2).norm(), 0.01);
  EXPECT_LT(toys::billiardShot(P, CM::Smoothed, -0.2, false).loss, 0.95 * lossAtRest(P));
}

// Adam from a miss: hard never moves; straight-through enters the hit region and puts the object
// ball within a few centimetres of the target; smoothed converges to its own optimum, which played
// for real (hard) lands farther away.
TEST(Billiard, DescentHardStuckStraightThroughReachesTheTarget) {
  BilliardParams P;
  const int steps = 80;
  const auto hard = toys::billiardDescent(P, CM::Hard, -0.2, steps, 0.01);
  ASSERT_EQ(hard.theta.size(), static_cast<size_t>(steps + 1));
  EXPECT_EQ(hard.theta.back(), -0.2);
  EXPECT_EQ(hard.loss.back(), lossAtRest(P));
  const auto st = toys::billiardDescent(P, CM::StraightThrough, -0.2, steps, 0.01);
  EXPECT_LT(st.loss.back(), 0.005);  // within 7 cm of the target
  EXPECT_GT(toys::billiardShot(P, CM::Hard, st.theta.back(), false).contactSteps, 0);
  const auto sm = toys::billiardDescent(P, CM::Smoothed, -0.2, steps, 0.01);
  EXPECT_GT(sm.loss.back(), 2 * st.loss.back());
}

// The sweep writes its CSVs atomically with the documented columns.
TEST(Billiard, SweepWritesCsv) {
  toys::BilliardOptions o;
  o.points = 41;
  o.descentSteps = 5;
  const auto s = toys::runBilliard(o);
  ASSERT_EQ(s.models.size(), 3u);
  EXPECT_LT(s.hitMin, 0);
  EXPECT_GT(s.hitMax, 0);
  EXPECT_NEAR(s.hitMax, std::asin(2 * o.params.radius / o.params.distance), 0.02);
  const diffloco::testing::ScratchDir scratch("diffloco_test_billiard");
  const auto dir = scratch / "out";
  const std::string csv = toys::writeBilliardCsv(s, dir.string());
  EXPECT_FALSE(std::filesystem::exists(csv + ".tmp"));
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header,
            "theta,hard_loss,hard_dloss_dtheta,smoothed_loss,smoothed_dloss_dtheta,"
            "straight_through_loss,straight_through_dloss_dtheta,hard_hit");
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, o.points);
  std::ifstream d((dir / "billiard_descent.csv").string());
  std::getline(d, header);
  EXPECT_EQ(header.rfind("iteration,hard_theta,hard_loss,smoothed_theta,", 0), 0u) << header;
  rows = 0;
  while (std::getline(d, line)) ++rows;
  EXPECT_EQ(rows, o.descentSteps + 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "billiard_paths.csv"));
}
