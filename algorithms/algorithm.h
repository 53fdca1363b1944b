// What SHAC and PPO share: the interface the trainer drives (one iterate() per iteration, save and
// load of the whole learning state), the per-iteration statistics, the episode statistics of the
// training envs, learning-rate schedules and gradient clipping with the non-finite guard.
#pragma once

#include <torch/torch.h>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "distributed/communicator.h"
#include "envs/random_stream.h"
#include "envs/vec_env.h"
#include "policies/actor_critic.h"

namespace diffloco::algorithms {

struct IterationStats {
  // Scalars by TensorBoard tag ("Loss/actor", "Policy/mean_std", ...); the algorithm's keys are
  // listed by Algorithm::scalarKeys().
  std::map<std::string, double> scalars;
  std::int64_t envSteps = 0;  // env steps of this iteration (all envs)
  double collectionS = 0;     // rollout
  double learnS = 0;          // everything after the rollout
  // Updates skipped because a loss or a gradient was not finite (the parameters are unchanged
  // by them); what the first one was.
  int skippedUpdates = 0;
  std::string skippedWhat;
  void skip(const std::string& what) {
    if (skippedUpdates++ == 0) skippedWhat = what;
  }
};

// Episodes of the training envs (stochastic policy, raw undiscounted rewards, rsl_rl's and SHAC's
// "mean reward"): returns and lengths of the last `window` finished episodes, and the env's
// per-episode logs (Episode/rew_<term>, Episode/length_s) averaged over the episodes that ended in
// the current iteration.
class EpisodeTracker {
 public:
  explicit EpisodeTracker(int numEnvs, size_t window = 100);
  void step(const envs::StepResult& r);
  double meanReturn() const;  // NaN before the first episode ends
  double meanLength() const;  // env steps
  size_t windowCount() const { return returns_.size(); }  // episodes meanReturn() averages
  // Averages of the env's Episode/* logs and the sum of Env/sim_failures since the last call,
  // plus "Train/episodes" (episodes finished since the last call) and "Episode/count" (the
  // episodes the Episode/* averages are over).
  std::map<std::string, double> takeIterationLogs();
  void save(torch::serialize::OutputArchive& a) const;
  void load(torch::serialize::InputArchive& a);

 private:
  size_t window_;
  torch::Tensor ret_, len_;  // [N] double: running sums of the unfinished episodes
  std::deque<double> returns_, lengths_;
  std::map<std::string, double> logSums_;
  double logCount_ = 0, simFailures_ = 0, finished_ = 0;
};

// Data-parallel training (comm.size() > 1): every rank holds the same networks and the same
// algorithm generator (same seed), steps its own block of envs (envs [rank E, (rank + 1) E) of
// the world's size() E) and contributes its share of every loss; gradients are summed over the
// ranks before each optimiser step, so every rank takes the same step. Random draws are made
// for the whole world and each rank keeps its block (action noise; minibatches are one global
// permutation of the world's samples), so that W ranks x E envs compute what 1 rank x W E envs
// computes, up to the order of floating-point sums.
class Algorithm {
 public:
  Algorithm(envs::VecEnv& env, std::uint64_t seed, distributed::Communicator comm = {});
  virtual ~Algorithm() = default;

  // One iteration: rollout, updates, normaliser update. Increments iteration().
  virtual IterationStats iterate() = 0;
  virtual int totalIterations() const = 0;
  virtual policies::Actor& actor() = 0;
  // Keys of IterationStats::scalars this algorithm reports.
  virtual std::vector<std::string> scalarKeys() const = 0;
  // Environment steps per iteration (all envs).
  virtual std::int64_t stepsPerIteration() const = 0;
  virtual std::string name() const = 0;

  // The whole learning state: networks, normaliser, optimisers, iteration counter, the random
  // generator of the algorithm (action noise, minibatch permutations) and the episode statistics.
  virtual void save(torch::serialize::OutputArchive& a);
  virtual void load(torch::serialize::InputArchive& a);
  // Warm start: only the networks (actor with its normaliser, critics) of a checkpoint of the
  // same algorithm and architecture; optimisers, iteration counter, schedules and random state
  // stay fresh. Throws if the checkpoint is another algorithm's or another architecture's.
  void loadWarmStart(torch::serialize::InputArchive& a);

  int iteration() const { return iteration_; }
  const EpisodeTracker& episodes() const { return episodes_; }
  EpisodeTracker& episodes() { return episodes_; }
  envs::VecEnv& env() { return env_; }
  at::Generator& generator() { return gen_; }

  // This rank's rows of a world-wide draw: standard normal noise [numEnvs, n] for the action
  // sampling of this rank's envs.
  torch::Tensor actionNoise(int64_t n, const torch::TensorOptions& options);

