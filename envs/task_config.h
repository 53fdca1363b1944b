// A locomotion task as written in configs/tasks/<name>.yaml: robot, time steps, simulator and
// actuator settings, action mapping, commands, the named observation / reward / termination terms
// with their parameters, randomisation and reset distribution. Read, written and flattened by the
// config archive (config/archive.h; the keys and their documentation: task_config.cpp's
// visitTask): an unknown key, a value of the wrong type or out of its range is an error naming
// the file and line (or the --set argument), the key and what was expected.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/range.h"
#include "envs/terms.h"
#include "envs/terrain.h"
#include "sim/options.h"

namespace YAML {
class Node;
}

namespace diffloco::config {
struct Source;
}

namespace diffloco::envs {

using Range = config::Range;

struct TermConfig {
  std::string name;
  const TermDef* def = nullptr;
  double weight = 1;  // rewards
  double scale = 1;   // observations: multiplies the term (after noise)
  double noise = 0;   // observations: half-width of uniform noise, in the term's units
  TermParams params;  // term-specific parameters, defaults filled in
};

struct CommandConfig {
  bool enabled = false;             // without commands the command terms read zeros
  Range linVelX, linVelY, angVelZ;  // uniform ranges [m/s], [m/s], [rad/s]
  double resampleS = 10;            // seconds between resamples (0: only at reset)
  double standingFraction = 0;      // share of resamples that give a zero command
  // legged_gym's heading command: a world-frame heading drawn from `heading` in place of the yaw
  // rate, which every env step becomes headingGain * (heading - yaw), wrapped to [-pi, pi] and
  // clipped to angVelZ's range. The robot walks straight lines across the ground, so an episode
  // can cross its tile (the terrain curriculum's promotion); a random yaw rate walks circles.
  bool headingEnabled = false;
  Range heading;             // [rad], world frame
  double headingGain = 0.5;  // [1/s]
};

struct RandomizationConfig {
  bool friction = false;  // per env, sampled at every reset
  Range frictionRange;
  bool addedMass = false;  // kg added to the base, per env, sampled at every reset
  Range addedMassRange;
  bool pushes = false;  // add U(-push_velocity, push_velocity) to the base x/y velocity
  Range pushIntervalS;  // time to the next push, sampled per env
  double pushVelocity = 0;
  bool observationNoise = false;  // master switch for the per-term noise
  bool motorStrength = false;     // PD gains scaled by U(lo, hi) per env (batch::BatchSim)
  Range motorStrengthRange;
  // The joint targets applied lag the policy's actions by k control steps, k drawn per env from
  // {lo, ..., hi} (a robot's sensing-to-actuation latency).
  bool actionDelay = false;
  Range actionDelaySteps;
};

struct ResetConfig {
  double jointPosNoise = 0;    // U(-x, x) added to the default joint angles [rad]
  double jointVelNoise = 0;    // [rad/s]
  double basePosNoise = 0;     // x/y offset [m]
  double baseRotNoise = 0;     // rotation about a random horizontal axis, U(-x, x) [rad]
  double randomYaw = 0;        // yaw U(-x, x) [rad]
  double baseLinVelNoise = 0;  // [m/s], each component
  double baseAngVelNoise = 0;  // [rad/s], each component
  double footClearance = 0;    // the lowest foot starts this high above the ground [m]
};

struct TaskConfig {
  std::string name;    // file stem
  std::string source;  // file the task came from, for messages
  std::string robot;   // robot name (configs/robots) or path
  double episodeLengthS = 10;
  double envDt = 0.01;
  sim::SimOptions sim;  // time step, contact and actuator (effort <= 0: the robot's limit)
  double armature = 0;  // added to every joint of the robot model [kg m^2]
  // The fitted actuator file (diffloco fit-actuator) the actuator values came from, if any.
  std::string actuatorSource;
  double actionScale = 0.5;
  double actionClip = 1.0;
  CommandConfig commands;
  std::vector<TermConfig> observations, rewards, terminations;
  // The critic's own observations (asymmetric actor-critic), noise-free, privileged terms
  // allowed; empty: the critic reads `observations`.
  std::vector<TermConfig> criticObservations;
  RandomizationConfig randomization;
  ResetConfig reset;
  TerrainConfig terrain;  // disabled: the plane z = 0

  int decimation() const;       // sim steps per env step
  int maxEpisodeSteps() const;  // env steps per episode
  // Nominal friction, mass and drive, no action delay, no observation noise, no pushes, no
  // command resampling and no heading command (whose yaw rate follows the base, which the
  // gradient does not differentiate: commands are inputs): the env becomes a deterministic
  // function of its actions after reset whose gradient is the one autograd computes.
  void freezeRandomization();
};

// Loads configs/tasks/<name>.yaml, or a path to a task YAML.
TaskConfig loadTaskConfig(const std::string& nameOrPath);
// `actuator: {file: F}`: replaces `file` by the values of the fitted actuator file F (keys kp,
// kd, effort, saturation, velocity_limit, armature; its `fit:` report is skipped) and a `source:`
// key holding F's absolute path. The file's values replace the section's own (a task's kp: 85
// with --set task.actuator.file=F trains with F's kp); keys F lacks stay. A relative F is
// taken from the folder of `source` when that is a file, else from the working directory.
// Training configs call it before writing the resolved config, so that a run's config.yaml holds
// the values the policy was trained with. Throws naming F and the line on a bad file.
void inlineActuatorFile(YAML::Node& task, const std::string& source);
// Fills in what a task leaves out from its robot's `task_defaults` (configs/robots/<robot>.yaml,
// robots/robot_report.h): the robot's drive, action scale, base-height targets, ... The task's
// own keys win (and so does a --set of them); in observations, rewards and terminations the
// defaults give parameters of the terms the task uses and never add a term. The defaults are
// checked as strictly as a task, errors naming the robot file and line. Callers apply it before
// inlineActuatorFile and before writing a resolved config, so that a run's config.yaml holds
// every value; a resolved task has nothing left to fill. No-op for a robot without defaults (or
// one that does not exist: the env's loadRobot reports that).
void inlineRobotDefaults(YAML::Node& task, const std::string& source);
// Parses a task from a YAML node; `source` names it in error messages.
TaskConfig parseTaskConfig(const YAML::Node& node, const std::string& source);
// The same with overrides applied to `node` beforehand: a message about an overridden key names
// the override, not the file. `keyPrefix`: the task's own key path where it sits in a larger
// config ("task" in a training config), which the overrides' paths and the messages start with.
TaskConfig parseTaskConfig(const YAML::Node& node, const config::Source& source,
                           const std::string& keyPrefix = "");
// The task as YAML, every key with its documentation as a comment; parseTaskConfig reads it back
// to the same task. What a run's config.yaml, checkpoints and exported policies carry.
std::string toYaml(const TaskConfig& task);
// (key path, value) of every setting, in order: for comparing tasks.
std::vector<std::pair<std::string, std::string>> flatten(const TaskConfig& task);

}  // namespace diffloco::envs
