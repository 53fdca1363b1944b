#include "policies/normalizer.h"

namespace diffloco::policies {

ObservationNormalizerImpl::ObservationNormalizerImpl(int64_t dim, double eps, bool enabled)
    : enabled_(enabled), eps_(eps) {
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  // Before any sample: mean 0, var 1, count 0 (the first update replaces them exactly).
  mean_ = register_buffer("mean", torch::zeros({dim}, f64));
  var_ = register_buffer("var", torch::ones({dim}, f64));
  count_ = register_buffer("count", torch::zeros({}, f64));
}

torch::Tensor ObservationNormalizerImpl::forward(const torch::Tensor& x) {
  if (!enabled_) return x;
  const double n = count_.item<double>();
  if (n != cachedCount_ || shift_.scalar_type() != x.scalar_type()) {
    torch::NoGradGuard noGrad;
    shift_ = mean_.to(x.scalar_type());
    scale_ = (var_ + eps_).rsqrt().to(x.scalar_type());
    cachedCount_ = n;
  }
  return (x - shift_) * scale_;
}

Moments Moments::of(const torch::Tensor& x, int64_t dim) {
  torch::NoGradGuard noGrad;
  const torch::Tensor b = x.detach().reshape({-1, dim}).to(torch::kDouble);
  Moments m;
  m.count = static_cast<double>(b.size(0));
  if (m.count == 0) {
    m.mean = torch::zeros({dim}, torch::kDouble);
    m.var = torch::zeros({dim}, torch::kDouble);
  } else {
    m.mean = b.mean(0);
    m.var = b.var(0, /*unbiased=*/false);
  }
  return m;
}

Moments& Moments::merge(const Moments& b) {
  torch::NoGradGuard noGrad;
  if (b.count == 0) return *this;
  if (count == 0) {
    *this = {b.count, b.mean.clone(), b.var.clone()};
    return *this;
  }
  const double n = count + b.count;
  const torch::Tensor delta = b.mean - mean;
  // Chan et al.: M2 = M2_a + M2_b + delta^2 n_a n_b / n.
  const torch::Tensor m2 = var * count + b.var * b.count + delta.square() * (count * b.count / n);
  mean = mean + delta * (b.count / n);
  var = m2 / n;
  count = n;
  return *this;
}

void ObservationNormalizerImpl::update(const torch::Tensor& x) {
  if (!enabled_) return;
  update(Moments::of(x, dim()));
}

void ObservationNormalizerImpl::update(const Moments& b) {
  if (!enabled_ || b.count == 0) return;
  torch::NoGradGuard noGrad;
  Moments all{count_.item<double>(), mean_, var_};
  all.merge(b);
  mean_.copy_(all.mean);
  var_.copy_(all.var);
  count_.fill_(all.count);
}

}  // namespace diffloco::policies
