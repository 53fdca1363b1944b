// robots/robot_tools.cpp: the standing height against the value tools/checks/check_urdf.py computed
// independently for the shipped robots; the shipped robots stand; a proposed YAML for a
// vendor-style URDF loads and stands; the report names what `robot check` promises.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "robots/robot_tools.h"
#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using namespace diffloco;

TEST(RobotTools, StandingHeightMatchesTheIndependentCheck) {
  // configs/robots/*.yaml: "computed by tools/checks/check_urdf.py: 0.588510" and "0.475874".
  EXPECT_NEAR(standingHeight(loadRobot("anymal").model, loadRobot("anymal").defaultJointPos),
              0.588510, 1e-6);
  const Robot q = loadRobot("quadruped");
  EXPECT_NEAR(standingHeight(q.model, q.defaultJointPos), 0.475874, 1e-6);
}

TEST(RobotTools, ShippedRobotsStand) {
  for (const char* name : {"anymal", "quadruped", "go_like"}) {
    const StandResult s = standingTest(loadRobot(name));
    EXPECT_TRUE(s.stood) << name << ": height " << s.finalHeight << ", tilt " << s.maxTiltDeg;
  }
}

// Gains from the command line (robot init --kp/--kd) are the proposed drive and the settle
// simulation's; the YAML says where they came from.
TEST(RobotTools, ProposedDriveTakesGivenGains) {
  const diffloco::testing::ScratchDir scratch("diffloco_gains");
  const fs::path dir = scratch.path();
  const std::string yaml = (dir / "mini.yaml").string();
  StandOptions gains;
  gains.kp = 40, gains.kd = 1;
  const std::string text =
      proposeRobotYaml(std::string(DIFFLOCO_TEST_DATA) + "/mini_like.urdf", yaml, nullptr, gains);
  std::ofstream(yaml) << text;
  const Robot r = loadRobot(yaml);
  EXPECT_EQ(r.actuator.kp, 40);
  EXPECT_EQ(r.actuator.kd, 1);
  EXPECT_NE(text.find("kp as given (robot init --kp)"), std::string::npos) << text;
  const std::string byMass =
      proposeRobotYaml(std::string(DIFFLOCO_TEST_DATA) + "/mini_like.urdf", yaml);
  EXPECT_NE(byMass.find("kp 8 N m/rad per kg of the robot's mass, kd kp / 20"), std::string::npos)
      << byMass;
}

TEST(RobotTools, ProposedYamlLoadsAndStands) {
  const diffloco::testing::ScratchDir scratch("diffloco_init");
  const fs::path dir = scratch.path();
  const std::string yaml = (dir / "mini.yaml").string();
  std::vector<std::string> log;
  std::ofstream(yaml) << proposeRobotYaml(std::string(DIFFLOCO_TEST_DATA) + "/mini_like.urdf", yaml,
                                          &log);
  RobotReport rr;
  const Robot r = loadRobot(yaml, &rr);
  EXPECT_EQ(r.model.nj(), 12);
  EXPECT_EQ(r.model.nfeet(), 4);
  // The largest <limit effort> caps every joint (abduction and hip 18, knee 26); each joint keeps
  // its own below it.
  EXPECT_EQ(r.torqueLimit, 26);
  int at18 = 0;
  for (const auto& j : r.model.joints) at18 += j.effort == 18;
  EXPECT_EQ(at18, 8);
  EXPECT_NEAR(standingHeight(r.model, r.defaultJointPos), r.defaultBaseHeight, 1e-6);
  const StandResult s = standingTest(r);
  EXPECT_TRUE(s.stood);
  // The proposed drive is the one the settle simulation stood the robot with.
  EXPECT_NEAR(r.actuator.kp, s.options.kp, 1e-3 * s.options.kp);
  EXPECT_NEAR(r.actuator.kd, s.options.kd, 1e-3 * s.options.kd);
  EXPECT_NEAR(r.armature, s.options.armature, 1e-3 * s.options.armature);
  EXPECT_EQ(r.actuator.effort, 26);
  EXPECT_EQ(r.dt, 0.005);
  // The velocity task's foot-height reference, scaled from ANYmal's (0.1 m at 0.5885 m standing):
  // a foot left on the ground earns 70 % of the term at the swing's peak.
  const YAML::Node foot = YAML::LoadFile(yaml)["task_defaults"]["rewards"]["foot_height_tracking"];
  const double peak = foot["height"].as<double>(), sigma = foot["sigma"].as<double>();
  EXPECT_NEAR(peak, 0.1 * r.defaultBaseHeight / 0.588510, 1e-3);
  EXPECT_NEAR(std::exp(-peak * peak / sigma), 0.7, 0.01);
  const std::string report = robotReport(r, rr, s);
  for (const char* what :
       {"mass 8.26", "STANDS", "warning: ", "link 'imu'", "standing height", "front_left_abduct"})
    EXPECT_NE(report.find(what), std::string::npos) << what << "\n" << report;
}
