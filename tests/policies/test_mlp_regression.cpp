// MlpRegression against torch's autograd on the same Mlp module: loss and every parameter's
// gradient, for each activation, with and without LayerNorm, on a subset of rows given in any
// order; and a finite-difference check of the loss in double through the module.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "policies/actor_critic.h"
#include "policies/mlp_regression.h"

using namespace diffloco::policies;
using torch::Tensor;

namespace {

struct Case {
  std::string activation;
  bool layerNorm;
  std::vector<int> hidden;
};

// The module's parameters in one flat buffer, in parameters() order.
Tensor flatParameters(Mlp& mlp) {
  std::vector<Tensor> parts;
  for (const auto& p : mlp->parameters()) parts.push_back(p.detach().reshape(-1));
  return torch::cat(parts);
}

Tensor flatGradients(Mlp& mlp) {
  std::vector<Tensor> parts;
  for (const auto& p : mlp->parameters()) parts.push_back(p.grad().reshape(-1));
  return torch::cat(parts);
}

}  // namespace

TEST(MlpRegression, MatchesAutogradForEveryShape) {
  const std::vector<Case> cases = {{"elu", true, {64, 64}},
                                   {"elu", false, {32, 16, 8}},
                                   {"relu", true, {24}},
                                   {"tanh", true, {16, 12}},
                                   {"tanh", false, {20}}};
  torch::manual_seed(3);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.activation + (c.layerNorm ? " + LayerNorm" : ""));
    const int in = 13;
    Mlp mlp(in, c.hidden, 1, c.activation, c.layerNorm);
    {
      // Non-trivial LayerNorm affine parameters (torch initialises them to 1 and 0).
      torch::NoGradGuard g;
      for (auto& p : mlp->parameters()) p.add_(0.1 * torch::randn_like(p));
    }
    const Tensor x = 2 * torch::randn({40, in});
    const Tensor y = torch::randn({40});
    const Tensor rows = torch::tensor(std::vector<int64_t>{7, 3, 39, 0, 12, 12, 25, 8, 30});
    const double denominator = 11.0;  // the minibatch's size across ranks, not the rows here

    const Tensor loss =
        (mlp->forward(x.index_select(0, rows)).squeeze(-1) - y.index_select(0, rows))
            .square()
            .sum() /
        denominator;
    loss.backward();
    const Tensor expected = flatGradients(mlp);

    MlpRegression kernel(in, c.hidden, c.activation, c.layerNorm);
    const Tensor params = flatParameters(mlp).contiguous();
    ASSERT_EQ(kernel.numParameters(), params.numel());
    Tensor grad = torch::full_like(params, 0.5);  // the kernel adds to what is there
    const double l = kernel.lossAndGradient(params.data_ptr<float>(), x.data_ptr<float>(),
                                            y.data_ptr<float>(), rows.data_ptr<int64_t>(),
                                            rows.numel(), denominator, grad.data_ptr<float>());
    EXPECT_NEAR(l, loss.item<double>(), 1e-5 * std::abs(loss.item<double>()));
    const Tensor err = (grad - 0.5 - expected).abs().max();
    EXPECT_LT(err.item<double>(), 1e-5 * (1 + expected.abs().max().item<double>()))
        << "largest gradient error";
    // The same instance again (scratch reused, other rows): the same as autograd.
    const Tensor rows2 = torch::tensor(std::vector<int64_t>{1, 2});
    grad.zero_();
    kernel.lossAndGradient(params.data_ptr<float>(), x.data_ptr<float>(), y.data_ptr<float>(),
                           rows2.data_ptr<int64_t>(), 2, 2.0, grad.data_ptr<float>());
    for (auto& p : mlp->parameters()) p.mutable_grad().zero_();
    ((mlp->forward(x.index_select(0, rows2)).squeeze(-1) - y.index_select(0, rows2))
         .square()
         .sum() /
     2.0)
        .backward();
    EXPECT_LT((grad - flatGradients(mlp)).abs().max().item<double>(), 1e-5);
  }
}

// Independent of autograd: central differences of the loss (the module in double) along random
// directions against the kernel's gradient.
TEST(MlpRegression, GradientMatchesFiniteDifferences) {
  torch::manual_seed(5);
  const int in = 6;
  const std::vector<int> hidden{8, 8};
  Mlp mlp(in, hidden, 1, "elu", true);
  const Tensor x = torch::randn({10, in});
  const Tensor y = torch::randn({10});
  const std::vector<int64_t> rows{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  MlpRegression kernel(in, hidden, "elu", true);
  const Tensor params = flatParameters(mlp).contiguous();
  Tensor grad = torch::zeros_like(params);
  kernel.lossAndGradient(params.data_ptr<float>(), x.data_ptr<float>(), y.data_ptr<float>(),
                         rows.data(), 10, 10.0, grad.data_ptr<float>());

  Mlp mlpD(in, hidden, 1, "elu", true);
  mlpD->to(torch::kDouble);
  const Tensor xD = x.to(torch::kDouble), yD = y.to(torch::kDouble);
  auto lossAt = [&](const Tensor& flat) {
    torch::NoGradGuard g;
    int64_t at = 0;
    for (auto& p : mlpD->parameters()) {
      p.copy_(flat.narrow(0, at, p.numel()).view(p.sizes()));
      at += p.numel();
    }
    return ((mlpD->forward(xD).squeeze(-1) - yD).square().sum() / 10.0).item<double>();
  };
  const Tensor pD = params.to(torch::kDouble);
  for (int k = 0; k < 5; ++k) {
    const Tensor dir = torch::randn_like(pD);
    const double h = 1e-6;
    const double fd = (lossAt(pD + h * dir) - lossAt(pD - h * dir)) / (2 * h);
    const double analytic = (grad.to(torch::kDouble) * dir).sum().item<double>();
    EXPECT_NEAR(analytic, fd, 1e-4 * (1 + std::abs(fd)));
  }
}

TEST(MlpRegression, NonFiniteLossLeavesTheGradientAlone) {
  MlpRegression kernel(2, {4}, "elu", false);
  std::vector<float> params(kernel.numParameters(), 0.1f), grad(kernel.numParameters(), 0.f);
  const std::vector<float> x{1, 2}, y{std::nanf("")};
  const int64_t row = 0;
  EXPECT_TRUE(std::isnan(
      kernel.lossAndGradient(params.data(), x.data(), y.data(), &row, 1, 1.0, grad.data())));
  for (float g : grad) EXPECT_EQ(g, 0.f);
}
