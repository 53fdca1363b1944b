// A batch of legged-locomotion environments built from a TaskConfig (configs/tasks/*.yaml): the
// robot in the batched simulator, actions as joint position targets
// q* = q_default + action_scale * clip(a, -clip, clip), named observation / reward / termination
// terms (envs/terms.h), velocity commands, domain randomisation and resets.
//
// One env step: pushes due -> `decimation` simulator steps with q* held -> rewards and
// terminations on the new state -> command resampling -> observations (the terminal observations)
// -> reset of the envs that terminated, timed out or whose simulation failed -> observations of
// the reset envs replaced.
//
// State tensors are double; observations and rewards are returned in EnvOptions::dtype. In the
// sampling mode the state tensors are views of the simulator's own matrices (no copies).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "envs/sim_function.h"
#include "envs/task_config.h"
#include "envs/terms.h"
#include "envs/vec_env.h"
#include "robots/robot.h"

namespace diffloco::envs {

struct EnvOptions {
  int numEnvs = 64;
  int threads = 2;  // simulator thread pool; torch's intra-op threads are the caller's choice
  torch::Dtype dtype = torch::kFloat32;  // observations and rewards (the state is always double)
  bool differentiable = false;
  std::uint64_t seed = 0;
  // Index of this batch's first env among all envs of a distributed run (rank x num_envs): it
  // picks the envs' random streams, so that 2 processes x E envs draw what 1 x 2E envs draws.
  std::int64_t firstEnv = 0;
  bool printSummary = true;  // log the term tables at construction (spdlog, info)
  // Where the stages step the worlds: the CPU's thread pool or the CUDA device
  // (batch/batch_sim.h).
  batch::BatchPath simPath = batch::BatchPath::Fixed;
};

class LocomotionEnv : public VecEnv {
 public:
  LocomotionEnv(TaskConfig task, const EnvOptions& options);

  int numEnvs() const override { return n_; }
  int numObs() const override { return numObs_; }
  int numCriticObs() const override { return numCriticObs_; }
  int numActions() const override { return robot_.model.nj(); }
  int maxEpisodeLength() const override { return maxSteps_; }
  double envDt() const override { return task_.envDt; }
  const std::vector<std::string>& rewardNames() const override { return rewardNames_; }

  torch::Tensor reset() override;
  torch::Tensor observations() const override { return obs_; }
  torch::Tensor criticObservations() const override { return criticObs_; }
  StepResult step(const torch::Tensor& actions) override;
  void setDifferentiable(bool on) override;
  bool differentiable() const override { return differentiable_; }
  void detach() override;
  torch::Tensor episodeLength() const override { return episodeStep_; }
  void seed(std::uint64_t seed) override;

  const TaskConfig& task() const { return task_; }
  const Robot& robot() const { return robot_; }
  SimLink& link() { return *link_; }

  // Observation layout: (term name, size) in order; the policy's input contract.
  std::vector<std::pair<std::string, int>> observationLayout() const;
  // The critic's observation layout (task critic_observations; empty: it reads the policy's).
  std::vector<std::pair<std::string, int>> criticObservationLayout() const;
  // The start-up tables (task settings, observation layout, rewards, terminations) as text.
  std::string summary() const;

  // The state, double: q [N, nq], v [N, nv] (with history in the differentiable mode).
  torch::Tensor q() const { return q_; }
  torch::Tensor v() const { return v_; }
  // Overwrites the state of every env (tests, tools; the values become constants) and recomputes
  // the observations. Episode counters are kept.
  void setState(const torch::Tensor& q, const torch::Tensor& v);
  torch::Tensor commands() const { return command_; }  // [N, 3]
  void setCommands(const torch::Tensor& commands);

  // Curricula (train/curriculum.h): the task's command ranges and initial-state noise scaled
  // about zero by these factors in the draws that follow, the episode length and the command
  // resampling interval by theirs (at least one env step) from the next step on; 1: the task as
  // written. The number of random draws does not depend on them.
  void setCommandScale(double scale);
  void setResetNoiseScale(double scale);
  void setEpisodeLengthScale(double scale);
  void setCommandResampleScale(double scale);
  double commandScale() const { return commandScale_; }
  double resetNoiseScale() const { return resetNoiseScale_; }
  double commandResampleScale() const { return commandResampleScale_; }
  // The generated terrain (envs/terrain.h; field null: the plane z = 0) and each env's tile: its
  // difficulty row (the terrain curriculum moves it) and its column.
  const Terrain& terrain() const { return terrain_; }
  torch::Tensor terrainLevels() const { return terrainLevel_; }  // [N] int64
  torch::Tensor terrainColumns() const { return terrainColumn_; }  // [N] int64
  // Curriculum/terrain_level (the mean) and Curriculum/terrain_level_<type> (the mean over the
  // envs on that sub-terrain type's columns, for every type that has envs) into `log`.
  void logTerrainLevels(std::map<std::string, double>& log) const;
  // Puts every env on tile (level, column of the given type's) from its next reset on (evaluation
  // on named terrains): throws naming the type when no column has it or the level is out of range.
  void setTerrainTile(int level, const std::string& type);

  // The weight of reward term `name` from the next step on (curriculum.rewards); throws naming
  // the term when the task has no such term.
  void setRewardWeight(const std::string& name, double weight);
  double rewardWeight(const std::string& name) const;

  // Everything needed to continue exactly where the env is (checkpoints): state, last actions,
  // observations, episode counters and reward sums, commands, push schedule, per-world
  // parameters and the random generators. Detached copies.
  std::map<std::string, torch::Tensor> stateDict() const;
  // Restores a stateDict of an env of the same task and size; throws naming a missing or
  // mis-sized entry.
  void loadStateDict(const std::map<std::string, torch::Tensor>& state);

