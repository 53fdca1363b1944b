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

void ObservationNormalizerImpl::update(const torch::Tensor& x) {
  if (!enabled_) return;
  torch::NoGradGuard noGrad;
  const torch::Tensor b = x.detach().reshape({-1, dim()}).to(torch::kDouble);
  const double nb = static_cast<double>(b.size(0));
  if (nb == 0) return;
  const double na = count_.item<double>();
  const double n = na + nb;
  const torch::Tensor meanB = b.mean(0);
  const torch::Tensor varB = b.var(0, /*unbiased=*/false);
  const torch::Tensor delta = meanB - mean_;
  // Chan et al.: M2 = M2_a + M2_b + delta^2 n_a n_b / n.
  const torch::Tensor m2 = var_ * na + varB * nb + delta.square() * (na * nb / n);
  mean_.add_(delta * (nb / n));
  var_.copy_(m2 / n);
  count_.fill_(n);
}

}  // namespace diffloco::policies
