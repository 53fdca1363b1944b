#include "robots/robot.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

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

Robot loadRobot(const std::string& nameOrPath) {
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
    if (!y[key]) throw std::runtime_error(path.string() + ": missing key '" + key + "'");
    return y[key];
  };
  Robot r;
  r.name = path.stem().string();
  r.yamlPath = path.string();
  try {
    r.model = sim::loadUrdf((path.parent_path() / need("urdf").as<std::string>()).string());
    const auto order = need("joint_order").as<std::vector<std::string>>();
    if (static_cast<int>(order.size()) != r.model.nj())
      throw std::runtime_error("joint_order has " + std::to_string(order.size()) +
                               " joints, the URDF " + std::to_string(r.model.nj()));
    for (int i = 0; i < r.model.nj(); ++i)
      if (order[i] != r.model.joints[i].name)
        throw std::runtime_error("joint_order[" + std::to_string(i) + "] is '" + order[i] +
                                 "' but the URDF's tree order has '" + r.model.joints[i].name + "'");
    for (const auto& f : need("feet").as<std::vector<std::string>>())
      if (r.model.footIndex(f) < 0)
        throw std::runtime_error("feet: link '" + f + "' carries no sphere collision in the URDF");
    r.defaultJointPos = sim::VecX::Zero(r.model.nj());
    const YAML::Node pose = need("default_joint_pos");
    for (int i = 0; i < r.model.nj(); ++i) {
      const auto& n = r.model.joints[i].name;
      if (!pose[n]) throw std::runtime_error("default_joint_pos: missing joint '" + n + "'");
      r.defaultJointPos[i] = pose[n].as<double>();
    }
    r.defaultBaseHeight = need("default_base_height").as<double>();
    r.torqueLimit = need("torque_limit").as<double>();
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.what());
  } catch (const sim::ModelError& e) {
    // The URDF's own error names its file and line; the robot file that points at it comes first.
    throw sim::ModelError(path.string() + ": urdf: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  return r;
}

}  // namespace diffloco
