#include "robots/robot.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>

#include "config/archive.h"
#include "config/yaml_guard.h"
#include "io/excerpt.h"
#include "io/file_status.h"
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

sim::SimOptions Robot::simOptions(sim::ContactModel contact) const {
  sim::SimOptions o;
  o.dt = dt;
  o.contact.model = contact;
  o.actuator = actuator;
  return o;
}

void Robot::applyArmature(sim::Model& m) const {
  for (auto& j : m.joints) j.armature = armature;
}

namespace {

const char* const kKeys[] = {
    "urdf",         "base_link",         "joint_order",         "feet",
    "leg_contacts", "default_joint_pos", "default_base_height", "torque_limit",
    "strict",       "task_defaults"};
const char* const kActuatorKeys[] = {"kp",      "kd", "effort", "saturation", "velocity_limit",
                                     "armature"};

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

// task_defaults.actuator: the robot's drive. The rest of task_defaults is a partial task that
// the envs layer checks and fills into the tasks (envs/task_config.h).
void readDrive(const YAML::Node& defaults, Robot& r) {
  r.actuator = sim::ActuatorOptions{};
  r.actuator.effort = r.torqueLimit;
  r.armature = 0;
  r.dt = 0.005;
  if (!defaults) return;
  if (!defaults.IsMap()) throw AtNode(defaults, "task_defaults: expected a map (a partial task)");
  if (const YAML::Node sim = defaults["sim"]; sim && sim.IsMap() && sim["dt"]) {
    try {
      r.dt = sim["dt"].as<double>();
    } catch (const YAML::Exception&) {
      throw AtNode(sim["dt"], "task_defaults.sim.dt: expected a number");
    }
    if (!(r.dt >= 1e-5 && r.dt <= 0.1))
      throw AtNode(sim["dt"],
                   "task_defaults.sim.dt is " + sim["dt"].Scalar() + ": must be in [1e-05, 0.1]");
  }
  const YAML::Node a = defaults["actuator"];
  if (!a) return;
  if (!a.IsMap()) throw AtNode(a, "task_defaults.actuator: expected a map");
  for (const auto& kv : a) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(std::begin(kActuatorKeys), std::end(kActuatorKeys), key) ==
        std::end(kActuatorKeys)) {
      std::string known;
      for (const char* k : kActuatorKeys) known += (known.empty() ? "" : ", ") + std::string(k);
      throw AtNode(kv.first, "task_defaults.actuator: unknown key '" + io::excerpt(key) +
                                 "' (expected one of: " + known + ")");
    }
    double v = 0;
    try {
      v = kv.second.as<double>();
    } catch (const YAML::Exception&) {
      throw AtNode(kv.second, "task_defaults.actuator." + key + ": expected a number");
    }
    if (!std::isfinite(v) || v < 0 || (key == "effort" && v == 0))
      throw AtNode(kv.second, "task_defaults.actuator." + key + " is " +
                                  io::excerpt(kv.second.Scalar()) + ": must be a finite number " +
                                  (key == "effort" ? "> 0" : ">= 0"));
    if (key == "kp") r.actuator.kp = v;
    if (key == "kd") r.actuator.kd = v;
    if (key == "effort") r.actuator.effort = v;
    if (key == "saturation") r.actuator.saturation = v;
    if (key == "velocity_limit") r.actuator.velocityLimit = v;
    if (key == "armature") r.armature = v;
  }
}

// The robot file, parsed and checked as a YAML tree.
YAML::Node readRobotFile(const fs::path& path) {
  if (!io::exists(path))
    throw std::runtime_error(path.string() + ": robot file not found (expected a robot name from " +
                             configDir() + "/robots or a path to a .yaml)");
  YAML::Node y = config::loadYamlFile(path.string());
  config::checkUniqueKeys(y, path.string());
  return y;
}

// The robot file's top-level node is non-const here and below: a missing key's node then
// exists, with a mark AtNode can read (a const lookup would throw YAML::InvalidNode there).
YAML::Node need(YAML::Node& y, const char* key) {
  if (!y[key]) throw std::runtime_error("missing key '" + std::string(key) + "'");
  return y[key];
}

