// The metadata of an exported policy (export/export.h): the contract between the training and a
// robot or another simulator, complete enough to rebuild the training setting from the file alone
// (robot URDF, gravity, observation definitions, reset distribution, limits, contact model,
// actuator law, provenance). It travels inside the TorchScript file as the JSON string attribute
// `metadata_json`, inside the ONNX file as metadata_props, and beside them as YAML (`<stem>.yaml`).
// No torch here: yaml-cpp parses both (JSON is YAML).
//
// Conventions (also in docs/deploy.md):
//   forward(obs) -> a            obs: [B, num_obs] float32 (terms below, each already multiplied
//                                by its scale); a: [B, nj] float32, the action the env receives
//                                before its clip and scale (tanh already applied when squash is
//                                tanh).
//   joint_targets(a) -> q*       q* = default_joint_pos + action_scale * clip(a, -clip, clip),
//                                joint order = joint_names (the policy's action order).
//   actuator_torque(q*, q, qd)   the PD law of sim/actuator.h with the torque limit and the
//                                speed-torque line (any float dtype; [..., nj]), recomputed at
//                                every simulator step with q* held over the control period.
//   A limit that does not exist is null (std::nullopt), never a large number or 0.
//
// Format versions: "diffloco-exported-policy-2" is written. "diffloco-exported-policy-1" (the
// files shipped before the contract, e.g. pretrained/) is still read: its missing sections keep
// their defaults (empty URDF, no definitions, unknown provenance), its 1e10 "no limit" and 0 "no
// termination" become null. `diffloco export OLD.pt -o NEW.pt` upgrades such a file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diffloco::deploy {

inline constexpr const char* kMetadataFormat = "diffloco-exported-policy-2";
inline constexpr const char* kMetadataFormatV1 = "diffloco-exported-policy-1";

// What an observation term means (envs::TermDefinition, copied from the term registry at export).
struct ObservationDefinition {
  std::string formula, frame, units, conventions;
};

struct ObservationTerm {
  std::string name;  // envs/terms.h observation term
  int size = 0;
  double scale = 1;  // the term enters the observation multiplied by this
  double noise = 0;  // training only: U(-noise, noise) added before the scale, when enabled
  std::map<std::string, std::vector<double>> params;  // term parameters (gait_phase: frequency)
  ObservationDefinition definition;
};

// The final factors of a training config's `curriculum:` (train/curriculum.h): the trained
// envelope is the task's ranges x these.
struct CurriculumFactors {
  double commands = 1, resetNoise = 1, episodeLength = 1;
  double commandResample = 1;  // x commands.resample_s
};

// How diffloco evaluates the policy, so that an outside evaluator can reproduce its numbers: the
// MuJoCo options recommended for it (a terrain policy needs the elliptic cone with noslip:
// docs/terrain.md), how friction combines, and what the tracking errors are.
struct EvaluationProtocol {
  std::string mujocoIntegrator = "Euler", mujocoCone = "pyramidal", mujocoSolver = "Newton";
  int mujocoIterations = 100, mujocoNoslipIterations = 0;
  std::string frictionCombination, commands, trackingRms, resets, terrain;
};

