// The value regression's loss and gradient for an Mlp (policies/actor_critic.h: Linear ->
// activation [-> LayerNorm] per hidden layer, then Linear), computed in one pass over the network's
// flat parameter buffer with Eigen: SHAC fits its critic with 64 small Adam steps per iteration,
// and through autograd each step was ~100 tensor operations whose dispatch cost twice the
// arithmetic. Same parameters, same layout (parameters() order, weights [out, in] row-major), same
// result as torch's forward and backward to float rounding
// (tests/policies/test_mlp_regression.cpp). No torch here: the caller hands in pointers.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace diffloco::policies {

class MlpRegression {
 public:
  // The Mlp's shape: `in` inputs, `hidden` widths, one output; activation elu | relu | tanh.
  MlpRegression(int in, const std::vector<int>& hidden, const std::string& activation,
                bool layerNorm);

  // Number of floats in the flat parameter buffer this shape expects.
  int64_t numParameters() const { return numParameters_; }

  // Loss sum_r (f(x_r) - y_r)^2 / denominator over the selected rows r = rows[0..n) of x [*, in]
  // (row-major) and y [*]. Unless the loss is non-finite, adds its gradient to grad (numParameters
  // floats, the layout of params). Not thread-safe: one instance per thread (scratch inside).
  double lossAndGradient(const float* params, const float* x, const float* y, const int64_t* rows,
                         int64_t n, double denominator, float* grad);

 private:
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  enum class Activation { kElu, kRelu, kTanh };
  struct Layer {
    int in = 0, out = 0;
    int64_t weight = 0, bias = 0, lnWeight = -1, lnBias = -1;  // offsets into the flat buffer
    bool hidden = false;
  };

  static void multiplyByActivationDerivative(Activation f, const float* a, float* g,
                                             Eigen::Index size);

  Activation activation_;
  bool layerNorm_;
  int64_t numParameters_ = 0;
  std::vector<Layer> layers_;
  // Per layer: its input, the pre-activation, the activation output, and (LayerNorm) the
  // normalised value and 1/std per row; kept from the forward pass for the backward.
  std::vector<Matrix> input_, pre_, act_, normalized_;
  std::vector<Eigen::VectorXf> rstd_;
  Matrix grad_, gradIn_;
};

}  // namespace diffloco::policies
