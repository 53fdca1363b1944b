#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "robots/robot.h"
#include "sim/terrain.h"
#include "tests/sim/stages.h"

using namespace diffloco;
using namespace diffloco::sim;
using test::toVec3;

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
    const test::Stages<Quadruped> st(robot.model, opt);
    VecX qn(q.size()), vn(v.size());
    for (int k = 0; k < 400; ++k) {
      st.step(q, v, robot.defaultJointPos, qn, vn);
      q = qn;
      v = vn;
    }
  }
};

}  // namespace

TEST(Contact, ProxKeepsImpulsesInTheFrictionCone) {
  EXPECT_EQ(toVec3(proxFrictionCone(v3(-1, 0.3, 0.2), 0.5)), Vec3::Zero());
  EXPECT_EQ(toVec3(proxFrictionCone(v3(1, 0.3, 0.2), 0.5)), Vec3(1, 0.3, 0.2));
  const Vec3 p = toVec3(proxFrictionCone(v3(2, 3, 4), 0.5));
  EXPECT_DOUBLE_EQ(p[0], 2);
  EXPECT_NEAR(std::hypot(p[1], p[2]), 1.0, 1e-12);
  EXPECT_NEAR(p[1] / p[2], 0.75, 1e-12);
}

// Ten Gauss-Seidel sweeps from the eq. 11 guess reach the converged impulses of a robot standing on
// four feet (the decision on the r-factor in contact.cpp rests on this).
TEST(Contact, TenIterationsConvergeStandingOnFourFeet) {
  Standing s;
  const Model& m = s.robot.model;
  auto fc = std::make_unique<Contacts<Quadruped>>();
  VecX qn(m.nq()), vn(m.nv());
  auto impulses = [&](int iterations) {
    SimOptions o = s.opt;
    o.contact.iterations = iterations;
    test::Stages<Quadruped>(m, o).step(s.q, s.v, s.robot.defaultJointPos, qn, vn, *fc);
    EXPECT_EQ(fc->nc, 4);
    return VecX(Eigen::Map<const VecX>(fc->impulse, 12));
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

// The contact stage passes over leg spheres far from a height field by a bound (depthUpperBound,
// from the samples or a finalized field's cell bounds): the spheres it takes, and their depths,
// are the ones the exact geometry selects (vertical and closest), on stairs and rough ground with
// the robot crouched low enough that knees touch. The soft model's fixed sub-steps take the
// spheres in contact, as the hard model does.
TEST(Contact, LegSpheresPassedOverAreThoseTheExactGeometryLeavesOut) {
  const Robot robot = loadRobot("anymal");
  const Model& m = robot.model;
  ASSERT_GT(m.nspheres(), m.nfeet());
  std::mt19937 rng(11);
  const auto [hf, finalized] = test::stairsThenBumps(rng);  // the samples' bound, the cells'
  std::uniform_real_distribution<double> u(-1, 1);
  const std::shared_ptr<const HeightField> fields[] = {hf, finalized};
  const StepModel<Quadruped> fm = toStepModel<Quadruped>(m);
  const HeightFieldView exactGround = toView(hf.get());  // no cell bounds
  StepData<Quadruped> data;
  auto fc = std::make_unique<Contacts<Quadruped>>();
  int legTaken = 0, legPassed = 0;
  for (const auto& field : fields)
    for (bool closest : {false, true})
      for (ContactModel model : {ContactModel::Hard, ContactModel::Smoothed, ContactModel::Soft})
        for (int k = 0; k < 200; ++k) {
          SimOptions so;
          ContactOptions& opt = so.contact;
          opt.model = model;
          opt.terrain = field;
          opt.terrainContact = closest ? TerrainContact::Closest : TerrainContact::Vertical;
          VecX q = robot.standingConfiguration();
          q[0] = 0.9 * u(rng), q[1] = 0.9 * u(rng), q[2] = 0.25 + 0.25 * (u(rng) + 1);
          for (int i = 7; i < m.nq(); ++i) q[i] += 0.8 * u(rng);
          forwardKinematics(fm, data, q.data());
          collectContacts(fm, toStepOptions(so), data, toView(field.get()), *fc);
          std::vector<int> exact;
          std::vector<double> exactDepth;
          const bool smoothed = model == ContactModel::Smoothed;
          const double legEntry = smoothed ? -std::log(1e6) / opt.kappa : 0.0;
          for (int j = 0; j < m.nspheres(); ++j) {
            const double d =
                sphereContact(exactGround, sphereCentre(fm, data, j), m.sphere(j).radius, closest)
                    .depth;
            const bool leg = j >= m.nfeet();
            const double entry = leg ? legEntry : smoothed ? -opt.cutoff : 0.0;
            if (d >= entry) {
              exact.push_back(j);
              exactDepth.push_back(d);
            }
            if (leg) (d >= entry ? legTaken : legPassed) += 1;
          }
          ASSERT_EQ(std::vector<int>(fc->active, fc->active + fc->nc), exact) << "state " << k;
          for (int a = 0; a < fc->nc; ++a) EXPECT_EQ(fc->contact[a].depth, exactDepth[a]);
        }
  EXPECT_GT(legTaken, 100);
  EXPECT_GT(legPassed, 2000);
}
