// Policy evaluation in our simulator (`diffloco eval --engine diffloco`, Table 1's evaluations):
// a deterministic policy drives a batch of envs of a task in sampling mode until a number of
// complete episodes is collected; per-episode return, length, speed and command-tracking errors.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/task_config.h"

namespace diffloco::train {

// Observations [N, numObs] (float) -> actions [N, numActions], as the env takes them.
using PolicyFn = std::function<torch::Tensor(const torch::Tensor& obs)>;

struct EvalOptions {
  int numEnvs = 100;  // at most `episodes` are run
  // Episodes to collect. Each env contributes a number fixed in advance (episodes / numEnvs, the
  // first episodes % numEnvs envs one more), so that short (failed) episodes are not
  // over-represented when some envs fall and restart early.
  int episodes = 100;
  std::uint64_t seed = 0;
  int threads = 2;
  // Terrain (a task with a `terrain:` section): every env on tiles of this sub-terrain type at
  // level `terrainLevel` (-1: the hardest); "none": the plane z = 0 instead of the terrain; empty:
  // the task's own terrain and curriculum.
  std::string terrainType;
  int terrainLevel = -1;
  // Every episode holds this command (v_x, v_y, w_z; base frame) from its start, none standing,
  // instead of the task's draws and resamples.
  std::optional<std::array<double, 3>> command;
  // Optional: called before every env step with the state the action is taken in, q [N, nq] and
  // v [N, nv] (double), the commands [N, 3], and the ids of the envs whose episode ended at the
  // previous step (their state is already the next episode's first). Records rollouts to watch.
  std::function<void(const torch::Tensor& q, const torch::Tensor& v, const torch::Tensor& commands,
                     const torch::Tensor& restarted)>
      onStep;
};

struct EpisodeStats {
  double ret = 0;          // sum of the task's rewards (as in training: not scaled by dt)
  double lengthS = 0;      // seconds
  bool fell = false;       // ended by a termination term (or a simulator failure), not time-out
  double meanVx = 0;       // mean forward speed, world x [m/s]
  double meanSpeed = 0;    // mean horizontal speed along the base heading [m/s]
  double linVelErr2 = 0;   // mean over steps of |cmd_xy - v_xy|^2, base axes [m^2/s^2]
  double yawRateErr2 = 0;  // mean over steps of (cmd_wz - w_z)^2 [rad^2/s^2]
  // Largest angle of any joint beyond its URDF limits [rad], over the states the policy acted in
  // (NaN: not measured).
  double limitExcess = std::nan("");
  // On a terrain tile: the base got past the tile's terrain (climbDistance from the tile's
  // centre along x or y) at some state of the episode.
  bool climbed = false;
  // ... and first got there through a face of the tile (bearing from its centre within 22.5
  // degrees of x or y), not near a corner: a pyramid's rings have convex corners that the legs
  // take one at a time, a robot meeting a staircase meets its face.
  bool climbedFace = false;
};

struct EvalResult {
  std::vector<EpisodeStats> episodes;
  std::string task, contact;
  double simDt = 0;
  int iterations = 0;
  bool commands = false;  // the task tracks velocity commands (the error fields mean something)
  std::string terrain;    // "plane", or "<type> level <n>", or "curriculum"
  double terrainLevelMean = std::nan("");  // mean level of the envs at the end (terrain only)
  // On one sub-terrain type's tiles: the distance from a tile's centre along x or y past which
  // an episode has climbed (half the tile's side: past every step, slope or obstacle); NaN else.
  double climbDistance = std::nan("");
  std::string engine;     // another engine's options as it ran (MuJoCo); empty for ours
  // The whole height field the envs stood on (null: the plane z = 0): what a recording draws.
  std::shared_ptr<const sim::HeightField> ground;

  // mean and standard deviation over episodes of a field
  std::pair<double, double> meanStd(double EpisodeStats::*field) const;
  int falls() const;
  int climbed() const;
  int climbedFace() const;
  // RMS tracking errors pooled over every step of every episode (step-weighted).
  double linVelRms() const;
  double yawRateRms() const;
  // Summary numbers by name (return_mean, return_std, length_s_mean, ..., falls, episodes;
  // climbed and climbed_face on a terrain tile).
  std::map<std::string, double> summary() const;
};

EvalResult evaluatePolicy(const envs::TaskConfig& task, const PolicyFn& policy,
                          const EvalOptions& options);

// Applies evaluation overrides to a task: contact model ("" keeps it), simulator step (<= 0
// keeps it; must divide the env step), Gauss-Seidel iterations (<= 0 keeps them).
void overrideSimulation(envs::TaskConfig& task, const std::string& contact, double simDt,
                        int iterations);

// Multiplies every initial-state noise of the task's resets by `scale` (1: as trained; 0: every
// episode starts from the default pose at rest).
void scaleResetNoise(envs::TaskConfig& task, double scale);

}  // namespace diffloco::train
