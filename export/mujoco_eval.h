// Sim-to-sim evaluation of an exported policy in MuJoCo (`diffloco eval --engine mujoco`): the
// robot's parsed URDF compiled by MuJoCo (mujoco/mujoco_model.h), the policy at its control rate
// through deploy::Controller (observation built from MuJoCo's state by the metadata's term names),
// its PD actuator law applied at MuJoCo's step as joint torques (qfrc_applied), the task's
// terminations (base height, base tilt) from the metadata. Only the exported file and the robot
// model are used: no environment or training code.
//
// Per episode: the robot starts in the default pose at the default base height above the ground
// (feet on it; at a spawn point of the terrain, if any) with optional joint noise; a command is drawn uniformly from the metadata's ranges
// (zeros when the task has none) and held; the episode ends at the time limit or at a fall.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::mj {

struct MujocoEvalOptions {
  int episodes = 10;
  double episodeLengthS = 0;  // [s]; 0: the task's (metadata timing.episode_length_s)
  double timestep = 0;        // MuJoCo step [s]; 0: the metadata's sim_dt. Must divide control_dt.
  double friction = 0;        // 0: the metadata's friction
  double jointPosNoise = 0;   // U(-x, x) added to the default joint angles at reset [rad]
  std::uint64_t seed = 0;
  // Conditions a robot meets (the robustness evaluation; the defaults are nominal), each as the
  // task's randomisation of the same name applies it in training:
  int actionDelaySteps = 0;  // control periods from a decision to its targets at the drives
  double motorStrength = 1;  // kp and kd multiplied by this; torque limits unchanged
  double addedBaseMass = 0;  // [kg] on the base, its inertia scaled with its mass
  // The policy senses its state with the exported per-term noise U(-noise, noise) (base and
  // joint velocities, joint angles, base height, height scan; not projected gravity, which the
  // state holds as an orientation).
  bool observationNoise = false;
  double pushVelocity = 0;                      // [m/s] U(-x, x) added to the base's world v_x, v_y
  std::array<double, 2> pushIntervalS{10, 15};  // a push every U(a, b) seconds
  // Optional: called at every policy decision of every episode with the state it is taken in (q,
  // v in our layout, sim/model.h, which MuJoCo's free joint shares) and the command. Records
  // rollouts to watch.
  std::function<void(int episode, int decision, const sim::VecX& q, const sim::VecX& v,
                     const std::array<double, 3>& command)>
      onDecision;
  // Engine options (mujoco/mujoco_model.h MjcfOptions; MuJoCo's defaults).
  std::string integrator = "Euler", cone = "pyramidal", solver = "Newton";
  int iterations = 100, noslipIterations = 0;
  // Non-empty: the MJCF that MuJoCo compiled is written there (to compare the model with another
  // engine's, e.g. the reference deployer's from the embedded URDF).
  std::string mjcfPath;
  // Terrain: null, the plane z = 0; else this height field as an hfield, episode e spawning at
  // spawn[e % size] (x, y) with the default pose standing on the ground there. Heights the policy
  // and the terminations read (base height, height scan) are measured by ray casts down onto the
  // hfield, as a robot measures them, not from our interpolant.
  std::shared_ptr<const sim::HeightField> terrain;
  std::vector<std::array<double, 2>> spawn;
  // > 0: an episode has climbed when its base got this far from its spawn point along x or y
  // (the largest of the two): past every step of a tile when it is half the tile's side.
  double climbDistance = 0;
  // Every episode holds this command (v_x, v_y, w_z) instead of a draw from the metadata's ranges.
  std::optional<std::array<double, 3>> command;
};

// Per-episode results, one entry per episode (no aggregation: the caller's statistics).
struct MujocoEpisodes {
  std::vector<double> lengthS;      // episode length [s]
  std::vector<int> fell;            // 1: ended by a termination (height, tilt, non-finite state)
  std::vector<double> meanVx;       // mean world-x base velocity [m/s]
  std::vector<double> meanSpeed;    // mean horizontal velocity along the base heading [m/s]
  std::vector<double> linVelErr2;   // mean over decisions of |cmd_xy - v_xy (base axes)|^2
  std::vector<double> yawRateErr2;  // mean over decisions of (cmd_wz - w_z)^2
  std::vector<double> limitExcess;  // largest angle of any joint beyond its URDF limits [rad]
  std::vector<double> command[3];   // the command of each episode (v_x, v_y, w_z)
  std::vector<int> climbed;         // 1: the base got climbDistance from its spawn point
  std::vector<int> climbedFace;     // 1: ... first through a face (train::EpisodeStats)
  double timestep = 0, controlDt = 0, episodeLengthS = 0;
  std::string engineOptions;  // as the compiled model runs: mj::engineOptions
};

// policyPath: a file written by `diffloco export`; model: the robot as parsed from its URDF (the
// metadata's joints must be among its joints; its armature is replaced by the metadata's).
MujocoEpisodes evaluateInMujoco(const std::string& policyPath, const sim::Model& model,
                                const MujocoEvalOptions& options);

}  // namespace diffloco::mj
