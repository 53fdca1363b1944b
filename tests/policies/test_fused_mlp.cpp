// FusedMlp (and so MlpKernel's forward and backward) against torch's autograd on the same Mlp
// module: outputs, the gradient of the input and of every parameter, for each activation, with
// and without LayerNorm, through a loss that weights every output differently.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "policies/actor_critic.h"
#include "policies/fused_mlp.h"

using namespace diffloco::policies;
using torch::Tensor;

namespace {

struct Case {
  std::string activation;
  bool layerNorm;
  std::vector<int> hidden;
  int out;
};

double maxAbs(const Tensor& t) {
  return t.abs().max().item<double>();
}

}  // namespace

TEST(FusedMlp, MatchesAutogradForEveryShape) {
  const std::vector<Case> cases = {{"elu", true, {128, 64, 32}, 12},
                                   {"elu", false, {32, 16}, 3},
                                   {"relu", true, {24}, 1},
                                   {"tanh", true, {16, 12}, 5},
                                   {"tanh", false, {20}, 2}};
  torch::manual_seed(5);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.activation + (c.layerNorm ? " + LayerNorm" : ""));
    const int in = 13;
    Mlp mlp(in, c.hidden, c.out, c.activation, c.layerNorm);
    std::vector<Tensor> parts;
    {
      torch::NoGradGuard g;  // non-trivial LayerNorm affine parameters (torch: 1 and 0)
      for (auto& p : mlp->parameters()) {
        p.add_(0.1 * torch::randn_like(p));
        parts.push_back(p.detach().reshape(-1));
      }
    }
    // A slice of a flat buffer that holds 7 more values first (as an actor's log_std).
    parts.insert(parts.begin(), torch::randn({7}));
    const Tensor flat = torch::cat(parts).requires_grad_(true);
    const Tensor params = flat.narrow(0, 7, flat.numel() - 7);
    const Tensor x0 = 2 * torch::randn({37, in});
    const Tensor weights = torch::randn({37, c.out});

    const Tensor x1 = x0.clone().requires_grad_(true);
    const Tensor expectedY = mlp->forward(x1);
    (expectedY * weights).sum().backward();

    FusedMlp fused(in, c.hidden, c.out, c.activation, c.layerNorm);
    ASSERT_EQ(fused.numParameters(), params.numel());
    const Tensor x2 = x0.clone().requires_grad_(true);
    const Tensor y = fused.forward(x2, params);
    (y * weights).sum().backward();

    EXPECT_LT(maxAbs(y - expectedY), 1e-5 * (1 + maxAbs(expectedY)));
    EXPECT_LT(maxAbs(x2.grad() - x1.grad()), 1e-5 * (1 + maxAbs(x1.grad())));
    std::vector<Tensor> grads;
    for (const auto& p : mlp->parameters()) grads.push_back(p.grad().reshape(-1));
    const Tensor expected = torch::cat(grads);
    const Tensor got = flat.grad();
    EXPECT_LT(maxAbs(got.narrow(0, 7, expected.numel()) - expected), 1e-5 * (1 + maxAbs(expected)))
        << "largest parameter gradient error";
    EXPECT_EQ(maxAbs(got.narrow(0, 0, 7)), 0.0) << "values outside the Mlp's";
  }
}

TEST(FusedMlp, BatchDimensionsFrozenParametersAndCalls) {
  torch::manual_seed(6);
  const std::vector<int> hidden = {8, 8};
  Mlp mlp(5, hidden, 2, "elu", true);
  std::vector<Tensor> parts;
  for (const auto& p : mlp->parameters()) parts.push_back(p.detach().reshape(-1));
  const Tensor params = torch::cat(parts);  // no gradient asked for
  FusedMlp fused(5, hidden, 2, "elu", true);

  // [T, N, in] inputs as the rollout stacks them; only the input's gradient.
  const Tensor x = torch::randn({3, 4, 5}, torch::requires_grad());
  const Tensor y = fused.forward(x, params);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_LT(maxAbs(y - mlp->forward(x)), 1e-5);
  // Two calls in one graph (a window of steps), each with its own saved activations.
  const Tensor x2 = torch::randn({4, 5}, torch::requires_grad());
  const Tensor loss = y.square().sum() + fused.forward(x2, params).sum();
  loss.backward();
  const Tensor xa = x.detach().clone().requires_grad_(true);
  const Tensor xb = x2.detach().clone().requires_grad_(true);
  (mlp->forward(xa).square().sum() + mlp->forward(xb).sum()).backward();
  EXPECT_LT(maxAbs(x.grad() - xa.grad()), 1e-5);
  EXPECT_LT(maxAbs(x2.grad() - xb.grad()), 1e-5);

  EXPECT_THROW(fused.forward(torch::randn({4, 6}), params), std::invalid_argument);
  EXPECT_THROW(fused.forward(x.detach().to(torch::kDouble), params), std::invalid_argument);
  EXPECT_THROW(fused.forward(x.detach(), params.narrow(0, 0, 10)), std::invalid_argument);
  EXPECT_THROW(fused.forward(x.detach(), torch::cat({params, params})), std::invalid_argument);
}

// The input and parameter gradients of a multi-output network (the actor's shape; MlpRegression's
// test covers one output and the parameters only) against central differences of the same
// network in double, along random directions.
TEST(FusedMlp, GradientsMatchFiniteDifferences) {
  torch::manual_seed(7);
  const int in = 6, out = 4;
  const std::vector<int> hidden{8, 8};
  for (const char* activation : {"elu", "tanh"}) {
    SCOPED_TRACE(activation);
    Mlp mlpD(in, hidden, out, activation, true);
    mlpD->to(torch::kDouble);
    std::vector<Tensor> parts;
    {
      torch::NoGradGuard g;
      for (auto& p : mlpD->parameters()) {
        p.add_(0.1 * torch::randn_like(p));
        parts.push_back(p.detach().reshape(-1));
      }
    }
    const Tensor pD = torch::cat(parts);
    const Tensor xD = torch::randn({10, in}, torch::kDouble);
    const Tensor w = torch::randn({10, out}, torch::kDouble);
    // L = sum(w * f(x)^2): a loss whose gradient differs per output.
    auto lossAt = [&](const Tensor& flat, const Tensor& x) {
      torch::NoGradGuard g;
      int64_t at = 0;
      for (auto& p : mlpD->parameters()) {
        p.copy_(flat.narrow(0, at, p.numel()).view(p.sizes()));
        at += p.numel();
      }
      return (w * mlpD->forward(x).square()).sum().item<double>();
    };

    FusedMlp fused(in, hidden, out, activation, true);
    const Tensor params = pD.to(torch::kFloat).requires_grad_(true);
    const Tensor x = xD.to(torch::kFloat).requires_grad_(true);
    (w.to(torch::kFloat) * fused.forward(x, params).square()).sum().backward();

    const double h = 1e-6;
    for (int k = 0; k < 4; ++k) {
      const Tensor dp = torch::randn_like(pD), dx = torch::randn_like(xD);
      const double fdP = (lossAt(pD + h * dp, xD) - lossAt(pD - h * dp, xD)) / (2 * h);
      const double fdX = (lossAt(pD, xD + h * dx) - lossAt(pD, xD - h * dx)) / (2 * h);
      EXPECT_NEAR((params.grad().to(torch::kDouble) * dp).sum().item<double>(), fdP,
                  1e-4 * (1 + std::abs(fdP)));
      EXPECT_NEAR((x.grad().to(torch::kDouble) * dx).sum().item<double>(), fdX,
                  1e-4 * (1 + std::abs(fdX)));
    }
  }
}
