// robots/robot.h: the shipped robots load; a bad robot file is an error naming it (and, for a
// problem of its URDF, the URDF's own file and line after it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "robots/robot.h"
#include "robots/robot_report.h"
#include "sim/urdf.h"
#include "tests/config/hostile_yaml.h"
#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using diffloco::loadRobot;

namespace {

struct Scratch {
  diffloco::testing::ScratchDir scratch{"diffloco_robot"};
  fs::path dir = scratch.path();
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

std::string errorOf(const std::string& path) {
  try {
    loadRobot(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Robot, ShippedRobotsLoad) {
  for (const char* name : {"anymal", "quadruped", "go_like"}) {
    const diffloco::Robot r = loadRobot(name);
    EXPECT_EQ(r.model.nj(), 12) << name;
    EXPECT_EQ(r.model.nfeet(), 4) << name;
    EXPECT_GT(r.defaultBaseHeight, 0.3) << name;
  }
  // ANYmal's knees and shank tubes touch the ground too (anymal.yaml leg_contacts).
  const diffloco::Robot anymal = loadRobot("anymal");
  EXPECT_EQ(anymal.model.legSpheres.size(), 24u);
  EXPECT_EQ(anymal.model.nspheres(), 28);
}

TEST(Robot, BadLegContactsNameFileLineAndLink) {
  Scratch s;
  std::ifstream in(diffloco::configDir() + "/robots/anymal.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("urdf: anymal.urdf"), 17,
               "urdf: " + diffloco::configDir() + "/robots/anymal.urdf");
  const std::string key = "leg_contacts: [LF_SHANK, RF_SHANK, LH_SHANK, RH_SHANK]";
  const std::string line =
      std::to_string(1 + std::count(text.begin(), text.begin() + text.find(key), '\n'));
  auto with = [&](const std::string& to) {
    std::string t = text;
    t.replace(t.find(key), key.size(), to);
    return s.write("legs.yaml", t);
  };
  std::string p = with("leg_contacts: [LF_THIGH]");
  EXPECT_NE(
      errorOf(p).find(p + ":" + line +
                      ": leg_contacts: leg contact link 'LF_THIGH' carries no collision sphere"),
      std::string::npos)
      << errorOf(p);
  p = with("leg_contacts: [LF_FOOT]");
  EXPECT_NE(errorOf(p).find("is a foot"), std::string::npos) << errorOf(p);
  p = with("leg_contacts: LF_SHANK");
  EXPECT_NE(errorOf(p).find(p + ":" + line + ": leg_contacts must be a list"), std::string::npos)
      << errorOf(p);
  // Without the key the shank spheres are ignored, and said so.
  diffloco::RobotReport report;
  const diffloco::Robot feetOnly = diffloco::loadRobot(with(""), &report);
  EXPECT_TRUE(feetOnly.model.legSpheres.empty());
  bool noted = false;
  for (const auto& n : report.notes)
    noted |= n.find("ignored 24 collision spheres") != std::string::npos;
  EXPECT_TRUE(noted);
}

// The robot's drive and time step live in its YAML's task_defaults (one torch-free place for
// sim, bench, gradcheck, sysid and the tasks).
TEST(Robot, DriveAndTimeStepFromTaskDefaults) {
  const diffloco::Robot anymal = loadRobot("anymal");  // Table 9
  EXPECT_EQ(anymal.actuator.kp, 85);
  EXPECT_EQ(anymal.actuator.kd, 0.6);
  EXPECT_EQ(anymal.actuator.effort, 80);
  EXPECT_EQ(anymal.armature, 0.1);
  EXPECT_EQ(anymal.dt, 0.005);
  const diffloco::Robot quad = loadRobot("quadruped");  // Table 6
  EXPECT_EQ(quad.actuator.kp, 20);
  EXPECT_EQ(quad.actuator.kd, 1);
  EXPECT_EQ(quad.actuator.effort, 20);
  EXPECT_EQ(quad.armature, 0.01);
  EXPECT_EQ(quad.dt, 0.01);
  const diffloco::Robot go = loadRobot("go_like");
  EXPECT_EQ(go.actuator.kp, 60);
  EXPECT_EQ(go.actuator.effort, 23.7);
  // What the commands without a task simulate with: the same drive and step, the contact given,
  // and the robot's armature on every joint of a model.
  const diffloco::sim::SimOptions o = quad.simOptions(diffloco::sim::ContactModel::Hard);
  EXPECT_EQ(o.dt, 0.01);
  EXPECT_EQ(o.actuator.kp, 20);
  EXPECT_EQ(o.actuator.kd, 1);
  EXPECT_EQ(o.actuator.effort, 20);
  EXPECT_EQ(o.contact.model, diffloco::sim::ContactModel::Hard);
  EXPECT_EQ(anymal.simOptions().contact.model, diffloco::sim::ContactModel::Smoothed);
  diffloco::sim::Model m = anymal.model;
  anymal.applyArmature(m);
  ASSERT_FALSE(m.joints.empty());
  for (const auto& j : m.joints) EXPECT_EQ(j.armature, 0.1) << j.name;
}

TEST(Robot, BadDriveNamesFileLineAndKey) {
  Scratch s;
  const std::string anymal = diffloco::configDir() + "/robots/anymal.yaml";
  std::ifstream in(anymal);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("urdf: anymal.urdf"), 17,
               "urdf: " + diffloco::configDir() + "/robots/anymal.urdf");
  const std::string drive = "    kd: 0.6 ";
  const std::string kdLine =
      std::to_string(1 + std::count(text.begin(), text.begin() + text.find(drive), '\n'));
  auto withKd = [&](const std::string& to) {
    std::string t = text;
    t.replace(t.find(drive), drive.size(), to);
    return s.write("bad.yaml", t);
  };
  std::string p = withKd("    kq: 0.6 ");
  EXPECT_NE(errorOf(p).find(p + ":" + kdLine + ": task_defaults.actuator: unknown key 'kq'"),
            std::string::npos)
      << errorOf(p);
  p = withKd("    kd: -1 ");
  EXPECT_NE(errorOf(p).find(p + ":" + kdLine + ": task_defaults.actuator.kd is -1: must be"),
            std::string::npos)
      << errorOf(p);
  p = withKd("    kd: soft ");
  EXPECT_NE(errorOf(p).find(p + ":" + kdLine + ": task_defaults.actuator.kd: expected a number"),
            std::string::npos)
      << errorOf(p);
}

// Found by the fuzz target tests/fuzz/fuzz_robot_yaml.cpp: a missing URDF was reported with the
// URDF's path only, not the robot file that names it.
// yaml-cpp keeps one of two equal keys without a word (a second pose for a joint was ignored):
// a key given twice, at any depth, is an error naming the line and the key's path.
TEST(Robot, KeysGivenTwiceAreErrors) {
  Scratch s;
  const std::string robot = diffloco::configDir() + "/robots/quadruped.yaml";
  std::ifstream in(robot);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("urdf: quadruped.urdf"), 20,
               "urdf: " + diffloco::configDir() + "/robots/quadruped.urdf");
  const std::string line = std::to_string(
      1 + std::count(text.begin(), text.begin() + text.find("default_joint_pos:"), '\n'));
  std::string p = s.write("twice.yaml", text + "base_link: base\n");
  const std::string last = std::to_string(1 + std::count(text.begin(), text.end(), '\n'));
  EXPECT_NE(errorOf(p).find(p + ":" + last + ": 'base_link' given twice"), std::string::npos)
      << errorOf(p);
  std::string pose = text;
  pose.replace(pose.find("{LF_HAA: 0.2,"), 13, "{LF_HAA: 0.1, LF_HAA: 0.2,");
  p = s.write("pose.yaml", pose);
  EXPECT_NE(errorOf(p).find(p + ":" + line + ": 'default_joint_pos.LF_HAA' given twice"),
            std::string::npos)
      << errorOf(p);
  EXPECT_EQ(errorOf(s.write("once.yaml", text)), "");
}

TEST(Robot, UrdfErrorsNameTheRobotFileFirst) {
  Scratch s;
  const std::string yaml = s.write("r.yaml", "urdf: missing.urdf\n");
  const std::string e = errorOf(yaml);
  EXPECT_EQ(e.rfind(yaml + ": urdf: ", 0), 0u) << e;
  EXPECT_NE(e.find("missing.urdf: cannot open URDF file"), std::string::npos) << e;
  s.write("bad.urdf", "<robot name=\"r\">\n<link name=\"base\"/>\n</robot>\n");
  const std::string bad = s.write("b.yaml", "urdf: bad.urdf\n");
  const std::string e2 = errorOf(bad);
  EXPECT_EQ(e2.rfind(bad + ": urdf: ", 0), 0u) << e2;
  EXPECT_NE(e2.find("bad.urdf:2"), std::string::npos) << e2;  // the URDF's own line
}

// A robot file whose aliases hold themselves or expand to 10^10 nodes: a quick error naming the
// file and line (the first crashed `diffloco sim --robot`, the second kept it busy for minutes).
TEST(Robot, HostileYamlIsRefusedQuickly) {
  Scratch s;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string self = s.write("self.yaml", std::string("urdf: quadruped.urdf\n") +
                                                    diffloco::testing::kSelfReferentialAlias);
  EXPECT_EQ(errorOf(self).rfind(self + ":2: self-referential alias", 0), 0u) << errorOf(self);
  const std::string bomb =
      s.write("bomb.yaml", diffloco::testing::anchorBomb() + "urdf: quadruped.urdf\n");
  const std::string e = errorOf(bomb);
  EXPECT_EQ(e.rfind(bomb + ":6: alias expansion too large", 0), 0u) << e;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}
