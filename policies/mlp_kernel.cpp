#include "policies/mlp_kernel.h"

#include <Eigen/Core>
#include <stdexcept>

namespace diffloco::policies {

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Matrix = RowMajor;
using ConstMatrixMap = Eigen::Map<const RowMajor>;
using MatrixMap = Eigen::Map<RowMajor>;
using ConstRowMap = Eigen::Map<const Eigen::RowVectorXf>;
using RowMap = Eigen::Map<Eigen::RowVectorXf>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;
using VectorMap = Eigen::Map<Eigen::VectorXf>;
constexpr float kLayerNormEps = 1e-5f;  // torch::nn::LayerNorm's default

// Adds the sum of m's rows to out: contiguous row additions (Eigen's colwise().sum() of a
// row-major matrix is a strided, scalar reduction).
template <class M>
void addRowSum(const M& m, float* out) {
  RowMap acc(out, m.cols());
  for (Eigen::Index i = 0; i < m.rows(); ++i) acc += m.row(i);
}
}  // namespace

MlpKernel::MlpKernel(int in, const std::vector<int>& hidden, int out, const std::string& activation,
                     bool layerNorm)
    : layerNorm_(layerNorm) {
  if (activation == "elu")
    activation_ = Activation::kElu;
  else if (activation == "relu")
    activation_ = Activation::kRelu;
  else if (activation == "tanh")
    activation_ = Activation::kTanh;
  else
    throw std::invalid_argument("MlpKernel: unknown activation '" + activation + "'");
  if (in < 1 || out < 1) throw std::invalid_argument("MlpKernel: empty input or output");
  // The order of MlpImpl's registration, which parameters() and the flat buffer follow.
  int width = in;
  auto add = [&](int o, bool isHidden) {
    if (o < 1) throw std::invalid_argument("MlpKernel: a layer of width < 1");
    Layer l;
    l.in = width;
    l.out = o;
    l.hidden = isHidden;
    l.weight = numParameters_;
    numParameters_ += static_cast<int64_t>(o) * width;
    l.bias = numParameters_;
    numParameters_ += o;
    if (isHidden) {
      l.act = cachePerRow_;
      cachePerRow_ += o;
      if (layerNorm_) {
        l.lnWeight = numParameters_;
        numParameters_ += o;
        l.lnBias = numParameters_;
        numParameters_ += o;
        l.normalized = cachePerRow_;
        cachePerRow_ += o;
        l.rstd = cachePerRow_;
        cachePerRow_ += 1;
        l.output = cachePerRow_;
        cachePerRow_ += o;
      } else {
        l.output = l.act;
      }
    }
    layers_.push_back(l);
    width = o;
  };
  for (int h : hidden) add(h, true);
  add(out, false);
}

std::vector<int> MlpKernel::hidden() const {
  std::vector<int> widths;
  for (const Layer& l : layers_)
    if (l.hidden) widths.push_back(l.out);
  return widths;
}

std::string MlpKernel::activation() const {
  switch (activation_) {
    case Activation::kElu:
      return "elu";
    case Activation::kRelu:
      return "relu";
    case Activation::kTanh:
      return "tanh";
  }
  return "";
}

void MlpKernel::forward(const float* params, const float* x, int64_t rows, float* y,
                        float* cache) const {
  const Eigen::Index r = rows;
  const float* input = x;
  for (const Layer& l : layers_) {
    const ConstMatrixMap w(params + l.weight, l.out, l.in);
    const ConstMatrixMap in(input, r, l.in);
    MatrixMap pre(l.hidden ? cache + l.act * r : y, r, l.out);
    pre.noalias() = in * w.transpose();
    pre.rowwise() += ConstRowMap(params + l.bias, l.out);
    if (!l.hidden) break;
    // The activation in place: its output is what the backward pass needs.
    switch (activation_) {
      case Activation::kElu:
        pre = pre.array().max(0.f) + (pre.array().min(0.f).exp() - 1.f);
        break;
      case Activation::kRelu:
        pre = pre.array().max(0.f);
        break;
      case Activation::kTanh:
        pre = pre.array().tanh();
        break;
    }
    if (layerNorm_) {
      // torch's LayerNorm: biased variance over the features of each row.
      MatrixMap xhat(cache + l.normalized * r, r, l.out);
      VectorMap rstd(cache + l.rstd * r, r);
      xhat = pre.colwise() - pre.rowwise().mean();
      rstd = ((xhat.array().square().rowwise().sum() / static_cast<float>(l.out)) + kLayerNormEps)
                 .rsqrt();
      xhat.array().colwise() *= rstd.array();
      MatrixMap(cache + l.output * r, r, l.out) =
          (xhat.array().rowwise() * ConstRowMap(params + l.lnWeight, l.out).array()).rowwise() +
          ConstRowMap(params + l.lnBias, l.out).array();
    }
    input = cache + l.output * r;
  }
}

void MlpKernel::backward(const float* params, const float* x, const float* cache, int64_t rows,
                         const float* gradY, float* gradParams, float* gradX) const {
  const Eigen::Index r = rows;
  // g: dL/d(the current layer's output), then of its pre-activation.
  Matrix g = ConstMatrixMap(gradY, r, layers_.back().out);
  Matrix next;
  for (size_t k = layers_.size(); k-- > 0;) {
    const Layer& l = layers_[k];
    if (l.hidden) {
      if (layerNorm_) {
        const ConstMatrixMap xhat(cache + l.normalized * r, r, l.out);
        if (gradParams) {
          addRowSum(g.cwiseProduct(xhat), gradParams + l.lnWeight);
          addRowSum(g, gradParams + l.lnBias);
        }
        // d xhat, then through the normalisation: rstd (g - mean(g) - xhat mean(g xhat)).
        g.array().rowwise() *= ConstRowMap(params + l.lnWeight, l.out).array();
        const Eigen::VectorXf meanG = g.rowwise().mean();
        const Eigen::VectorXf meanGx = (g.array() * xhat.array()).rowwise().mean();
        g = ((g.colwise() - meanG).array() - xhat.array().colwise() * meanGx.array()).colwise() *
            ConstVectorMap(cache + l.rstd * r, r).array();
      }
      // The activation's derivative in terms of its output a, in Eigen's packet operations.
      const auto a = ConstMatrixMap(cache + l.act * r, r, l.out).array();
      switch (activation_) {
        case Activation::kElu:  // x > 0: 1; else exp(x) = a + 1. Both are min(a, 0) + 1.
          g.array() *= a.min(0.f) + 1.f;
          break;
        case Activation::kRelu:
          g = (a > 0.f).select(g.array(), 0.f);
          break;
        case Activation::kTanh:
          g.array() *= 1.f - a.square();
          break;
      }
    }
    const float* input = k > 0 ? cache + layers_[k - 1].output * r : x;
    if (gradParams) {
      MatrixMap(gradParams + l.weight, l.out, l.in).noalias() +=
          g.transpose() * ConstMatrixMap(input, r, l.in);
      addRowSum(g, gradParams + l.bias);
    }
    const ConstMatrixMap w(params + l.weight, l.out, l.in);
    if (k > 0) {
      next.resize(r, l.in);
      next.noalias() = g * w;
      g.swap(next);
    } else if (gradX) {
      MatrixMap(gradX, r, l.in).noalias() = g * w;
    }
  }
}

}  // namespace diffloco::policies
