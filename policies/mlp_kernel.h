// An Mlp's (policies/actor_critic.h: Linear -> activation [-> LayerNorm] per hidden layer, then
// Linear) forward and backward pass over its flat parameter buffer, in Eigen: the actor and the
// critic are small (64-4096 rows, widths up to 128), and through autograd every layer is several
// tensor operations whose dispatch costs more than their arithmetic. Same layout as the module's
// parameters() (per Linear: weight [out, in] row-major, bias; per LayerNorm: weight, bias), same
// values as torch's forward and backward to float rounding (tests/policies/test_mlp_kernel.cpp).
// No torch here: callers hand in pointers (policies/fused_mlp.h wraps it as an autograd op,
// policies/mlp_regression.h as the critic's loss).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace diffloco::policies {

class MlpKernel {
 public:
  // `in` inputs, `hidden` widths, `out` outputs; activation elu | relu | tanh.
  MlpKernel(int in, const std::vector<int>& hidden, int out, const std::string& activation,
            bool layerNorm);

  int in() const { return layers_.front().in; }
  int out() const { return layers_.back().out; }
  std::vector<int> hidden() const;  // the constructor's arguments again
  std::string activation() const;
  bool layerNorm() const { return layerNorm_; }
  // Floats in the flat parameter buffer.
  int64_t numParameters() const { return numParameters_; }
  // Floats the forward pass keeps for the backward pass of `rows` rows.
  int64_t cacheSize(int64_t rows) const { return cachePerRow_ * rows; }

  // y [rows, out] = f(x [rows, in]) (row-major); cache (cacheSize(rows) floats) receives what
  // backward() needs. The rounding of Eigen's vectorised sums depends on the buffers' alignment:
  // pass buffers aligned as Eigen's (or torch's) allocations for results that repeat bit for bit.
  void forward(const float* params, const float* x, int64_t rows, float* y, float* cache) const;
  // From dL/dy [rows, out]: adds dL/dparams to gradParams (unless null) and writes dL/dx
  // [rows, in] to gradX (unless null). x and cache as given to and filled by forward().
  void backward(const float* params, const float* x, const float* cache, int64_t rows,
                const float* gradY, float* gradParams, float* gradX) const;

 private:
  enum class Activation { kElu, kRelu, kTanh };
  struct Layer {
    int in = 0, out = 0;
    int64_t weight = 0, bias = 0, lnWeight = -1, lnBias = -1;  // offsets into the parameters
    // Offsets (per row) into the cache of a hidden layer's activation output, LayerNorm's
    // normalised value, 1/std and output (the next layer's input).
    int64_t act = -1, normalized = -1, rstd = -1, output = -1;
    bool hidden = false;
  };

  Activation activation_;
  bool layerNorm_;
  int64_t numParameters_ = 0, cachePerRow_ = 0;
  std::vector<Layer> layers_;
};

}  // namespace diffloco::policies
