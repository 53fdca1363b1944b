#include "sim/cholesky.h"

namespace diffloco::sim {

void factorize(const Model& model, Data& data) {
  MatX& A = data.LD;
  A = data.H;
  const auto& lam = model.dofParent;
  for (int k = model.nv() - 1; k >= 0; --k) {
    const double dk = A(k, k);
    for (int i = lam[k]; i >= 0; i = lam[i]) {
      const double a = A(k, i) / dk;
      for (int j = i; j >= 0; j = lam[j]) A(i, j) -= a * A(k, j);
      A(k, i) = a;
    }
  }
}

void solveLt(const Model& model, const Data& data, Eigen::Ref<VecX> x) {
  const auto& lam = model.dofParent;
  for (int k = model.nv() - 1; k >= 0; --k)
    for (int i = lam[k]; i >= 0; i = lam[i]) x[i] -= data.LD(k, i) * x[k];
}

void solveL(const Model& model, const Data& data, Eigen::Ref<VecX> x) {
  const auto& lam = model.dofParent;
  for (int k = 0; k < model.nv(); ++k)
    for (int i = lam[k]; i >= 0; i = lam[i]) x[k] -= data.LD(k, i) * x[i];
}

void solve(const Model& model, const Data& data, Eigen::Ref<VecX> x) {
  solveLt(model, data, x);
  for (int k = 0; k < model.nv(); ++k) x[k] /= data.LD(k, k);
  solveL(model, data, x);
}

}  // namespace diffloco::sim
