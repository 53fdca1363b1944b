// MuJoCo as an independent oracle for our rigid-body dynamics (the stages, sim/rigid_body.h): the
// same parsed Model compiled by MuJoCo must give the same mass matrix, bias forces and body/foot
// positions at random states.
#ifdef DIFFLOCO_WITH_MUJOCO

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "mujoco/mujoco_model.h"
#include "mujoco/joint_order.h"
#include "robots/robot.h"
#include "tests/sim/stages.h"

namespace {

using namespace diffloco;
using sim::MatX;
using sim::Vec3;
using sim::VecX;
using Kinematics = test::Kinematics<sim::Quadruped>;

struct State {
  VecX q, v;
};

State randomState(const sim::Model& model, std::mt19937& rng, double velStd) {
  std::uniform_real_distribution<double> pos(-1.0, 1.0), joint(-1.5, 1.5);
  std::normal_distribution<double> normal(0.0, 1.0);
  State s{VecX(model.nq()), VecX(model.nv())};
  for (int i = 0; i < 3; ++i) s.q[i] = pos(rng);
  Eigen::Vector4d quat;
  for (int i = 0; i < 4; ++i) quat[i] = normal(rng);
  s.q.segment<4>(3) = quat.normalized();
  for (int i = 0; i < model.nj(); ++i) s.q[7 + i] = joint(rng);
  for (int i = 0; i < model.nv(); ++i) s.v[i] = velStd * normal(rng);
  return s;
}

double maxAbsError(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

class MujocoOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(MujocoOracle, MassMatrixBiasForcesAndPositionsMatch) {
  Robot robot = loadRobot(GetParam());
  sim::Model& model = robot.model;
  for (auto& j : model.joints) j.armature = 0.1;  // MuJoCo adds armature to qM's diagonal too
  mj::MujocoModel mm(mj::toMjcf(model));
  ASSERT_EQ(mm.m->nq, model.nq());
  ASSERT_EQ(mm.m->nv, model.nv());
  ASSERT_EQ(mm.m->nbody, model.nbodies() + 1);  // + world

  std::vector<int> geomId, bodyId;
  for (const auto& f : model.feet) geomId.push_back(mj_name2id(mm.m, mjOBJ_GEOM, f.name.c_str()));
  for (const auto& b : model.bodies) bodyId.push_back(mj_name2id(mm.m, mjOBJ_BODY, b.name.c_str()));

  const sim::StepModel<sim::Quadruped> fm = sim::toStepModel<sim::Quadruped>(model);
  std::mt19937 rng(7);
  double errH = 0, errBias = 0, errFoot = 0, errCom = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const State s = randomState(model, rng, trial % 2 ? 2.0 : 1.0);
    mj::toMujocoState(model, s.q, s.v, mm.d->qpos, mm.d->qvel);
    mj_forward(mm.m, mm.d);

    Kinematics k(fm, s.q);
    const MatX H = k.massMatrix();
    const VecX bias = k.biasForces(s.v);

    const MatX Hmj = mj::massMatrix(model, mm.m, mm.d);  // in our joint order
    const VecX hmj = mj::biasForces(model, mm.m, mm.d);
    errH = std::max(errH, maxAbsError(H, Hmj) / Hmj.cwiseAbs().maxCoeff());
    errBias = std::max(errBias, maxAbsError(bias, hmj) / hmj.cwiseAbs().maxCoeff());

    for (int f = 0; f < model.nfeet(); ++f) {
      const Vec3 ours = k.worldPoint(model.feet[f].body, model.feet[f].offset);
      errFoot = std::max(errFoot, (ours - Vec3(mm.d->geom_xpos + 3 * geomId[f])).norm());
    }
    for (int i = 0; i < model.nbodies(); ++i) {
      const Vec3 ours = k.worldPoint(i, model.bodies[i].inertia.com());
      errCom = std::max(errCom, (ours - Vec3(mm.d->xipos + 3 * bodyId[i])).norm());
    }
  }
  std::printf(
      "[ %s ] max relative error H %.3g, bias %.3g; max position error feet %.3g m, "
      "COMs %.3g m\n",
      GetParam(), errH, errBias, errFoot, errCom);
  EXPECT_LT(errH, 1e-8);
  EXPECT_LT(errBias, 1e-8);
  EXPECT_LT(errFoot, 1e-10);
  EXPECT_LT(errCom, 1e-10);
}

// The velocity convention: like MuJoCo's free joint, our linear velocity is in world axes and the
// angular velocity in base axes (sim/model.h). Checked through the base frame's own velocity
// (pure translation, pure rotation, both) and through the feet with all joints moving.
TEST_P(MujocoOracle, FreeJointVelocityConvention) {
  const Robot robot = loadRobot(GetParam());
  const sim::Model& model = robot.model;
  mj::MujocoModel mm(mj::toMjcf(model));
  const int base = mj_name2id(mm.m, mjOBJ_XBODY, model.bodies[0].name.c_str());
  const sim::StepModel<sim::Quadruped> fm = sim::toStepModel<sim::Quadruped>(model);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    State s = randomState(model, rng, 1.5);
    if (trial % 3 == 0) s.v.tail(model.nv() - 3).setZero();  // pure translation
    if (trial % 3 == 1) {                                    // pure rotation
      s.v.head<3>().setZero();
      s.v.tail(model.nj()).setZero();
    }
    mj::toMujocoState(model, s.q, s.v, mm.d->qpos, mm.d->qvel);
    mj_forward(mm.m, mm.d);
    const Kinematics k(fm, s.q);

    mjtNum vel[6];  // [angular; linear] of the base frame, in base axes
    mj_objectVelocity(mm.m, mm.d, mjOBJ_XBODY, base, vel, 1);
    // our linear velocity is in world axes: base axes through the base's rotation R
    const Vec3 vBase = test::toVec3(sim::mulT(k.d.R[0], test::toV3(s.v.head<3>())));
    EXPECT_LT((Vec3(vel[3], vel[4], vel[5]) - vBase).norm(), 1e-12);
    EXPECT_LT((Vec3(vel[0], vel[1], vel[2]) - s.v.segment<3>(3)).norm(), 1e-12);

    for (int f = 0; f < model.nfeet(); ++f) {  // the feet are the first spheres
      mj_objectVelocity(mm.m, mm.d, mjOBJ_GEOM,
                        mj_name2id(mm.m, mjOBJ_GEOM, model.feet[f].name.c_str()), vel, 0);
      const MatX J = k.sphereJacobian(f);
      EXPECT_LT((Vec3(vel[3], vel[4], vel[5]) - J * s.v).norm(), 1e-12);
    }

    VecX q2, v2;  // the maps are inverses of each other
    mj::fromMujocoState(model, mm.d->qpos, mm.d->qvel, q2, v2);
    EXPECT_LT((q2 - s.q).norm() + (v2 - s.v).norm(), 1e-13);
  }
}

INSTANTIATE_TEST_SUITE_P(Robots, MujocoOracle, ::testing::Values("anymal", "quadruped", "go_like"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace

#endif  // DIFFLOCO_WITH_MUJOCO
