// sim/actuator.h: the PD law, the effort clip (options vs URDF) and the DC-motor speed-torque
// envelope of sim/options.h (IsaacLab's DCMotor), at hand-computed points.
#include <gtest/gtest.h>

#include "sim/actuator.h"
#include "sim/urdf.h"

using namespace diffloco::sim;

namespace {

ActuatorOptions pd(double kp, double kd) {
  ActuatorOptions a;
  a.kp = kp;
  a.kd = kd;
  return a;
}

constexpr double kNoLimit = 1e10;  // the URDF's effort when it gives none

}  // namespace

TEST(Actuator, PdLaw) {
  const ActuatorOptions a = pd(20, 1);
  // 20 (0.5 - 0.2) - 1 (0.3) = 5.7
  EXPECT_DOUBLE_EQ(actuatorTorque(a, kNoLimit, 0.5, 0.2, 0.3), 5.7);
  // 20 (0.2 - 0.5) - 1 (-0.3) = -5.7
  EXPECT_DOUBLE_EQ(actuatorTorque(a, kNoLimit, 0.2, 0.5, -0.3), -5.7);
  // At the target and at rest: nothing; damping alone opposes the motion.
  EXPECT_EQ(actuatorTorque(a, kNoLimit, 1.0, 1.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(actuatorTorque(a, kNoLimit, 1.0, 1.0, 2.0), -2.0);
  // Defaults of the options (paper's Table 6): kp 20, kd 1.
  EXPECT_DOUBLE_EQ(actuatorTorque(ActuatorOptions{}, kNoLimit, 0.5, 0.2, 0.3), 5.7);
}

TEST(Actuator, EffortClipIsTheSmallerOfOptionsAndUrdf) {
  ActuatorOptions a = pd(100, 0);
  a.effort = 10;
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 8, 1, 0, 0), 8);  // URDF's 8 < options' 10
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 8, -1, 0, 0), -8);
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 50, 1, 0, 0), 10);  // options' 10 < URDF's 50
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 50, -1, 0, 0), -10);
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 8, 0.05, 0, 0), 5);  // inside the limit: untouched
  // The default saturation leaves a plain clip even at high speed.
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 8, 1, 0, 1000), 8);
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 8, -1, 0, -1000), -8);
}

