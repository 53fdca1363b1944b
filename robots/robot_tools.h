// Tools on a robot description, torch-free, behind `diffloco robot init` and `diffloco robot
// check`: the kinematic standing height, a standing test in hard contact, a proposed robot YAML for
// a URDF and the printed summary of a robot.
#pragma once

#include <string>
#include <vector>

#include "robots/robot_report.h"

namespace diffloco {

// Base-origin height with the base level and the joints at `jointPos` (model order) such that the
// lowest point of any foot sphere is at z = 0.
double standingHeight(const sim::Model& model, const sim::VecX& jointPos);

struct StandOptions {
  // PD gains and rotor inertia; <= 0: from the robot's mass (standGains).
  double kp = 0, kd = 0, armature = 0;
  double dt = 0.005;  // hard contact, like `diffloco eval --contact hard`
  double seconds = 2.0;
  double drop = 0.02;      // start this far above the standing height [m]
  double torqueLimit = 0;  // <= 0: the robot's torque_limit
};

// Gains that hold a robot of `mass` kg up in a test (not the training gains): kp = 8 m N m/rad
// (the weight on a leg grows with m; at 13 kg this sags ~0.05 rad, where the Unitree-style kp 20
// lets a 13 kg robot tip over), kd = kp / 20, armature max(0.01, 0.002 m) kg m^2 so that the
// explicit PD law stays stable at dt 5 ms (kd dt / armature = 0.25).
StandOptions standGains(double mass, StandOptions o = {});

struct StandResult {
  bool finite = true;
  double finalHeight = 0;     // base height at the end [m]
  double minHeight = 0;       // lowest base height on the way [m]
  double maxTiltDeg = 0;      // largest angle between the base z axis and the vertical
  double finalSpeed = 0;      // |base linear velocity| at the end [m/s]
  double weightFraction = 0;  // total normal force at the end / weight
  double maxJointError = 0;   // largest |q - default| at the end [rad]
  bool stood = false;         // finite, tilt < 10 deg, height > 60 % of the standing one, at rest
  StandOptions options;       // the options used
};

// Drops the robot from its standing configuration + drop and holds the default pose with PD, on
// the stages (sim/stage_step.h): std::invalid_argument for a robot that no size class holds.
StandResult standingTest(const Robot& robot, StandOptions options = {});

// A proposed robot YAML for `urdfPath` (written next to `yamlPath`, which sets the relative URDF
// path): joint order (the URDF's tree order), feet (the spheres at the leg ends), a default pose (a
// bent-knee stance within the joint limits, chosen by a settle simulation), its standing height,
// the torque limit (the largest URDF effort among the joints: a cap, each joint keeping its own
// limit below it), and the drive the settle
// simulation stood it with: `gains`' kp and kd where given (> 0), else standGains'. `log` receives
// what was tried.
// A URDF whose legs end in meshes rather than spheres gets a sphere per foot fitted to its mesh
// (robots/mesh_feet.h): the URDF with those spheres goes to `sphereFeetUrdf` (to be written at
// sphereFeetUrdfPath(yamlPath), which the YAML names); without `sphereFeetUrdf` such a file is an
// error. The settle simulation is standingTest's, and throws as it does.
std::string proposeRobotYaml(const std::string& urdfPath, const std::string& yamlPath,
                             std::vector<std::string>* log = nullptr, StandOptions gains = {},
                             std::string* sphereFeetUrdf = nullptr);

// Where robot init writes the URDF with fitted foot spheres: beside the YAML, its stem +
// "_sphere_feet.urdf".
std::string sphereFeetUrdfPath(const std::string& yamlPath);

// The summary `diffloco robot check` prints: mass, bodies and inertia, joints with limits, feet,
// standing height, the standing test, every warning and note.
std::string robotReport(const Robot& robot, const RobotReport& report, const StandResult& stand);

}  // namespace diffloco
