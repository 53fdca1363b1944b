// Tree-sparse factorization H = L^T D L (Featherstone, "Efficient factorization of the joint-space
// inertia matrix for branched kinematic trees", 2005): with parents numbered before children the
// factor has no fill-in outside the tree's ancestor pattern, so each solve costs O(n * depth).
#pragma once

#include "sim/data.h"

namespace diffloco::sim {

// Factors data.H into data.LD (strict lower part L, diagonal D).
void factorize(const Model& model, Data& data);

// x <- L^-T x (back substitution from the leaves to the root).
void solveLt(const Model& model, const Data& data, Eigen::Ref<VecX> x);
// x <- L^-1 x (forward substitution from the root to the leaves).
void solveL(const Model& model, const Data& data, Eigen::Ref<VecX> x);
// x <- H^-1 x.
void solve(const Model& model, const Data& data, Eigen::Ref<VecX> x);

}  // namespace diffloco::sim
