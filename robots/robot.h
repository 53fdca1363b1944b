// A robot as the project describes it: its URDF plus the YAML side file in configs/robots/ (joint
// order, feet, default pose, stance height, torque limit). No torch here: the simulator demo, the
// benchmarks and the environments all load robots through this.
#pragma once

#include <string>
#include <vector>

#include "sim/model.h"

namespace diffloco {

struct Robot {
  std::string name;  // file stem, e.g. "anymal"
  std::string yamlPath;
  sim::Model model;
  sim::VecX defaultJointPos;  // in model joint order
  double defaultBaseHeight = 0;
  double torqueLimit = 0;

  // Standing configuration: base at the default height, level, default joint angles.
  sim::VecX standingConfiguration() const;
};

// Loads configs/robots/<name>.yaml, or a path to a robot YAML. Throws std::runtime_error naming the
// file and key on bad input.
Robot loadRobot(const std::string& nameOrPath);

// Folder holding configs/ (from DIFFLOCO_CONFIG_DIR, else the source tree this binary was built
// from).
std::string configDir();

}  // namespace diffloco
