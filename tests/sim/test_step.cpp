// Physics sanity of the time stepping (the stages, sim/moreau_step.h) against closed-form cases.
#include <gtest/gtest.h>

#include <memory>

#include "robots/robot.h"
#include "sim/terrain.h"
#include "sim/urdf.h"
#include "tests/sim/stages.h"

using namespace diffloco;
using namespace diffloco::sim;
using test::Stages;

namespace {

// A model of size class D stepped by the stages from q0 at rest, the joint targets held at q0's.
template <class D>
struct Sim {
  Stages<D> st;
  VecX q, v, target, qn, vn;
  // The last step's contact problem (hard and smoothed models).
  std::unique_ptr<Contacts<D>> fc = std::make_unique<Contacts<D>>();
  Sim(const Model& model, const SimOptions& o, const VecX& q0)
      : st(model, o), q(q0), v(VecX::Zero(model.nv())), target(q0.tail(model.nj())), qn(q0),
        vn(v) {}
  void run(double seconds) {
    const int n = static_cast<int>(std::round(seconds / st.forward.dt));
    for (int k = 0; k < n; ++k) {
      if (st.forward.model == FixedContact::Soft) {
        ASSERT_TRUE(st.step(q, v, target, qn, vn));
      } else {
        ASSERT_TRUE(st.step(q, v, target, qn, vn, *fc));
      }
      q = qn;
      v = vn;
    }
  }
};

SimOptions passive(double dt, ContactModel cm = ContactModel::Hard) {
  SimOptions o;
  o.dt = dt;
  o.contact.model = cm;
  o.actuator.kp = 0;
  o.actuator.kd = 0;
  return o;
}

// A single 10 kg box standing on four sphere feet at its corners.
Model boxOnFeet() {
  return parseUrdf(R"(<robot name="box">
    <link name="base">
      <inertial><mass value="10"/><inertia ixx="0.2" iyy="0.3" izz="0.4" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><origin xyz="0.2 0.15 -0.1"/><geometry><sphere radius="0.02"/></geometry></collision>
      <collision><origin xyz="0.2 -0.15 -0.1"/><geometry><sphere radius="0.02"/></geometry></collision>
      <collision><origin xyz="-0.2 0.15 -0.1"/><geometry><sphere radius="0.02"/></geometry></collision>
      <collision><origin xyz="-0.2 -0.15 -0.1"/><geometry><sphere radius="0.02"/></geometry></collision>
    </link></robot>)",
                   "box.urdf");
}

}  // namespace

// Moreau's scheme integrates a constant acceleration exactly: z(t) = z0 - g t^2 / 2.
TEST(Step, FreeFallMatchesClosedForm) {
  const Robot r = loadRobot("quadruped");
  VecX q0 = r.standingConfiguration();
  q0[2] = 10.0;
  Sim<Quadruped> s(r.model, passive(0.01), q0);
  s.run(1.0);
  EXPECT_NEAR(s.q[2], 10.0 - 0.5 * 9.81, 1e-10);
  EXPECT_NEAR(s.v[2], -9.81, 1e-10);
  EXPECT_LT((s.q.tail(12) - q0.tail(12)).norm(), 1e-10);
}

// Without actuation, damping or contact, energy is conserved up to the scheme's error, which
// shrinks with the step at the scheme's order (first: the Coriolis terms are taken at the start
// velocity). Relative drift = max over 1 s of |E(t) - E(0)| / max kinetic energy.
std::vector<double> energyDrift(bool gravity) {
  Robot r = loadRobot("anymal");
  if (!gravity) r.model.gravity.setZero();
  VecX q0 = r.standingConfiguration();
  q0[2] = 50.0;
  VecX v0(r.model.nv());
  v0 << 0.3, -0.2, 0.5, 0.8, -0.6, 1.0, 2, -1, 1.5, -2, 1, 0.5, 1, 2, -1, -1.5, 0.7, -0.3;
  std::vector<double> drift;
  for (double dt : {4e-4, 2e-4, 1e-4}) {
    Sim<Quadruped> s(r.model, passive(dt), q0);
    s.v = v0;
    const auto energy = [&](const VecX& v) { return test::mechanicalEnergy(s.st.m, s.q, v); };
    const double e0 = energy(s.v);
    double worst = 0, keMax = 0;
    const int n = static_cast<int>(std::round(1.0 / dt));
    for (int k = 0; k < n; ++k) {
      s.run(dt);
      if (k % 50 && k != n - 1) continue;
      const double e = energy(s.v);
      keMax = std::max(keMax, e - energy(VecX::Zero(r.model.nv())));
      worst = std::max(worst, std::abs(e - e0));
    }
    drift.push_back(worst / keMax);
    std::printf("gravity %d, dt %g: relative energy drift over 1 s %.3e\n", gravity, dt,
                drift.back());
  }
  return drift;
}

