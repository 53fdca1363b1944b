// Moving a configuration along a velocity on the configuration manifold.
#pragma once

#include "sim/model.h"

namespace diffloco::sim {

// qOut = q (+) dv, with dv a displacement in velocity coordinates (v * dt):
//   orientation: quat * exp(dw) (body-frame rotation vector), renormalised;
//   base position: p + dv_lin (world frame);
//   joints: q + dv.
// qOut may alias q.
void integrate(const Model& model, const Eigen::Ref<const VecX>& q,
               const Eigen::Ref<const VecX>& dv, Eigen::Ref<VecX> qOut);

// Quaternion of the rotation vector w (exact exponential map).
Quat quatExp(const Vec3& w);

}  // namespace diffloco::sim
