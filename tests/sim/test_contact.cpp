#include <gtest/gtest.h>

#include "robots/robot.h"
#include "sim/contact.h"
#include "sim/step.h"

using namespace diffloco;
using namespace diffloco::sim;

namespace {

// A robot settled on four feet with the hard model (ANYmal-like, the paper's Table 9 drive).
struct Standing {
  Robot robot = loadRobot("anymal");
  SimOptions opt;
  VecX q, v;
  Standing() {
    for (auto& j : robot.model.joints) j.armature = 0.1;
    opt.dt = 0.005;
    opt.contact.model = ContactModel::Hard;
    opt.actuator.kp = 85;
    opt.actuator.kd = 0.6;
    q = robot.standingConfiguration();
    q[2] -= 0.002;
    v = VecX::Zero(robot.model.nv());
    Data data(robot.model);
    VecX qn(q.size()), vn(v.size());
    for (int k = 0; k < 400; ++k) {
      step(robot.model, opt, data, q, v, robot.defaultJointPos, qn, vn);
      q = qn;
      v = vn;
    }
  }
};

}  // namespace

TEST(Contact, ProxKeepsImpulsesInTheFrictionCone) {
  EXPECT_EQ(proxFrictionCone(Vec3(-1, 0.3, 0.2), 0.5), Vec3::Zero());
  EXPECT_EQ(proxFrictionCone(Vec3(1, 0.3, 0.2), 0.5), Vec3(1, 0.3, 0.2));
  const Vec3 p = proxFrictionCone(Vec3(2, 3, 4), 0.5);
  EXPECT_DOUBLE_EQ(p[0], 2);
  EXPECT_NEAR(std::hypot(p[1], p[2]), 1.0, 1e-12);
  EXPECT_NEAR(p[1] / p[2], 0.75, 1e-12);
}

// Ten Gauss-Seidel sweeps from the eq. 11 guess reach the converged impulses of a robot standing on
// four feet (the decision on the r-factor in contact.cpp rests on this).
TEST(Contact, TenIterationsConvergeStandingOnFourFeet) {
  Standing s;
  const Model& m = s.robot.model;
  Data data(m);
  VecX qn(m.nq()), vn(m.nv());
  auto impulses = [&](int iterations) {
    SimOptions o = s.opt;
    o.contact.iterations = iterations;
    step(m, o, data, s.q, s.v, s.robot.defaultJointPos, qn, vn);
    EXPECT_EQ(data.active.size(), 4u);
    return VecX(data.impulse.head(12));
  };
  const VecX ref = impulses(2000);
  const VecX p10 = impulses(10);
  const VecX p0 = impulses(0);
  // The eq. 11 guess alone is several percent off (the feet are coupled through the base).
  EXPECT_GT((p0 - ref).norm(), 0.01 * ref.norm());
  std::printf("err0 %g err10 %g\n", (p0 - ref).norm() / ref.norm(),
              (p10 - ref).norm() / ref.norm());
  EXPECT_LT((p10 - ref).norm(), 1e-8 * ref.norm());
  for (int j = 0; j < 4; ++j) EXPECT_GT(ref[3 * j], 0);
}
