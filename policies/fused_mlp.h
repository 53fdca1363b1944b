// An Mlp (policies/actor_critic.h) as one autograd operation over its flat parameter buffer: the
// forward and backward passes are MlpKernel's (policies/mlp_kernel.h) instead of ~10 tensor
// operations and ~15 backward nodes per call. SHAC calls its actor and target critic 32 times per
// window, with a batch of 64 rows, where that dispatch was most of the time.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "policies/mlp_kernel.h"

namespace diffloco::policies {

class FusedMlp {
 public:
  FusedMlp(int in, const std::vector<int>& hidden, int out, const std::string& activation,
           bool layerNorm);

  // f(x) [..., out] for x [..., in] (float); params: the Mlp's numParameters() values in
  // parameters() order, flat (e.g. a slice of a FlatAdam buffer). Differentiable in both.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& params) const;

  int64_t numParameters() const { return kernel_.numParameters(); }

 private:
  MlpKernel kernel_;
};

}  // namespace diffloco::policies
