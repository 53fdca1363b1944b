#include "policies/mlp_regression.h"

#include <algorithm>
#include <cmath>

namespace diffloco::policies {

MlpRegression::MlpRegression(int in, const std::vector<int>& hidden, const std::string& activation,
                             bool layerNorm)
    : mlp_(in, hidden, 1, activation, layerNorm) {}

double MlpRegression::lossAndGradient(const float* params, const float* x, const float* y,
                                      const int64_t* rows, int64_t n, double denominator,
                                      float* grad) {
  const int in = mlp_.in();
  x_.resize(static_cast<size_t>(n * in));
  for (int64_t i = 0; i < n; ++i) std::copy_n(x + rows[i] * in, in, x_.data() + i * in);
  cache_.resize(static_cast<size_t>(mlp_.cacheSize(n)));
  f_.resize(static_cast<size_t>(n));
  mlp_.forward(params, x_.data(), n, f_.data(), cache_.data());
  double loss = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float d = f_[i] - y[rows[i]];
    f_[i] = d;
    loss += static_cast<double>(d) * d;
  }
  loss /= denominator;
  if (!std::isfinite(loss)) return loss;
  const auto scale = static_cast<float>(2.0 / denominator);
  for (float& d : f_) d *= scale;
  mlp_.backward(params, x_.data(), cache_.data(), n, f_.data(), grad, nullptr);
  return loss;
}

}  // namespace diffloco::policies
