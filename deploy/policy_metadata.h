// The metadata of an exported policy (deploy/export.h): everything a robot-side program needs to
// run the policy without diffloco's training code. It travels inside the TorchScript file as the
// JSON string attribute `metadata_json` and beside it as YAML (`<stem>.yaml`). No torch here:
// yaml-cpp parses both (JSON is YAML).
//
// Conventions (also in the README, "Exported policy"):
//   forward(obs) -> a            obs: [B, num_obs] float32 (terms below, each already multiplied
//                                by its scale); a: [B, nj] float32, the action the env receives
//                                before its clip and scale (tanh already applied when squash is
//                                tanh).
//   joint_targets(a) -> q*       q* = default_joint_pos + action_scale * clip(a, -clip, clip),
//                                joint order = joint_names (the policy's action order).
//   actuator_torque(q*, q, qd)   the PD law of sim/actuator.h with the torque limit and the
//                                speed-torque line (any float dtype; [..., nj]).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace diffloco::deploy {

struct ObservationTerm {
  std::string name;  // envs/terms.h observation term
  int size = 0;
  double scale = 1;  // the term enters the observation multiplied by this
  std::map<std::string, std::vector<double>> params;  // term parameters (gait_phase: frequency)
};

struct PolicyMetadata {
  std::string format = "diffloco-exported-policy-1";
  std::string difflocoVersion, gitCommit;
  std::string task, robot, algorithm, source;  // source: run folder or policy file exported
  // Joints in the policy's action (and observation) order.
  std::vector<std::string> jointNames;
  std::vector<double> defaultJointPos, jointLower, jointUpper;
  double defaultBaseHeight = 0;
  // Action: q* = action_offset + action_scale * clip(a, -action_clip, action_clip),
  // action_offset = default_joint_pos.
  double actionScale = 0.5, actionClip = 1;
  std::string squash = "none";  // already inside forward(): documentation only
  // Observation terms in order; num_obs = sum of sizes.
  std::vector<ObservationTerm> observations;
  int numObs = 0;
  double controlDt = 0.01, simDt = 0.01;  // policy period and simulator step [s]
  int decimation = 1;
  double episodeLengthS = 0;  // the task's episode length [s] (evaluations)
  // Actuator (sim/actuator.h), the same for every joint except the effort limit.
  double kp = 0, kd = 0, saturation = 1e10, velocityLimit = 1e10, armature = 0;
  std::vector<double> effort;  // per joint: min(task effort, URDF effort) [N m]
  std::string actuatorSource;  // fitted actuator file the task took its values from, if any
  // Commands (base frame): uniform ranges trained with.
  bool commandsEnabled = false;
  std::vector<double> linVelX{0, 0}, linVelY{0, 0}, angVelZ{0, 0};
  double commandResampleS = 0;
  // Simulation trained with.
  std::string contactModel;
  double kappa = 0, friction = 0;
  int solverIterations = 0;
  // Terminations trained with (0: absent): the controller's safety limits default to them.
  double terminationTilt = 0, terminationHeight = 0;
  // The whole task as trained (YAML text of configs/tasks/*.yaml with every override applied):
  // evaluations rebuild rewards and terminations from it with diffloco's own task parser.
  std::string taskYaml;

  int numJoints() const { return static_cast<int>(jointNames.size()); }
  int jointIndex(const std::string& name) const;  // -1 if absent
};

std::string toJson(const PolicyMetadata& m);  // compact-ish JSON, numbers round-trip exactly
std::string toYaml(const PolicyMetadata& m);  // the same content, block YAML with comments
// Parses JSON or YAML text; `source` names it in errors (missing or mistyped keys, sizes that
// disagree with the joint count).
PolicyMetadata parsePolicyMetadata(const std::string& text, const std::string& source);

}  // namespace diffloco::deploy
