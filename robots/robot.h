// A robot as the project describes it: its URDF plus the YAML side file in configs/robots/ (joint
// order, feet, default pose, stance height, torque limit, its drive and what it changes in the
// tasks). No torch here: the simulator demo, the benchmarks, the gradient checks, system
// identification and the environments all load robots through this.
#pragma once

#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/options.h"

namespace diffloco {

struct Robot {
  std::string name;  // file stem, e.g. "anymal"
  std::string yamlPath;
  sim::Model model;
  sim::VecX defaultJointPos;  // in model joint order
  double defaultBaseHeight = 0;
  double torqueLimit = 0;
  // The robot's drive: `task_defaults.actuator` of its YAML (PD gains, rotor inertia; effort is
  // the torque_limit unless given). Tasks take it unless they set their own (envs/task_config.h);
  // the commands without a task (sim, bench, gradcheck, sysid) use it as it is. A robot file
  // without one gets sim::ActuatorOptions' defaults and no armature.
  sim::ActuatorOptions actuator;
  double armature = 0;  // [kg m^2], added to every joint by the tasks
  // The robot's simulator time step: `task_defaults.sim.dt` (5 ms without one). The tasks set
  // their own; sim, gradcheck and sysid start from it.
  double dt = 0.005;

  // Standing configuration: base at the default height, level, default joint angles.
  sim::VecX standingConfiguration() const;
  // The robot's own simulator settings, its time step and drive, with the contact model given:
  // what the commands without a task (sim, bench, gradcheck, sysid) start from.
  sim::SimOptions simOptions(sim::ContactModel contact = sim::ContactModel::Smoothed) const;
  // Puts the robot's armature on every joint of `m` (its own model or an edited copy of it).
  void applyArmature(sim::Model& m) const;
};

// Loads configs/robots/<name>.yaml, or a path to a robot YAML. Throws std::runtime_error naming the
// file and key on bad input.
Robot loadRobot(const std::string& nameOrPath);

// The YAML file loadRobot reads for a robot name (configs/robots/<name>.yaml) or a path (as given).
std::string robotFilePath(const std::string& nameOrPath);

// Folder holding configs/ (from DIFFLOCO_CONFIG_DIR, else the source tree this binary was built
// from).
std::string configDir();

}  // namespace diffloco