void checkRobotKeys(const YAML::Node& y) {
  if (!y.IsMap()) throw std::runtime_error("expected a map of robot keys");
  for (const auto& kv : y) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      std::string known;
      for (const char* k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
      throw AtNode(kv.first,
                   "unknown key '" + io::excerpt(key) + "' (expected one of: " + known + ")");
    }
  }
}

// The URDF the robot file names, its warnings and notes into `rep`, its base link checked.
sim::Model loadRobotUrdf(YAML::Node& y, const fs::path& path, RobotReport& rep) {
  const YAML::Node urdfNode = need(y, "urdf");  // first, so a bad URDF is reported before the rest
  if (y["strict"]) rep.strict = y["strict"].as<bool>();
  sim::UrdfOptions uo;
  uo.strict = rep.strict;
  sim::UrdfReport report;
  sim::Model model =
      sim::loadUrdf((path.parent_path() / urdfNode.as<std::string>()).string(), uo, &report);
  rep.warnings = report.warnings;
  rep.notes = report.notes;
  if (y["base_link"] && y["base_link"].as<std::string>() != model.bodies[0].name)
    throw AtNode(y["base_link"], "base_link is '" + y["base_link"].as<std::string>() +
                                     "' but the URDF's floating base is '" + model.bodies[0].name +
                                     "'");
  return model;
}

// `feet` and `leg_contacts` selected in r.model; `orderNode` is where a foot error points
// without a `feet` key.
void readFeet(YAML::Node& y, const YAML::Node& orderNode, Robot& r, RobotReport& rep) {
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
  std::vector<std::string> legLinks;
  if (y["leg_contacts"]) {
    if (!y["leg_contacts"].IsSequence())
      throw AtNode(y["leg_contacts"], "leg_contacts must be a list of link names");
    legLinks = y["leg_contacts"].as<std::vector<std::string>>();
  }
  // The feet alone first, so that an error in them names the `feet` key, not `leg_contacts`.
  try {
    (void)sim::selectFeet(r.model, feet);
  } catch (const std::invalid_argument& e) {
    throw AtNode(y["feet"] ? y["feet"] : orderNode, std::string("feet: ") + e.what());
  }
  try {
    r.model = sim::selectFeet(r.model, feet, legLinks);
  } catch (const std::invalid_argument& e) {
    throw AtNode(y["leg_contacts"], std::string("leg_contacts: ") + e.what());
  }
  if (spheres > r.model.nspheres())
    rep.notes.push_back(r.yamlPath + ": ignored " + std::to_string(spheres - r.model.nspheres()) +
                        " collision spheres on links that are neither feet nor leg contacts");
}

void readDefaultPose(YAML::Node& y, Robot& r) {
  r.defaultJointPos = sim::VecX::Zero(r.model.nj());
  const YAML::Node pose = need(y, "default_joint_pos");
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
}
}  // namespace

std::string robotFilePath(const std::string& nameOrPath) {
  const fs::path path = nameOrPath;
  if (path.extension() == ".yaml") return path.string();
  return (fs::path(configDir()) / "robots" / (nameOrPath + ".yaml")).string();
}

Robot loadRobot(const std::string& nameOrPath) {
  return loadRobot(nameOrPath, nullptr);
}

Robot loadRobot(const std::string& nameOrPath, RobotReport* reportOut) {
  RobotReport local;
  RobotReport& rep = reportOut ? *reportOut : local;
  rep = {};
  const fs::path path = robotFilePath(nameOrPath);
  YAML::Node y = readRobotFile(path);
  Robot r;
  r.name = path.stem().string();
  r.yamlPath = path.string();
  try {
    checkRobotKeys(y);
    r.model = loadRobotUrdf(y, path, rep);

    const YAML::Node orderNode = need(y, "joint_order");
    try {
      r.model = sim::reorderJoints(r.model, orderNode.as<std::vector<std::string>>());
    } catch (const std::invalid_argument& e) {
      throw AtNode(orderNode, std::string("joint_order: ") + e.what());
    }

    readFeet(y, orderNode, r, rep);
    readDefaultPose(y, r);
    r.defaultBaseHeight = need(y, "default_base_height").as<double>();
    r.torqueLimit = need(y, "torque_limit").as<double>();
    readDrive(y["task_defaults"], r);
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