// Stall torque 20, no-load speed 10 rad/s, effort 15. The lines 20 (1 - qd/10) and 20 (-1 - qd/10)
// meet the effort limits at qd = -2.5, 2.5 (inner corners) and at qd = +-17.5 (outer corners,
// 10 (1 + 15/20), where IsaacLab clips the speed).
TEST(Actuator, DcMotorEnvelope) {
  ActuatorOptions a = pd(1, 0);  // tau_pd = qTarget at q = 0
  a.effort = 15;
  a.saturation = 20;
  a.velocityLimit = 10;
  auto tau = [&](double command, double qd) { return actuatorTorque(a, kNoLimit, command, 0, qd); };

  // At rest: the effort limit.
  EXPECT_DOUBLE_EQ(tau(100, 0), 15);
  EXPECT_DOUBLE_EQ(tau(-100, 0), -15);
  EXPECT_DOUBLE_EQ(tau(7, 0), 7);
  // Inner corner: both bounds still at the effort limit.
  EXPECT_DOUBLE_EQ(tau(100, 2.5), 15);
  // qd = 5: max 20 (1 - 0.5) = 10; min max(20 (-1.5), -15) = -15.
  EXPECT_DOUBLE_EQ(tau(100, 5), 10);
  EXPECT_DOUBLE_EQ(tau(-100, 5), -15);
  EXPECT_DOUBLE_EQ(tau(9, 5), 9);
  // qd = -5 mirrors it: max 15, min 20 (-1 + 0.5) = -10.
  EXPECT_DOUBLE_EQ(tau(100, -5), 15);
  EXPECT_DOUBLE_EQ(tau(-100, -5), -10);
  // No-load speed: no driving torque left, full braking available.
  EXPECT_DOUBLE_EQ(tau(100, 10), 0);
  EXPECT_DOUBLE_EQ(tau(-100, 10), -15);
  // Beyond it the motor can only brake: max 20 (1 - 1.2) = -4, whatever the command.
  EXPECT_DOUBLE_EQ(tau(100, 12), -4);
  EXPECT_DOUBLE_EQ(tau(0, 12), -4);
  EXPECT_DOUBLE_EQ(tau(-100, 12), -15);
  EXPECT_DOUBLE_EQ(tau(100, -12), 15);
  EXPECT_DOUBLE_EQ(tau(0, -12), 4);
  // Outer corner and past it: the speed is clipped to 17.5, so max = min = -15 (not max 20 (1 - 3)
  // = -40 < min -15 at qd = 30, an empty interval).
  EXPECT_DOUBLE_EQ(tau(100, 17.5), -15);
  EXPECT_DOUBLE_EQ(tau(100, 30), -15);
  EXPECT_DOUBLE_EQ(tau(-100, 30), -15);
  EXPECT_DOUBLE_EQ(tau(-100, -30), 15);
  EXPECT_DOUBLE_EQ(tau(100, -1e6), 15);

  // The damping term is clipped together with the stiffness term: kp 85, kd 0.6 at q* - q = 0.2,
  // qd = 5 gives 17 - 3 = 14, above the envelope's 10.
  a.kp = 85;
  a.kd = 0.6;
  EXPECT_DOUBLE_EQ(actuatorTorque(a, kNoLimit, 0.3, 0.1, 5), 10);
  EXPECT_NEAR(actuatorTorque(a, kNoLimit, 0.3, 0.25, 5), 85 * 0.05 - 3, 1e-12);
  // The URDF limit shrinks the envelope's flat part too.
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 12, 1, 0, 0), 12);
  EXPECT_DOUBLE_EQ(actuatorTorque(a, 12, -1, 0, 0), -12);
}

// actuatorTorques reads joint j at q[7 + j], v[6 + j] and applies each joint's own URDF limit.
TEST(Actuator, AllJointsUseTheirOwnLimitsAndStateSlots) {
  const Model m = parseUrdf(R"(<robot name="r">
    <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
    <joint name="a" type="revolute"><parent link="base"/><child link="la"/><limit effort="5"/></joint>
    <link name="la"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
    <joint name="b" type="revolute"><parent link="base"/><child link="lb"/><limit effort="50"/></joint>
    <link name="lb"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
    <joint name="c" type="continuous"><parent link="base"/><child link="lc"/></joint>
    <link name="lc"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
  </robot>)",
                            "r.urdf");
  ASSERT_EQ(m.nj(), 3);
  ActuatorOptions a = pd(100, 2);
  a.effort = 20;
  VecX q = neutralConfiguration(m), v = VecX::Zero(m.nv()), target(3), tau(3);
  q.tail(3) << 0.1, 0.2, -0.3;
  v.tail(3) << 1, -1, 0.5;
  v.head(6).setConstant(7);  // base velocities must not enter
  target << 0.2, 0.1, -0.25;
  actuatorTorques(m, a, target, q, v, tau);
  EXPECT_DOUBLE_EQ(tau[0], 5);     // 100 (0.1) - 2 = 8, URDF limit 5
  EXPECT_NEAR(tau[1], -8, 1e-12);  // 100 (-0.1) + 2 = -8, inside
  EXPECT_NEAR(tau[2], 4, 1e-12);   // 100 (0.05) - 1 = 4, inside (no URDF limit)
  target[1] = -1;                  // 100 (-1.2) + 2 = -118: options' 20 < URDF's 50
  target[2] = 5;                   // 100 (5.3) - 1 = 529: options' 20
  actuatorTorques(m, a, target, q, v, tau);
  EXPECT_DOUBLE_EQ(tau[1], -20);
  EXPECT_DOUBLE_EQ(tau[2], 20);
}
