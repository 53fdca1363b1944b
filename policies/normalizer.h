// Running mean and variance of the observations, part of the actor (saved and exported with it).
//
// normalize(x) = (x - mean) / sqrt(var + eps), SHAC's RunningMeanStd form (algorithms.md 1.7).
// Statistics are double buffers, merged batch by batch with Chan's parallel update, so the result
// does not depend on how the samples are split into batches. The algorithms update them once per
// iteration, after learning, with that iteration's observations: within an iteration everything
// (rollout, stored inputs, losses) sees the same frozen statistics. This fixes two flaws of the
// references: rsl_rl HEAD re-normalises stored raw observations with statistics that moved during
// the rollout (the PPO ratio is then not 1 on the first minibatch), and SHAC counts the first
// observation of every window twice.
#pragma once

#include <torch/torch.h>

namespace diffloco::policies {

// Count, mean and (biased) variance of a set of samples, [dim] double; merged exactly with
// Chan et al.'s parallel formula, so that statistics of parts (the ranks of a distributed run)
// combine into those of the whole.
struct Moments {
  double count = 0;
  torch::Tensor mean, var;
  static Moments of(const torch::Tensor& x, int64_t dim);  // samples x [..., dim]
  Moments& merge(const Moments& b);                        // *this := the union of both sets
};

class ObservationNormalizerImpl : public torch::nn::Module {
 public:
  // enabled = false: normalize() is the identity and update() does nothing.
  ObservationNormalizerImpl(int64_t dim, double eps = 1e-5, bool enabled = true);

  // (x - mean) / sqrt(var + eps) in x's dtype; differentiable in x.
  torch::Tensor forward(const torch::Tensor& x);
  // Merges the samples x [..., dim] (any floating dtype) into the statistics.
  void update(const torch::Tensor& x);
  // Merges samples given by their moments (update(x) = update(Moments::of(x, dim()))).
  void update(const Moments& m);

  bool enabled() const { return enabled_; }
  double eps() const { return eps_; }
  int64_t dim() const { return mean_.size(0); }
  const torch::Tensor& mean() const { return mean_; }  // [dim] double
  const torch::Tensor& var() const { return var_; }    // [dim] double (biased)
  double count() const { return count_.item<double>(); }
  // Drops the cached (shift, scale): call after the buffers were overwritten (a load).
  void refresh() { cachedCount_ = -1; }

 private:
  bool enabled_;
  double eps_;
  torch::Tensor mean_, var_, count_;  // buffers: saved with the module
  // mean and 1/sqrt(var + eps) in the dtype last asked for, rebuilt when the count changes (an
  // update or a load).
  torch::Tensor shift_, scale_;
  double cachedCount_ = -1;
};
TORCH_MODULE(ObservationNormalizer);

}  // namespace diffloco::policies
