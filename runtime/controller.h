// A minimal robot-side controller for an exported policy (export/export.h). Links LibTorch's
// TorchScript runtime and yaml-cpp only: no simulator, environment or training code.
//
//   Controller c("policy.pt", {.jointNames = robot_order});
//   c.start();                               // passive -> stand up
//   every control period (metadata().controlDt):
//     ControlOutput u = c.tick(state);       // joint targets, gains and torques, robot order
//
// Joints are matched by name: the robot's order may differ from the policy's. The observation is
// built from RobotState by the metadata's term names (the terms of envs/terms.h), in the
// policy's joint order, each term multiplied by its scale.
//
// State machine: Passive (no torque) --start()--> StandUp (targets interpolated from the pose at
// start() to the default pose over standUpDuration s, the exported PD law) --> Policy (the
// exported policy at the control rate) ; any limit violated in StandUp or Policy, or stop() -->
// Damping (tau = -dampingKd qd, within the effort limits; left only by reset() -> Passive).
// Limits checked every tick: non-finite state, joint positions outside the URDF limits widened by
// jointLimitMargin, non-finite or over-limit torques, base tilt above maxTilt.
#pragma once

#include <torch/script.h>

#include <array>
#include <string>
#include <vector>

#include "runtime/policy_metadata.h"

namespace diffloco::deploy {

struct RobotState {
  std::vector<double> jointPos, jointVel;      // robot joint order [rad], [rad/s]
  std::array<double, 4> baseQuat{1, 0, 0, 0};  // (w, x, y, z), base -> world
  std::array<double, 3> baseLinVel{0, 0, 0};   // base axes [m/s]
  std::array<double, 3> baseAngVel{0, 0, 0};   // base axes [rad/s]
  // The base origin above the ground under it [m] (only the base_height term reads it).
  double baseHeight = 0;
  // The base origin above the ground at each point of the height scan, z - h(p_k) [m], in the
  // order of heightScanPoints (only the height_scan term reads it: it subtracts the term's offset
  // and clips).
  std::vector<double> heightScan;
  std::array<double, 3> command{0, 0, 0};      // (v_x, v_y, w_z) base frame
};

struct ControllerConfig {
  std::vector<std::string> jointNames;  // the robot's joint order
  double standUpDuration = 2.0;         // [s]
  double dampingKd = 5.0;               // [N m s/rad]
  double jointLimitMargin = 0.1;        // [rad] beyond the URDF limits
  double maxTilt = 0;                   // [rad]; 0: the task's tilt termination, else 1.0
};

// The world (x, y) of the height_scan term's points for a base at (x, y) with heading `yaw`
// (atan2(R_10, R_00) of its orientation), in the order the observation takes them (k = i * ny +
// j: x along the heading outer, y to the left inner; runtime/height_scan.h's grid, as the training
// term in envs/terms.cpp takes it).
std::vector<std::array<double, 2>> heightScanPoints(const ObservationTerm& term, double x,
                                                    double y, double yaw);

enum class Mode { Passive, StandUp, Policy, Damping };
const char* toString(Mode m);

struct ControlOutput {
  Mode mode = Mode::Passive;
  std::vector<double> jointTarget;  // robot order [rad]
  std::vector<double> kp, kd;       // gains for a drive that runs its own PD at a higher rate
  std::vector<double> torque;       // robot order [N m]: the PD law at this state
  std::string fault;                // why the controller dropped to damping
};

class Controller {
 public:
  Controller(const std::string& policyPath, ControllerConfig config);

  const PolicyMetadata& metadata() const { return meta_; }
  Mode mode() const { return mode_; }
  const std::string& fault() const { return fault_; }

  void start();  // Passive -> StandUp (on the next tick, from the measured pose)
  void stop();   // -> Damping
  void reset();  // Damping -> Passive

  ControlOutput tick(const RobotState& s);

  // Building blocks (public for tests and custom loops).
  std::vector<float> observation(const RobotState& s) const;        // policy layout
  std::vector<double> policyAction(const std::vector<float>& obs);  // forward(), policy order
  // The exported actuator law for targets and state in the robot's joint order. gainScale
  // multiplies kp and kd (a weaker or stronger drive, the task's motor_strength; the torque
  // limits stay), 1 on a robot.
  std::vector<double> actuatorTorque(const std::vector<double>& target,
                                     const std::vector<double>& q, const std::vector<double>& qd,
                                     double gainScale = 1.0) const;
  // Policy mode without the stand-up (a simulated robot that starts in the default pose):
  // zero last action, policy time 0. Then policyStep() = one decision: observation, forward,
  // clip; returns the joint targets (robot order) and advances the last action and the time.
  // tick() in Policy mode is checkLimits + policyStep + the actuator law.
  void startPolicy();
  std::vector<double> policyStep(const RobotState& s);
  // policy joint i is robot joint robotIndex()[i]
  const std::vector<int>& robotIndex() const { return robotIndex_; }

 private:
  std::string checkLimits(const RobotState& s) const;
  ControlOutput damping(const RobotState& s, const std::string& fault);
  void clearPastActions();

  torch::jit::Module module_;
  PolicyMetadata meta_;
  ControllerConfig cfg_;
  std::vector<int> robotIndex_;
  Mode mode_ = Mode::Passive;
  bool startRequested_ = false;
  std::string fault_;
  std::vector<double> standStart_;  // robot order
  long ticks_ = 0;                  // ticks in the current mode
  // The last decisions' clipped actions, newest first, policy order (last_action is the first).
  std::vector<std::vector<double>> pastActions_;
};

}  // namespace diffloco::deploy