TEST(Step, EnergyDriftShrinksWithTheStep) {
  for (bool gravity : {false, true}) {
    const std::vector<double> drift = energyDrift(gravity);
    EXPECT_LT(drift[2], 1e-3);
    // Observed order: log2 of successive ratios, the scheme's first order.
    EXPECT_NEAR(std::log2(drift[0] / drift[1]), 1.0, 0.15);
    EXPECT_NEAR(std::log2(drift[1] / drift[2]), 1.0, 0.15);
  }
}

// The quaternion keeps unit norm through long spinning.
TEST(Step, QuaternionStaysUnit) {
  Robot r = loadRobot("quadruped");
  // Warp's example armature: explicit damping kd dt / inertia must stay below 2 on light links.
  for (auto& j : r.model.joints) j.armature = 0.01;
  VecX q0 = r.standingConfiguration();
  q0[2] = 1000;  // stays airborne for the 5 s
  SimOptions o = passive(0.01);
  o.actuator.kp = 20;  // the walk task's drive holds the legs
  o.actuator.kd = 1;
  Sim<Quadruped> s(r.model, o, q0);
  s.v.segment<3>(3) << 3, -5, 7;
  s.run(5.0);
  EXPECT_NEAR(s.q.segment<4>(3).norm(), 1.0, 1e-14);
}

// ANYmal with a PD drive on flat ground, hard contact: the base comes to rest.
TEST(Step, StandingRobotSettlesWithHardContact) {
  Robot r = loadRobot("anymal");
  for (auto& j : r.model.joints) j.armature = 0.1;
  SimOptions o;
  o.dt = 0.005;
  o.contact.model = ContactModel::Hard;
  o.actuator.kp = 85;
  o.actuator.kd = 4;
  VecX q0 = r.standingConfiguration();
  q0[2] += 0.02;
  Sim<Quadruped> s(r.model, o, q0);
  s.run(4.0);
  double zmin = 1e9, zmax = -1e9;
  const Vec3 p0 = s.q.head<3>();
  for (int k = 0; k < 200; ++k) {
    s.run(o.dt);
    zmin = std::min(zmin, s.q[2]);
    zmax = std::max(zmax, s.q[2]);
  }
  std::printf("last second: z in [%.5f, %.5f], xy moved %.2e m\n", zmin, zmax,
              (s.q.head<2>() - p0.head<2>()).norm());
  EXPECT_LT(zmax - zmin, 1e-3);
  EXPECT_LT((s.q.head<2>() - p0.head<2>()).norm(), 1e-3);
  EXPECT_GT(zmin, 0.3);
  // At rest the normal impulses carry the weight.
  const VecX impulse = test::sphereImpulses(*s.fc, r.model.nspheres());
  double fz = 0;
  for (int f = 0; f < 4; ++f) fz += impulse[3 * f] / o.dt;
  EXPECT_NEAR(fz, r.model.totalMass() * 9.81, 0.01 * r.model.totalMass() * 9.81);
}

// A box sliding on its sphere feet decelerates at mu g until it stops.
TEST(Step, SlidingBoxDeceleratesAtMuG) {
  const Model box = boxOnFeet();
  for (ContactModel cm : {ContactModel::Hard, ContactModel::Smoothed}) {
    SimOptions o = passive(0.001, cm);
    o.contact.mu = 0.5;
    o.contact.kappa = 1e5;
    VecX q0 = neutralConfiguration(box);
    q0[2] = 0.12 - 1e-5;  // feet just touching
    Sim<SingleBody> s(box, o, q0);
    s.v[0] = 2.0;
    s.run(0.05);
    const double v1 = s.v[0];
    s.run(0.2);
    const double v2 = s.v[0];
    const double decel = (v1 - v2) / 0.2;
    std::printf("%s: deceleration %.4f (mu g = %.4f)\n", toString(cm), decel, 0.5 * 9.81);
    EXPECT_NEAR(decel, 0.5 * 9.81, 0.01 * 0.5 * 9.81);
    s.run(0.5);
    EXPECT_NEAR(s.v[0], 0.0, 1e-5);  // at rest up to the rocking left by the stop
  }
}

