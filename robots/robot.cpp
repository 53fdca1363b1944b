#include "robots/robot.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>

#include "robots/robot_report.h"
#include "sim/model_edit.h"
#include "sim/urdf.h"

#ifndef DIFFLOCO_SOURCE_DIR
#define DIFFLOCO_SOURCE_DIR "."
#endif

namespace diffloco {
namespace fs = std::filesystem;

std::string configDir() {
  if (const char* env = std::getenv("DIFFLOCO_CONFIG_DIR")) return env;
  return std::string(DIFFLOCO_SOURCE_DIR) + "/configs";
}

sim::VecX Robot::standingConfiguration() const {
  sim::VecX q = sim::neutralConfiguration(model);
  q[2] = defaultBaseHeight;
  q.tail(model.nj()) = defaultJointPos;
  return q;
}

namespace {

const char* const kKeys[] = {
    "urdf",         "base_link", "joint_order", "feet", "default_joint_pos", "default_base_height",
    "torque_limit", "strict"};

// An error at a YAML node: "file:line: what".
struct AtNode : std::runtime_error {
  AtNode(const YAML::Node& n, const std::string& what)
      : std::runtime_error(std::to_string(n.Mark().line + 1) + ": " + what) {}
};

// Each file's warnings once per process: environments load their robot many times.
void printOnce(const std::string& path, const RobotReport& r) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  std::lock_guard<std::mutex> lock(mutex);
  if (!printed.insert(path).second) return;
  for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
  for (const auto& n : r.notes) std::cerr << "note: " << n << "\n";
}

}  // namespace

Robot loadRobot(const std::string& nameOrPath) {
  return loadRobot(nameOrPath, nullptr);
}

Robot loadRobot(const std::string& nameOrPath, RobotReport* reportOut) {
  RobotReport local;
  RobotReport& rep = reportOut ? *reportOut : local;
  rep = {};
  fs::path path = nameOrPath;
  if (path.extension() != ".yaml") path = fs::path(configDir()) / "robots" / (nameOrPath + ".yaml");
  if (!fs::exists(path))
    throw std::runtime_error(path.string() + ": robot file not found (expected a robot name from " +
                             configDir() + "/robots or a path to a .yaml)");
  YAML::Node y;
  try {
    y = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  auto need = [&](const char* key) {
    if (!y[key]) throw std::runtime_error("missing key '" + std::string(key) + "'");
    return y[key];
  };
  Robot r;
  r.name = path.stem().string();
  r.yamlPath = path.string();
  try {
    if (!y.IsMap()) throw std::runtime_error("expected a map of robot keys");
    for (const auto& kv : y) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
        std::string known;
        for (const char* k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
        throw AtNode(kv.first, "unknown key '" + key + "' (expected one of: " + known + ")");
      }
    }
    const YAML::Node urdfNode = need("urdf");  // first, so a bad URDF is reported before the rest
    if (y["strict"]) rep.strict = y["strict"].as<bool>();
    sim::UrdfOptions uo;
    uo.strict = rep.strict;
    sim::UrdfReport report;
    r.model =
        sim::loadUrdf((path.parent_path() / urdfNode.as<std::string>()).string(), uo, &report);
    rep.warnings = report.warnings;
    rep.notes = report.notes;
    if (y["base_link"] && y["base_link"].as<std::string>() != r.model.bodies[0].name)
      throw AtNode(y["base_link"], "base_link is '" + y["base_link"].as<std::string>() +
                                       "' but the URDF's floating base is '" +
                                       r.model.bodies[0].name + "'");

    const YAML::Node orderNode = need("joint_order");
    try {
      r.model = sim::reorderJoints(r.model, orderNode.as<std::vector<std::string>>());
    } catch (const std::invalid_argument& e) {
      throw AtNode(orderNode, std::string("joint_order: ") + e.what());
    }

    const int spheres = r.model.nfeet();
    std::vector<std::string> feet;
    if (y["feet"]) {
      feet = y["feet"].as<std::vector<std::string>>();
      if (feet.empty())
        throw AtNode(y["feet"],
                     "feet: the list is empty (leave the key out to take the spheres "
                     "at the leg ends)");
    } else {
      feet = sim::findFeet(r.model);
      std::string names;
      for (const auto& f : feet) names += (names.empty() ? "" : ", ") + f;
      if (feet.empty())
        throw std::runtime_error("no 'feet' key and no collision sphere at the end of any leg");
      rep.notes.push_back(r.yamlPath +
                          ": no 'feet' key: the spheres at the ends of the legs are the "
                          "feet: " +
                          names);
    }
    try {
      r.model = sim::selectFeet(r.model, feet);
    } catch (const std::invalid_argument& e) {
      throw AtNode(y["feet"] ? y["feet"] : orderNode, std::string("feet: ") + e.what());
    }
    if (spheres > r.model.nfeet())
      rep.notes.push_back(r.yamlPath + ": ignored " + std::to_string(spheres - r.model.nfeet()) +
                          " collision spheres on links that are not feet");

    r.defaultJointPos = sim::VecX::Zero(r.model.nj());
    const YAML::Node pose = need("default_joint_pos");
    if (!pose.IsMap()) throw AtNode(pose, "default_joint_pos must be a map joint name -> angle");
    for (const auto& kv : pose)
      if (r.model.jointIndex(kv.first.as<std::string>()) < 0)
        throw AtNode(kv.first, "default_joint_pos: '" + kv.first.as<std::string>() +
                                   "' is not a movable joint of the URDF");
    for (int i = 0; i < r.model.nj(); ++i) {
      const auto& n = r.model.joints[i].name;
      if (!pose[n]) throw AtNode(pose, "default_joint_pos: missing joint '" + n + "'");
      r.defaultJointPos[i] = pose[n].as<double>();
    }
    r.defaultBaseHeight = need("default_base_height").as<double>();
    r.torqueLimit = need("torque_limit").as<double>();
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ":" + std::to_string(e.mark.line + 1) + ": " +
                             e.what());
  } catch (const sim::ModelError& e) {
    // The URDF's own error names its file and line; the robot file that points at it comes first.
    throw sim::ModelError(path.string() + ": urdf: " + e.what());
  } catch (const AtNode& e) {
    throw std::runtime_error(path.string() + ":" + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  printOnce(r.yamlPath, rep);
  return r;
}

}  // namespace diffloco
