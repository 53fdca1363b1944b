// What `diffloco eval` and `diffloco play` share: the options that choose a policy, an engine and
// the simulation settings, opening any policy file or run folder, and running the evaluation in
// our simulator or MuJoCo, optionally recording the rollout to watch (viz/).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "train/evaluation.h"
#include "viz/rollout.h"

namespace diffloco::cli {

struct EvalArgs {
  std::string policy;
  std::string engine = "diffloco";
  std::string contact;
  double dt = 0;
  int iterations = 0;
  std::string robot;              // mujoco: URDF or robot name (default: the policy's robot)
  double episodeLengthS = 0;      // mujoco: 0 = the task's
  double resetNoise = 0.1;        // mujoco: U(-x, x) on the default joint angles at reset [rad]
  double resetScale = 1;          // diffloco: scale of the task's initial-state noise
  // mujoco: empty or -1, the file's recommendation (its evaluation section), else MuJoCo's default
  std::string integrator, cone, solver;
  int noslip = -1;
  std::string saveMjcf;           // mujoco: write the compiled MJCF here
  // mujoco: the conditions of a robustness evaluation (export/mujoco_eval.h); nominal defaults
  double friction = 0;  // 0: the exported friction
  int actionDelay = 0;
  double motorStrength = 1, addedMass = 0, pushVelocity = 0;
  std::vector<double> pushIntervalS;  // empty: 10-15 s
  bool observationNoise = false;
  std::vector<std::string> sets;  // diffloco: task overrides, key.path=value
  std::string task;               // diffloco: evaluate on this task instead of the trained one
  double durationS = 0;           // both engines: episode length override (play's --duration)
  std::vector<double> command;    // both engines: one command (v_x, v_y, w_z) for every episode
  train::EvalOptions options;
};

// Registers the policy argument and the options shared by eval and play (not --envs, --episodes:
// each command means something of its own by them).
void addEvalOptions(CLI::App* cmd, EvalArgs& a);

// `diffloco eval`'s --episodes and --envs (also the Python package's evaluate).
void addEvalCountOptions(CLI::App* cmd, EvalArgs& a);

// Throws if an option of the other engine was given: a mistake to report, not a setting to
// ignore.
void rejectOtherEngineOptions(const CLI::App* cmd, const EvalArgs& a);

// Where an evaluation records its rollout: the first `envs` envs (our simulator) or episodes
// (MuJoCo), each up to the end of its first episode. envs = 0: no recording.
struct Recording {
  int envs = 0;
  std::unique_ptr<viz::Rollout> rollout;
};

// Opens the policy and runs the evaluation `a` describes in its engine.
train::EvalResult runEvaluation(const EvalArgs& a, Recording* recording = nullptr);

}  // namespace diffloco::cli