struct PolicyMetadata {
  std::string format = kMetadataFormat;
  std::string task;
  // Robot: name, the URDF text it was trained with (its sha256 over the exact bytes), the base
  // link (the free-floating root), the links carrying the foot spheres, the links whose every
  // collision sphere touches the ground too (knees, shanks; spheres and feet are the only
  // colliding geometry: against the ground, no self-collision) and gravity.
  std::string robot, baseLink, urdf, urdfSha256;
  std::vector<std::string> feet;
  std::vector<double> footRadius;        // per foot [m]
  std::vector<std::string> legContacts;  // empty: the feet alone touch the ground
  std::vector<double> gravity{0, 0, -9.81};
  // Joints in the policy's action (and observation) order. Limits: the URDF's, not enforced by
  // the training simulator (the controller's safety check uses them).
  std::vector<std::string> jointNames;
  std::vector<double> defaultJointPos, jointLower, jointUpper;
  double defaultBaseHeight = 0;
  // Action: q* = action_offset + action_scale * clip(a, -action_clip, action_clip),
  // action_offset = default_joint_pos.
  double actionScale = 0.5, actionClip = 1;
  std::string squash = "none";  // already inside forward(): documentation only
  // tanh's bound b (b tanh(a / b)), one for every action or one per action; inside forward() too
  std::vector<double> squashBound{1};
  // Observation terms in order; num_obs = sum of sizes.
  std::vector<ObservationTerm> observations;
  int numObs = 0;
  bool observationNoise = false;          // training: the terms' noise was on
  double controlDt = 0.01, simDt = 0.01;  // policy period and simulator step [s]
  int decimation = 1;
  double episodeLengthS = 0;  // the task's episode length [s] (evaluations)
  // Actuator (sim/actuator.h), the same for every joint except the effort limit. saturation and
  // velocity_limit null: infinite (both null: no speed-torque line, a plain clip at the effort).
  double kp = 0, kd = 0, armature = 0;
  std::optional<double> saturation, velocityLimit;
  std::vector<double> effort;  // per joint: min(task effort, URDF effort) [N m]
  std::string actuatorSource;  // fitted actuator file the task took its values from, if any
  // Commands (base frame): uniform ranges trained with.
  bool commandsEnabled = false;
  std::vector<double> linVelX{0, 0}, linVelY{0, 0}, angVelZ{0, 0};
  double commandResampleS = 0;
  // Simulation trained with: contact model and its solver.
  std::string contactModel;
  double kappa = 0, friction = 0;
  int solverIterations = 0;
  std::optional<double> contactCutoff;        // smoothed model: feet farther than this ignored [m]
  double softKp = 0, softKd = 0, softKf = 0;  // soft model's penalty contact
  int softSubsteps = 0;
  std::string softIntegrator;  // fixed | adaptive (soft model)
  // Reset distribution (envs/task_config.h ResetConfig): default pose and standing height, then
  // U(-x, x) noise on each, then the base lowered or raised until the lowest foot sphere is
  // reset_foot_clearance above the ground.
  double resetJointPosNoise = 0, resetJointVelNoise = 0, resetBasePosNoise = 0,
         resetBaseRotNoise = 0, resetRandomYaw = 0, resetBaseLinVelNoise = 0,
         resetBaseAngVelNoise = 0, resetFootClearance = 0;
  // Domain randomisation trained with (null: off).
  std::optional<std::vector<double>> frictionRange, addedMassRange, pushIntervalS;
  std::optional<double> pushVelocity;
  std::optional<std::vector<double>> motorStrengthRange;  // kp, kd x U(lo, hi)
  std::optional<std::vector<double>> actionDelaySteps;    // control periods, integer U{lo..hi}
  // Absent in files written before it (then the MuJoCo defaults apply).
  std::optional<EvaluationProtocol> evaluation;
  // Terminations trained with (null: none); the controller's default safety limits.
  std::optional<double> terminationTilt, terminationHeight;
  // The whole task as trained (YAML text of configs/tasks/*.yaml with every override applied):
  // evaluations rebuild rewards and terminations from it with diffloco's own task parser.
  std::string taskYaml;
  // Provenance: null / empty where unknown (files upgraded from format 1).
  std::string difflocoVersion, gitCommit, algorithm, source, configSha256;
  std::optional<std::int64_t> seed;
  std::optional<int> iterations;
  std::vector<std::string> warmStart;  // init_from chain, newest first
  std::optional<CurriculumFactors> curriculum;

  int numJoints() const { return static_cast<int>(jointNames.size()); }
  int jointIndex(const std::string& name) const;  // -1 if absent
};

// Written, read and compared with the config archive (config/archive.h): one visit lists every
// section and key of the format.
std::string toJson(const PolicyMetadata& m);  // compact-ish JSON, numbers round-trip exactly
std::string toYaml(const PolicyMetadata& m);  // the same content, block YAML whose values are JSON
// Parses JSON or YAML text of either format; `source` names it in errors (missing or mistyped
// keys with the expected type, sizes that disagree with the joint count).
PolicyMetadata parsePolicyMetadata(const std::string& text, const std::string& source);
// The keys (section.key) whose values differ: empty when a == b (round-trip tests).
std::vector<std::string> metadataDifferences(const PolicyMetadata& a, const PolicyMetadata& b);

}  // namespace diffloco::deploy
