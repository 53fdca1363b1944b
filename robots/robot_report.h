// Loading a robot with what the loading repaired or left out. (A header of its own so that
// robots/robot.h, included by most of the project, stays as it is.)
//
// The robot YAML's keys (any other is an error naming file and line):
//   urdf                 path of the URDF, relative to the YAML
//   joint_order          the movable joints by name: the policy's order. The model is built in this
//                        order (sim::reorderJoints), so model joint i IS joint_order[i] everywhere
//                        (q, v, actions, observations, exported metadata): no map is needed
//                        downstream, except for MuJoCo's depth-first hinges (mujoco/joint_order.h).
//                        A joint must come after the joint that carries it.
//   feet                 optional: links carrying the foot spheres, in this order; without it, the
//                        collision sphere at the end of each leg (sim::findFeet)
//   leg_contacts         optional: links whose collision spheres also touch the ground (knees,
//                        shanks: sim::Model::legSpheres), in every contact model and in MuJoCo
//   default_joint_pos    joint name -> angle [rad], every joint
//   default_base_height  base-origin height [m] standing level in the default pose
//   torque_limit         N m, a cap on every joint (each joint also keeps its URDF limit)
//   strict               optional (false): a non-physical link inertia is an error, not repaired
//   base_link            optional: the URDF's floating base, checked
//   task_defaults        optional: a partial task (configs/tasks/) holding this robot's numbers:
//                        its drive (actuator: kp, kd, effort, armature, ...; read here into
//                        Robot::actuator), action scale, base-height targets, ... Every task that
//                        runs the robot takes them where it sets nothing itself
//                        (envs::inlineRobotDefaults); the envs layer checks them strictly
#pragma once

#include <string>
#include <vector>

#include "robots/robot.h"

namespace diffloco {

struct RobotReport {
  bool strict = false;  // the YAML's `strict`
  // Warnings (an input repaired) and notes (parts ignored, choices made), each naming its file
  // (and line). loadRobot also prints them to stderr, once per file and process.
  std::vector<std::string> warnings, notes;
};

// loadRobot (robots/robot.h) that also fills `report` (may be null).
Robot loadRobot(const std::string& nameOrPath, RobotReport* report);

}  // namespace diffloco
