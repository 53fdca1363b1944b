// robots/robot.h: the shipped robots load; a bad robot file is an error naming it (and, for a
// problem of its URDF, the URDF's own file and line after it).
#include "robots/robot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/urdf.h"

namespace fs = std::filesystem;
using diffloco::loadRobot;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("diffloco_robot_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
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
}

// Found by the fuzz target tests/fuzz/fuzz_robot_yaml.cpp: a missing URDF was reported with the
// URDF's path only, not the robot file that names it.
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
