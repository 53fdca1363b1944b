// Recursive Newton-Euler inverse dynamics (Featherstone, RBDA Table 5.1) in body frames.
#pragma once

#include "sim/data.h"

namespace diffloco::sim {

// tau = H(q) a + C(q, v) v + g(q), written to data.tau. Requires forwardKinematics(q).
// Joint damping and actuation are NOT included: callers add them. With a = 0 this gives the bias
// forces h(q, v) that MuJoCo calls qfrc_bias.
void rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& v,
          const Eigen::Ref<const VecX>& a);

// Same with a = 0, without allocating.
void biasForces(const Model& model, Data& data, const Eigen::Ref<const VecX>& v);

}  // namespace diffloco::sim
