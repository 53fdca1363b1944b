// TD(lambda) targets and GAE: the reference implementations' published numbers
// (reference/algorithms.md 1.6 and 3.3) and a brute-force evaluation of the definitions (the
// lambda-weighted average of n-step returns; the discounted sum of TD errors) on random data with
// random segment ends.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "algorithms/returns.h"

using namespace diffloco::algorithms;
using torch::Tensor;

namespace {
Tensor col(std::vector<double> v) { return torch::tensor(v, torch::kDouble).unsqueeze(1); }
Tensor dones(std::vector<int> v) {
  std::vector<double> d(v.begin(), v.end());
  return torch::tensor(d, torch::kDouble).unsqueeze(1).to(torch::kBool);
}
void expectColumn(const Tensor& t, std::vector<double> v, double tol) {
  ASSERT_EQ(t.size(0), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(t[i][0].item<double>(), v[i], tol) << i;
}
}  // namespace

TEST(Returns, TdLambdaReferenceNumbers) {
  const Tensor r = col({1, 2, 3}), v = col({0.5, 1.0, 1.5});
  expectColumn(lambdaReturns(r, v, dones({0, 0, 1}), 0.99, 0.95), {6.919468, 6.267642, 4.485}, 1e-6);
  expectColumn(lambdaReturns(r, v, dones({1, 0, 1}), 0.99, 0.95), {1.495, 6.267642, 4.485}, 1e-6);
  // The last row ends the window whatever its flag.
  expectColumn(lambdaReturns(r, v, dones({0, 0, 0}), 0.99, 0.95), {6.919468, 6.267642, 4.485}, 1e-6);
  // lambda = 0: one-step targets; lambda = 1: Monte-Carlo returns bootstrapped at the end.
  expectColumn(lambdaReturns(r, v, dones({0, 0, 1}), 0.9, 0.0), {1.45, 2.9, 4.35}, 1e-12);
  expectColumn(lambdaReturns(r, v, dones({0, 0, 1}), 0.9, 1.0),
               {1 + 0.9 * 2 + 0.81 * 3 + 0.729 * 1.5, 2 + 0.9 * 3 + 0.81 * 1.5, 3 + 0.9 * 1.5}, 1e-12);
}

TEST(Returns, GaeReferenceNumbers) {
  // rsl_rl tests/algorithms/test_ppo.py: no dones, V_last = 2.
  const Tensor r = col({1, 2, 3}), v = col({0.5, 1, 1.5});
  const Tensor adv = gaeAdvantages(r, v, col({1, 1.5, 2}), dones({0, 0, 0}), 0.99, 0.95);
  expectColumn(adv, {6.905343, 5.75794, 3.48}, 1e-6);
  expectColumn(adv + v, {7.405343, 6.75794, 4.98}, 1e-6);
  // A termination at t = 0 (its next value is 0), V_last = 3.
  const Tensor r2 = col({1, 2}), v2 = col({0.5, 1});
  expectColumn(gaeAdvantages(r2, v2, col({0, 3}), dones({1, 0}), 0.99, 0.95) + v2, {1.0, 4.97}, 1e-12);
}

TEST(Returns, MatchTheDefinitionsOnRandomData) {
  torch::manual_seed(4);
  const int64_t T = 9, N = 5;
  const double g = 0.97, l = 0.8;
  const Tensor r = torch::randn({T, N}, torch::kDouble), vn = torch::randn({T, N}, torch::kDouble);
  const Tensor v = torch::randn({T, N}, torch::kDouble);
  const Tensor d = torch::rand({T, N}, torch::kDouble) < 0.25;
  const Tensor y = lambdaReturns(r, vn, d, g, l);
  const Tensor adv = gaeAdvantages(r, v, vn, d, g, l);
  for (int64_t e = 0; e < N; ++e) {
    for (int64_t t = 0; t < T; ++t) {
      // Steps to the segment end: m such that t + m - 1 is the first done (or T - 1).
      int64_t m = 1;
      while (t + m - 1 < T - 1 && !d[t + m - 1][e].item<bool>()) ++m;
      // n-step returns G^(n) = sum_{k<n} g^k r_{t+k} + g^n V'_{t+n-1}, n = 1..m.
      std::vector<double> G(m + 1);
      for (int64_t n = 1; n <= m; ++n) {
        double s = 0;
        for (int64_t k = 0; k < n; ++k) s += std::pow(g, k) * r[t + k][e].item<double>();
        G[n] = s + std::pow(g, n) * vn[t + n - 1][e].item<double>();
      }
      double lam = 0;
      for (int64_t n = 1; n < m; ++n) lam += (1 - l) * std::pow(l, n - 1) * G[n];
      lam += std::pow(l, m - 1) * G[m];
      EXPECT_NEAR(y[t][e].item<double>(), lam, 1e-10) << t << "," << e;
      // GAE: sum_k (g l)^k delta_{t+k} inside the segment.
      double a = 0;
      for (int64_t k = 0; k < m; ++k) {
        const double delta = r[t + k][e].item<double>() + g * vn[t + k][e].item<double>() -
                             v[t + k][e].item<double>();
        a += std::pow(g * l, k) * delta;
      }
      EXPECT_NEAR(adv[t][e].item<double>(), a, 1e-10) << t << "," << e;
    }
  }
}
