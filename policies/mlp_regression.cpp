#include "policies/mlp_regression.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace diffloco::policies {

namespace {
using ConstMatrixMap =
    Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
using ConstRowMap = Eigen::Map<const Eigen::RowVectorXf>;
using MatrixMap = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
using RowMap = Eigen::Map<Eigen::RowVectorXf>;
constexpr float kLayerNormEps = 1e-5f;  // torch::nn::LayerNorm's default

// Adds the sum of m's rows to out: contiguous row additions (Eigen's colwise().sum() of a
// row-major matrix is a strided, scalar reduction).
template <class M>
void addRowSum(const M& m, float* out) {
  RowMap acc(out, m.cols());
  for (Eigen::Index i = 0; i < m.rows(); ++i) acc += m.row(i);
}
}  // namespace

// g *= the activation's derivative, written in terms of its output a, in Eigen's packet
// operations (a plain loop with a condition, or Eigen's select, stays scalar).
void MlpRegression::multiplyByActivationDerivative(Activation f, const float* a, float* g,
                                                   Eigen::Index size) {
  const Eigen::Map<const Eigen::ArrayXf> av(a, size);
  Eigen::Map<Eigen::ArrayXf> gv(g, size);
  switch (f) {
    case Activation::kElu:  // x > 0: 1; else exp(x) = a + 1. Both are min(a, 0) + 1.
      gv *= av.min(0.f) + 1.f;
      break;
    case Activation::kRelu:
      gv = (av > 0.f).select(gv, 0.f);
      break;
    case Activation::kTanh:
      gv *= 1.f - av.square();
      break;
  }
}

MlpRegression::MlpRegression(int in, const std::vector<int>& hidden, const std::string& activation,
                             bool layerNorm)
    : layerNorm_(layerNorm) {
  if (activation == "elu")
    activation_ = Activation::kElu;
  else if (activation == "relu")
    activation_ = Activation::kRelu;
  else if (activation == "tanh")
    activation_ = Activation::kTanh;
  else
    throw std::invalid_argument("MlpRegression: unknown activation '" + activation + "'");
  // The order of MlpImpl's registration, which parameters() and the flat buffer follow.
  int width = in;
  auto add = [&](int out, bool isHidden) {
    Layer l;
    l.in = width;
    l.out = out;
    l.hidden = isHidden;
    l.weight = numParameters_;
    numParameters_ += static_cast<int64_t>(out) * width;
    l.bias = numParameters_;
    numParameters_ += out;
    if (isHidden && layerNorm_) {
      l.lnWeight = numParameters_;
      numParameters_ += out;
      l.lnBias = numParameters_;
      numParameters_ += out;
    }
    layers_.push_back(l);
    width = out;
  };
  for (int h : hidden) add(h, true);
  add(1, false);
  const size_t n = layers_.size();
  input_.resize(n);
  pre_.resize(n);
  act_.resize(n);
  normalized_.resize(n);
  rstd_.resize(n);
}

double MlpRegression::lossAndGradient(const float* params, const float* x, const float* y,
                                      const int64_t* rows, int64_t n, double denominator,
                                      float* grad) {
  const Eigen::Index r = n;
  const int numIn = layers_.front().in;
  // Forward, keeping what the backward pass needs.
  input_[0].resize(r, numIn);
  for (Eigen::Index i = 0; i < r; ++i) input_[0].row(i) = ConstRowMap(x + rows[i] * numIn, numIn);
  for (size_t k = 0; k < layers_.size(); ++k) {
    const Layer& l = layers_[k];
    const ConstMatrixMap w(params + l.weight, l.out, l.in);
    Matrix& pre = pre_[k];
    pre.resize(r, l.out);
    pre.noalias() = input_[k] * w.transpose();
    pre.rowwise() += ConstRowMap(params + l.bias, l.out);
    if (!l.hidden) break;
    Matrix& a = act_[k];
    switch (activation_) {
      case Activation::kElu:
        a = pre.array().max(0.f) + (pre.array().min(0.f).exp() - 1.f);
        break;
      case Activation::kRelu:
        a = pre.array().max(0.f);
        break;
      case Activation::kTanh:
        a = pre.array().tanh();
        break;
    }
    Matrix& next = input_[k + 1];
    if (layerNorm_) {
      // torch's LayerNorm: biased variance over the features of each row.
      const Eigen::VectorXf mean = a.rowwise().mean();
      Matrix& xhat = normalized_[k];
      xhat = a.colwise() - mean;
      rstd_[k] =
          ((xhat.array().square().rowwise().sum() / static_cast<float>(l.out)) + kLayerNormEps)
              .rsqrt();
      xhat.array().colwise() *= rstd_[k].array();
      next = (xhat.array().rowwise() * ConstRowMap(params + l.lnWeight, l.out).array()).rowwise() +
             ConstRowMap(params + l.lnBias, l.out).array();
    } else {
      next = a;
    }
  }
  Eigen::VectorXf diff(r);
  for (Eigen::Index i = 0; i < r; ++i) diff[i] = pre_.back()(i, 0) - y[rows[i]];
  const double loss = diff.cast<double>().squaredNorm() / denominator;
  if (!std::isfinite(loss)) return loss;

  // Backward: grad_ is dLoss/d(the current layer's output).
  grad_ = (diff * static_cast<float>(2.0 / denominator));
  for (size_t k = layers_.size(); k-- > 0;) {
    const Layer& l = layers_[k];
    const ConstMatrixMap w(params + l.weight, l.out, l.in);
    if (l.hidden) {
      Matrix& a = act_[k];
      if (layerNorm_) {
        const Matrix& xhat = normalized_[k];
        gradIn_ = grad_.cwiseProduct(xhat);
        addRowSum(gradIn_, grad + l.lnWeight);
        addRowSum(grad_, grad + l.lnBias);
        // d xhat, then through the normalisation: rstd (g - mean(g) - xhat mean(g xhat)).
        grad_.array().rowwise() *= ConstRowMap(params + l.lnWeight, l.out).array();
        const Eigen::VectorXf meanG = grad_.rowwise().mean();
        const Eigen::VectorXf meanGx = (grad_.array() * xhat.array()).rowwise().mean();
        grad_ = ((grad_.colwise() - meanG).array() - xhat.array().colwise() * meanGx.array())
                    .colwise() *
                rstd_[k].array();
      }
      multiplyByActivationDerivative(activation_, a.data(), grad_.data(), grad_.size());
    }
    MatrixMap(grad + l.weight, l.out, l.in).noalias() += grad_.transpose() * input_[k];
    addRowSum(grad_, grad + l.bias);
    if (k > 0) {
      gradIn_.resize(r, l.in);
      gradIn_.noalias() = grad_ * w;
      grad_.swap(gradIn_);
    }
  }
  return loss;
}

}  // namespace diffloco::policies