 protected:
  // Reads the networks written by save(): what load() and loadWarmStart() share.
  virtual void loadNetworks(torch::serialize::InputArchive& a) = 0;
  void checkAlgorithm(torch::serialize::InputArchive& a) const;
  // The envs of the whole world, and the index of this rank's first.
  int64_t worldEnvs() const { return static_cast<int64_t>(env_.numEnvs()) * comm_.size(); }
  int64_t firstEnv() const { return static_cast<int64_t>(env_.numEnvs()) * comm_.rank(); }
  // Sample indices of a [T, worldEnvs] batch (flattened t-major) -> the rows of this rank's
  // [T, numEnvs] batch that they name (indices of other ranks' envs are dropped).
  torch::Tensor localRows(const torch::Tensor& worldIndices) const;
  // Rank 0's values of these tensors on every rank (initial networks).
  void broadcast(std::initializer_list<torch::Tensor> tensors) const;
  // Merges the observations of every rank into the actor's normaliser, or into `norm`.
  void updateNormalizer(policies::Actor& actor, const torch::Tensor& rawObs) const;
  void updateNormalizer(policies::ObservationNormalizer& norm, const torch::Tensor& rawObs) const;
  // The critic's normaliser where the env gives the critic its own observations
  // (VecEnv::numCriticObs() > 0; null: the critic reads the actor's normalised observations).
  policies::ObservationNormalizer makeCriticNormalizer(const policies::PolicyConfig& policy) const;
  // The critic's normaliser into / from a checkpoint ("critic_normalizer", written only when
  // there is one); load throws when the checkpoint's critic read other observations.
  static void saveCriticNormalizer(torch::serialize::OutputArchive& a,
                                   policies::ObservationNormalizer& norm);
  static void loadCriticNormalizer(torch::serialize::InputArchive& a,
                                   policies::ObservationNormalizer& norm);

  envs::VecEnv& env_;
  distributed::Communicator comm_;
  int iteration_ = 0;
  at::Generator gen_;  // every random draw of the algorithm
  EpisodeTracker episodes_;
};

// Adam (PyTorch's formula, no weight decay) over networks whose parameters and gradients live in
// one contiguous buffer each: the parameters become views into a flat tensor, their .grad views
// into a flat gradient that backward() accumulates into. A step, the gradient norm and the
// clipping are then a handful of tensor ops instead of a few per parameter tensor: SHAC's critic
// takes 64 small steps per iteration, where that per-op overhead dominated.
// Do not reassign the parameters' storage or .grad (Module::load does: load into a separate
// module and copyModule() into these).
class FlatAdam {
 public:
  FlatAdam(const std::vector<torch::Tensor>& params, double lr, double beta1, double beta2,
           double eps = 1e-8);
  void zeroGrad() { grad_.zero_(); }
  // Global gradient norm; scales the gradient to at most maxNorm (> 0). A non-finite norm is
  // returned and the gradient left alone (the caller skips the step).
  double clipGradNorm(double maxNorm);
  void step();
  void setLr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  const torch::Tensor& flat() const { return flat_; }  // the parameters, [numel]
  // The parameters as one autograd leaf (the same storage) whose gradient accumulates into
  // grad(): for fused operations that take the flat buffer (policies/fused_mlp.h).
  const torch::Tensor& leaf() const { return leaf_; }
  torch::Tensor& grad() { return grad_; }              // their gradient, [numel]
  void save(torch::serialize::OutputArchive& a, const std::string& prefix) const;
  void load(torch::serialize::InputArchive& a, const std::string& prefix);

 private:
  torch::Tensor flat_, leaf_, grad_, m_, v_;
  std::int64_t steps_ = 0;
  double lr_, beta1_, beta2_, eps_;
};

// Sums over the ranks of c, in one collective (each costs a round trip between processes): the
// gradient buffers in place, and the scalars in place at float precision (losses for the logs and
// the finiteness test). A no-op in a world of one.
void allReduceGradients(const distributed::Communicator& c,
                        std::initializer_list<torch::Tensor> grads,
                        std::initializer_list<double*> scalars);

// Makes `params` views into one new contiguous tensor holding their values, and returns it.
torch::Tensor flattenParameters(const std::vector<torch::Tensor>& params);

// Learning rate of iteration i (0-based) of n: "constant", "exponential" (lr0 decay^i),
// "linear" (lr0 at i = 0 to lrFinal at i = n - 1; the SHAC reference only approaches its final
// rate, algorithms.md 1.3) or "cosine" (lr0 to lrFinal along half a cosine: twice linear's
// iterations below a tenth of lr0).
double scheduledLearningRate(const std::string& schedule, double lr0, double decay, double lrFinal,
                             int i, int n);
// A seed derived from (seed, stream): different streams of one run do not overlap.
using envs::deriveSeed;

}  // namespace diffloco::algorithms