 private:
  // Construction: the task's constants for the terms, the terms' sizes and weights (returns the
  // number of last actions to keep), the state tensors and each env's terrain tile.
  void initConstants();
  std::int64_t initTerms();
  void initState(std::int64_t historyDepth);
  // The parts of step(): the joint targets of the clipped actions a (through the latency's
  // action history); the decimation's simulator steps with them held, differentiable or in
  // place, c's sub-step state filled where a term reads it (returns the worlds that failed,
  // undefined when none did, and their count); the commands whose resampling is due; the
  // episode statistics into `log`, reset and new observations of the envs `ids` that finished.
  torch::Tensor jointTargets(const torch::Tensor& a);
  torch::Tensor simulate(const torch::Tensor& qTarget, TermContext& c, std::int64_t& nFailed);
  void resampleDueCommands(TermContext& c);
  void endEpisodes(const torch::Tensor& ids, std::map<std::string, double>& log);
  // `episodesEnded`: the envs finished an episode in step() (the terrain curriculum judges it);
  // false for reset(), which starts every env afresh on its current level.
  void resetEnvs(const torch::Tensor& ids, bool episodesEnded);
  // Terrain curriculum at the end of the episodes of `ids` (before their reset) when
  // `episodesEnded`, then their spawn points: the centre of their tile.
  void updateTerrainLevels(const std::vector<std::int64_t>& ids, bool episodesEnded);
  void sampleCommands(const std::vector<std::int64_t>& ids);
  // The heading command (CommandConfig::headingEnabled): every env's yaw-rate command from its
  // heading error.
  void steerToHeadings();
  void applyPushes();
  // Adds this step's command, turned into the world by the base's yaw, to commandedPath_.
  void integrateCommandedPath();
  // Observations [n, numObs] (double, noise and scale applied) for the rows of context c, which
  // are the envs `ids` (undefined: all).
  // `parts`: where given, receives each term's value before noise and scale.
  torch::Tensor computeObservations(TermContext& c, const torch::Tensor& ids = {},
                                    std::vector<torch::Tensor>* parts = nullptr);
  // The critic's observations [n, numCriticObs] (options_.dtype, scale applied, no noise) for the
  // rows of c, the envs `ids` (undefined: all); undefined when the task has none. A term that is
  // also among the policy's, with the same parameters, is taken from `policyParts` (its value
  // before noise) rather than computed again.
  torch::Tensor computeCriticObservations(TermContext& c, const torch::Tensor& ids,
                                          const std::vector<torch::Tensor>& policyParts);
  // Both of the above into obs_ and criticObs_ (every env).
  void observeAll(TermContext& c);
  // Context for the envs `ids` (undefined: all) right after a reset: zero actions and time.
  TermContext resetContext(const torch::Tensor& ids);
  // A draw of U(lo, hi) from env `env`'s own stream.
  double uniform(std::int64_t env, double lo, double hi);

  TaskConfig task_;
  EnvOptions options_;
  Robot robot_;  // model with the task's armature; the simulator holds a reference to it
  std::unique_ptr<SimLink> link_;
  TaskConstants k_;
  int n_ = 0, numObs_ = 0, numCriticObs_ = 0, maxSteps_ = 1, decimation_ = 1;
  bool differentiable_ = false;
  double commandScale_ = 1, resetNoiseScale_ = 1, commandResampleScale_ = 1;
  unsigned needs_ = 0;  // union of TermDef::needs over the terms
  std::vector<std::string> rewardNames_;

  torch::Tensor q_, v_;          // [N, nq], [N, nv] double
  torch::Tensor lastAction_;     // [N, nj] double: action of the previous step
  // Action latency: the last maxDelay + 1 actions, newest first [N, D + 1, nj], and each env's
  // delay [N] int64 (undefined without randomization.action_delay_steps).
  torch::Tensor actionHistory_, actionDelay_;
  torch::Tensor obs_;            // [N, numObs], options_.dtype
  torch::Tensor criticObs_;      // [N, numCriticObs], options_.dtype (undefined: none)
  torch::Tensor criticObsScale_;  // [numCriticObs] or undefined when trivial
  // Per critic term: the index of the same policy term (name and parameters), or -1.
  std::vector<int> criticFromPolicy_;
  torch::Tensor command_;        // [N, 3] double
  std::vector<double> heading_;  // [N] world-frame heading command [rad]; NaN: standing
  torch::Tensor episodeStep_;    // [N] int64
  torch::Tensor pushAt_;         // [N] int64: episode step of the next push
  torch::Tensor rewardWeights_;  // [T] double
  torch::Tensor episodeSums_;    // [N, T] double: weighted reward terms summed over the episode
  torch::Tensor obsScale_, obsNoise_;  // [numObs] or undefined when trivial
  torch::Tensor standing_;             // [nq] default configuration
  Terrain terrain_;
  torch::Tensor terrainLevel_, terrainColumn_;  // [N] int64 (undefined without terrain)
  torch::Tensor origin_;                        // [N, 2] double: spawn (x, y) of the episode
  // [N, 2] double: the episode's commands integrated along the base's heading (the curriculum's
  // commanded_path)
  torch::Tensor commandedPath_;
  // One random stream per env (a splitmix64 state), seeded from (seed, the env's index in the
  // world): an env's draws depend on its own history only, not on which other envs reset or how
  // many envs this process holds.
  std::vector<std::uint64_t> streams_;
};

}  // namespace diffloco::envs
