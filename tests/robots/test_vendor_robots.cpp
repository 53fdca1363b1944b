// Vendor-style robots (tests/robots/data, written by make_vendor_urdfs.py): each loads with exactly
// the expected warnings and notes, follows its YAML's joint order and feet, agrees with MuJoCo on
// the mass matrix and bias forces, and stands in hard contact with PD holding its default pose.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "robots/robot.h"
#include "robots/robot_report.h"
#include "robots/robot_tools.h"
#include "tests/sim/stages.h"
#include "tests/support/scratch_dir.h"
#ifdef DIFFLOCO_WITH_MUJOCO
#include "mujoco/joint_order.h"
#include "mujoco/mujoco_model.h"
#endif

namespace fs = std::filesystem;
using namespace diffloco;

namespace {

const std::string kData = DIFFLOCO_TEST_DATA;

bool contains(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

std::string errorOf(const std::string& path) {
  try {
    loadRobot(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

struct Scratch {
  diffloco::testing::ScratchDir scratch{"diffloco_vendor"};
  fs::path dir = scratch.path();
  // A copy of a data YAML with `edit` applied (its URDF path made absolute).
  std::string yaml(const std::string& name, const std::string& from, const std::string& to) const {
    std::ifstream in(kData + "/" + name);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string urdf = "urdf: " + name.substr(0, name.size() - 5) + ".urdf";
    s.replace(s.find(urdf), urdf.size(),
              "urdf: " + kData + "/" + name.substr(0, name.size() - 5) + ".urdf");
    if (!from.empty()) s.replace(s.find(from), from.size(), to);
    std::ofstream(dir / name) << s;
    return (dir / name).string();
  }
};

}  // namespace

TEST(VendorRobots, GoLikeLoadsWithTheCameraWarnings) {
  RobotReport rr;
  const Robot r = loadRobot(kData + "/go_like.yaml", &rr);
  EXPECT_FALSE(rr.strict);
  // Two cameras with a non-physical inertia, each named; nothing else repaired.
  ASSERT_EQ(rr.warnings.size(), 2u);
  EXPECT_TRUE(contains(rr.warnings, "link 'camera_face': rotational inertia is not physical"));
  EXPECT_TRUE(contains(rr.warnings, "link 'camera_chin': rotational inertia is not physical"));
  EXPECT_TRUE(contains(rr.warnings, "go_like.urdf:"));
  // One summary of the ignored collision geometry (trunk box, imu box, two camera boxes, per leg a
  // hip cylinder and two boxes).
  ASSERT_EQ(rr.notes.size(), 1u) << rr.notes[0];
  EXPECT_TRUE(
      contains(rr.notes, "ignored 16 non-sphere collision geometries (12 box, 4 cylinder)"));
  // Policy order = YAML order, not the tree order (FR first in the URDF).
  ASSERT_EQ(r.model.nj(), 12);
  EXPECT_EQ(r.model.joints[0].name, "FL_hip_joint");
  EXPECT_EQ(r.model.joints[3].name, "FR_hip_joint");
  EXPECT_EQ(r.model.joints[2].effort, 35.55);
  EXPECT_EQ(r.model.joints[2].lower, -2.818);
  EXPECT_EQ(r.defaultJointPos[2], -1.8);
  ASSERT_EQ(r.model.nfeet(), 4);
  EXPECT_EQ(r.model.feet[0].name, "FL_foot");
  EXPECT_EQ(r.model.bodies[0].name, "base");  // the dummy root carries the trunk, IMU and cameras
  EXPECT_NEAR(r.model.totalMass(), 5.204 + 0.001 + 2 * 0.063 + 4 * (0.68 + 1.009 + 0.196 + 0.06),
              1e-12);
  EXPECT_NEAR(standingHeight(r.model, r.defaultJointPos), r.defaultBaseHeight, 1e-6);
}

TEST(VendorRobots, MiniLikeLoadsWithTheImuWarningAndFindsItsFeet) {
  RobotReport rr;
  const Robot r = loadRobot(kData + "/mini_like.yaml", &rr);
  ASSERT_EQ(rr.warnings.size(), 1u);
  EXPECT_TRUE(contains(rr.warnings, "link 'imu': rotational inertia is not physical"));
  EXPECT_TRUE(contains(rr.notes, "floating joint 'world_to_body' from the dummy root 'world'"));
  EXPECT_TRUE(contains(rr.notes, "ignored 5 non-sphere collision geometries (4 cylinder, 1 mesh)"));
  EXPECT_TRUE(contains(rr.notes,
                       "no 'feet' key: the spheres at the ends of the legs are the feet: "
                       "front_left_lower, front_right_lower, back_left_lower, "
                       "back_right_lower"));
  EXPECT_TRUE(contains(
      rr.notes, "ignored 4 collision spheres on links that are neither feet nor leg contacts"));
  EXPECT_EQ(rr.notes.size(), 4u);
  EXPECT_EQ(r.model.bodies[0].name, "body");
  EXPECT_EQ(r.model.joints[4].name, "front_left_hip");  // IsaacLab's order, kept
  EXPECT_EQ(r.model.joints[0].upper, 1e10);             // continuous: no position limit
  EXPECT_EQ(r.model.joints[0].effort, 18);
  for (const auto& f : r.model.feet) EXPECT_LT((f.offset - sim::Vec3(0, 0, -0.195)).norm(), 1e-15);
  EXPECT_NEAR(standingHeight(r.model, r.defaultJointPos), r.defaultBaseHeight, 1e-5);
}

TEST(VendorRobots, StrictRefusesTheCameraInertia) {
  Scratch s;
  const std::string path =
      s.yaml("go_like.yaml", "torque_limit: 23.7", "torque_limit: 23.7\nstrict: true");
  const std::string e = errorOf(path);
  EXPECT_EQ(e.rfind(path + ": urdf: ", 0), 0u) << e;
  EXPECT_NE(e.find("go_like.urdf:"), std::string::npos) << e;
  EXPECT_NE(e.find("<inertia>: link 'camera_face'"), std::string::npos) << e;
  EXPECT_NE(e.find("strict: true"), std::string::npos) << e;
}

TEST(VendorRobots, BadRobotFilesNameFileLineAndKey) {
  Scratch s;
  std::string p =
      s.yaml("go_like.yaml", "torque_limit: 23.7", "torque_limit: 23.7\ntorque_limt: 3");
  EXPECT_NE(errorOf(p).find(p + ":15: unknown key 'torque_limt' (expected one of: urdf,"),
            std::string::npos)
      << errorOf(p);
  p = s.yaml("go_like.yaml", "[FL_hip_joint, FL_thigh_joint", "[FL_thigh_joint, FL_hip_joint");
  EXPECT_NE(errorOf(p).find(p + ":5: joint_order: joint 'FL_thigh_joint' is listed before joint "
                                "'FL_hip_joint' that carries it"),
            std::string::npos)
      << errorOf(p);
  p = s.yaml("go_like.yaml", "feet: [FL_foot", "feet: [FL_calf");
  EXPECT_NE(errorOf(p).find(p + ":7: feet: link 'FL_calf' carries no collision sphere"),
            std::string::npos)
      << errorOf(p);
  p = s.yaml("go_like.yaml", "FL_hip_joint: 0.0,", "FL_hip_joint: 0.0, FL_knee: 1,");
  EXPECT_NE(errorOf(p).find(p + ":8: default_joint_pos: 'FL_knee' is not a movable joint"),
            std::string::npos)
      << errorOf(p);
  p = s.yaml("go_like.yaml", "feet: [FL_foot, FR_foot, RL_foot, RR_foot]", "feet: []");
  EXPECT_NE(errorOf(p).find(p + ":7: feet: the list is empty"), std::string::npos) << errorOf(p);
  p = s.yaml("go_like.yaml", "base_link: base", "base_link: trunk");
  EXPECT_NE(errorOf(p).find(p + ":4: base_link is 'trunk' but the URDF's floating base is 'base'"),
            std::string::npos)
      << errorOf(p);
}

// Hard contact, PD on the default pose, dropped from 2 cm: the robot comes to rest upright, its
// feet carrying its weight, near its standing height.
TEST(VendorRobots, EachStandsInHardContact) {
  for (const char* name : {"go_like", "mini_like"}) {
    const Robot r = loadRobot(kData + "/" + name + ".yaml");
    const StandResult s = standingTest(r);
    std::printf(
        "[ %s ] final height %.4f m (standing %.4f), tilt %.3g deg, speed %.2g m/s, "
        "normal force %.1f %% of the weight, joint error %.3g rad\n",
        name, s.finalHeight, r.defaultBaseHeight, s.maxTiltDeg, s.finalSpeed,
        100 * s.weightFraction, s.maxJointError);
    EXPECT_TRUE(s.stood) << name;
    EXPECT_GT(s.finalHeight, 0.85 * r.defaultBaseHeight) << name;
    EXPECT_LT(s.maxTiltDeg, 2) << name;
  }
}

#ifdef DIFFLOCO_WITH_MUJOCO
// The MuJoCo oracle (as tests/sim/test_mujoco_oracle.cpp) on the reordered, merged, repaired
// models: MuJoCo numbers its hinges depth-first, so this also checks mj::mujocoJointOrder.
TEST(VendorRobots, MujocoAgreesOnMassMatrixAndBiasForces) {
  for (const char* name : {"go_like", "mini_like"}) {
    Robot r = loadRobot(kData + "/" + name + ".yaml");
    sim::Model& model = r.model;
    for (auto& j : model.joints) j.armature = 0.05;
    mj::MujocoModel mm(mj::toMjcf(model));
    const sim::StepModel<sim::Quadruped> sm = sim::toStepModel<sim::Quadruped>(model);
    std::mt19937 rng(5);
    std::normal_distribution<double> n(0, 1);
    double errH = 0, errBias = 0, errFoot = 0;
    for (int trial = 0; trial < 100; ++trial) {
      sim::VecX q = sim::neutralConfiguration(model), v(model.nv());
      for (int i = 0; i < 3; ++i) q[i] = n(rng);
      q.segment<4>(3) = Eigen::Vector4d(n(rng), n(rng), n(rng), n(rng)).normalized();
      for (int j = 0; j < model.nj(); ++j) q[7 + j] = n(rng);
      for (int i = 0; i < model.nv(); ++i) v[i] = 2 * n(rng);
      mj::toMujocoState(model, q, v, mm.d->qpos, mm.d->qvel);
      mj_forward(mm.m, mm.d);
      test::Kinematics<sim::Quadruped> k(sm, q);
      const sim::MatX Hs = k.massMatrix();
      const sim::VecX bias = k.biasForces(v);
      const sim::MatX H = mj::massMatrix(model, mm.m, mm.d);
      const sim::VecX h = mj::biasForces(model, mm.m, mm.d);
      errH = std::max(errH, (Hs - H).cwiseAbs().maxCoeff() / H.cwiseAbs().maxCoeff());
      errBias = std::max(errBias, (bias - h).cwiseAbs().maxCoeff() / h.cwiseAbs().maxCoeff());
      for (const auto& f : model.feet) {
        const int g = mj_name2id(mm.m, mjOBJ_GEOM, f.name.c_str());
        errFoot = std::max(
            errFoot,
            (k.worldPoint(f.body, f.offset) - sim::Vec3(mm.d->geom_xpos + 3 * g)).norm());
      }
    }
    std::printf("[ %s ] max relative error H %.3g, bias %.3g; feet %.3g m\n", name, errH, errBias,
                errFoot);
    EXPECT_LT(errH, 1e-8) << name;
    EXPECT_LT(errBias, 1e-8) << name;
    EXPECT_LT(errFoot, 1e-10) << name;
  }
}
#endif
