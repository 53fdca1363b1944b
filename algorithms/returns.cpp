#include "algorithms/returns.h"

#include <stdexcept>

namespace diffloco::algorithms {

using torch::Tensor;

namespace {

void checkShapes(const Tensor& r, const Tensor& v, const Tensor& d, const char* who) {
  if (r.dim() != 2 || v.sizes() != r.sizes() || d.sizes() != r.sizes())
    throw std::invalid_argument(std::string(who) + ": rewards, values and dones must be [T, N]");
}

}  // namespace

Tensor lambdaReturns(const Tensor& rewards, const Tensor& nextValues, const Tensor& dones,
                     double gamma, double lambda) {
  checkShapes(rewards, nextValues, dones, "lambdaReturns");
  torch::NoGradGuard noGrad;
  const int64_t T = rewards.size(0);
  const Tensor goOn = dones.logical_not().to(rewards.scalar_type());
  Tensor y = torch::empty_like(rewards);
  Tensor next = rewards[T - 1] + gamma * nextValues[T - 1];
  y[T - 1] = next;
  for (int64_t t = T - 2; t >= 0; --t) {
    // Blend of the one-step bootstrap and the next target; a segment end keeps only the former.
    const Tensor blend = nextValues[t] + lambda * goOn[t] * (next - nextValues[t]);
    next = rewards[t] + gamma * blend;
    y[t] = next;
  }
  return y;
}

Tensor gaeAdvantages(const Tensor& rewards, const Tensor& values, const Tensor& nextValues,
                     const Tensor& dones, double gamma, double lambda) {
  checkShapes(rewards, values, dones, "gaeAdvantages");
  checkShapes(rewards, nextValues, dones, "gaeAdvantages");
  torch::NoGradGuard noGrad;
  const int64_t T = rewards.size(0);
  const Tensor goOn = dones.logical_not().to(rewards.scalar_type());
  goOn[T - 1].fill_(0);
  Tensor adv = torch::empty_like(rewards);
  Tensor a = torch::zeros_like(rewards[0]);
  for (int64_t t = T - 1; t >= 0; --t) {
    const Tensor delta = rewards[t] + gamma * nextValues[t] - values[t];
    a = delta + (gamma * lambda) * goOn[t] * a;
    adv[t] = a;
  }
  return adv;
}

}  // namespace diffloco::algorithms
