// The value regression's loss and gradient for an Mlp with one output, in one pass over the
// network's flat parameter buffer (policies/mlp_kernel.h): SHAC fits its critic with 64 small Adam
// steps per iteration, and through autograd each step was ~100 tensor operations whose dispatch
// cost twice the arithmetic. Same result as torch's forward and backward to float rounding
// (tests/policies/test_mlp_regression.cpp). No torch here: the caller hands in pointers.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "policies/mlp_kernel.h"

namespace diffloco::policies {

class MlpRegression {
 public:
  // The Mlp's shape: `in` inputs, `hidden` widths, one output; activation elu | relu | tanh.
  MlpRegression(int in, const std::vector<int>& hidden, const std::string& activation,
                bool layerNorm);

  // Number of floats in the flat parameter buffer this shape expects.
  int64_t numParameters() const { return mlp_.numParameters(); }

  // Loss sum_r (f(x_r) - y_r)^2 / denominator over the selected rows r = rows[0..n) of x [*, in]
  // (row-major) and y [*]. Unless the loss is non-finite, adds its gradient to grad (numParameters
  // floats, the layout of params). Not thread-safe: one instance per thread (scratch inside).
  double lossAndGradient(const float* params, const float* x, const float* y, const int64_t* rows,
                         int64_t n, double denominator, float* grad);

 private:
  MlpKernel mlp_;
  // The selected rows, the forward's cache, f(x) then dL/df. Aligned as Eigen's own matrices:
  // Eigen's vectorised sums start at the first aligned element, so their rounding depends on
  // where a buffer lies; a resumed run must repeat the uninterrupted one bit for bit.
  using Buffer = std::vector<float, Eigen::aligned_allocator<float>>;
  Buffer x_, cache_, f_;
};

}  // namespace diffloco::policies