// As kappa grows, the smoothed model's trajectory approaches the hard one.
TEST(Step, SmoothedApproachesHardAsKappaGrows) {
  Robot r = loadRobot("anymal");
  for (auto& j : r.model.joints) j.armature = 0.1;
  SimOptions o;
  o.dt = 0.005;
  o.actuator.kp = 85;
  o.actuator.kd = 2;
  VecX q0 = r.standingConfiguration();
  q0[2] += 0.05;
  auto run = [&](ContactModel cm, double kappa) {
    o.contact.model = cm;
    o.contact.kappa = kappa;
    Sim<Quadruped> s(r.model, o, q0);
    s.run(1.0);
    return VecX(s.q);
  };
  const VecX hard = run(ContactModel::Hard, 0);
  double prev = 1e9;
  for (double kappa : {300.0, 3000.0, 30000.0, 300000.0}) {
    const double err = (run(ContactModel::Smoothed, kappa) - hard).norm();
    std::printf("kappa %g: |q_smoothed - q_hard| = %.3e\n", kappa, err);
    EXPECT_LT(err, prev);
    prev = err;
  }
  EXPECT_LT(prev, 1e-3);
}

// The box on a height-field incline of angle theta, its feet on the surface, released at rest:
// with mu > tan(theta) it stays; with mu < tan(theta) it slides down at g (sin(theta) -
// mu cos(theta)). Hard and smoothed contact on the Gauss-Seidel solver in the surface's frame; the
// soft model slides at the same rate once on the Coulomb branch (below it, viscous friction lets
// it creep, so it is not checked at rest).
TEST(Step, BoxOnAnInclineSticksOrSlidesAtTheClosedForm) {
  const Model box = boxOnFeet();
  const double theta = 20 * M_PI / 180, g = 9.81;
  auto incline = std::make_shared<HeightField>();
  incline->spacing = 0.1;
  incline->nx = 81, incline->ny = 21;
  incline->originX = -4, incline->originY = -1;
  for (int iy = 0; iy < incline->ny; ++iy)
    for (int ix = 0; ix < incline->nx; ++ix)
      incline->heights.push_back(std::tan(theta) * (incline->originX + ix * incline->spacing));
  const Vec3 n(-std::sin(theta), 0, std::cos(theta)), up(std::cos(theta), 0, std::sin(theta));
  // Body z along n (a rotation about y by -theta); feet at z = -0.1 in the body: the base sits
  // 0.1 + radius along n from the surface.
  VecX q0 = neutralConfiguration(box);
  q0.head<3>() = (0.12 - 1e-5) * n;
  const Quat rot(Eigen::AngleAxisd(-theta, Vec3::UnitY()));
  q0.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
  struct Case {
    ContactModel cm;
    double mu, dt;
  };
  for (const Case& k : {Case{ContactModel::Hard, 0.2, 0.001}, Case{ContactModel::Smoothed, 0.2, 0.001},
                        Case{ContactModel::Soft, 0.2, 0.001}, Case{ContactModel::Hard, 0.5, 0.001},
                        Case{ContactModel::Smoothed, 0.5, 0.001}}) {
    SimOptions o = passive(k.dt, k.cm);
    o.contact.terrain = incline;
    o.contact.mu = k.mu;
    o.contact.kappa = 1e5;
    o.contact.softKp = 1e6, o.contact.softKd = 2e3;
    Sim<SingleBody> s(box, o, q0);
    s.run(0.1);
    const double v1 = s.v.head<3>().dot(up);
    const Vec3 p1 = s.q.head<3>();
    s.run(0.3);
    const double v2 = s.v.head<3>().dot(up);
    const double accel = (v2 - v1) / 0.3;
    const double expected = k.mu < std::tan(theta) ? -g * (std::sin(theta) - k.mu * std::cos(theta)) : 0.0;
    std::printf("%s, mu %.1f: acceleration along the incline %.4f m/s^2 (closed form %.4f), "
                "moved %.2e m off the surface normal\n",
                toString(k.cm), k.mu, accel, expected,
                std::abs((s.q.head<3>() - p1).dot(n)));
    EXPECT_NEAR(accel, expected, 0.01 * g * std::sin(theta)) << toString(k.cm) << " mu " << k.mu;
    EXPECT_LT(std::abs((s.q.head<3>() - p1).dot(n)), 1e-3);  // stays on the surface
    if (expected == 0.0) {
      EXPECT_LT(std::abs(v2), 1e-4);
    }
  }
}
