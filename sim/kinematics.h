// Forward kinematics: body poses, points on bodies, and point Jacobians.
#pragma once

#include "sim/data.h"

namespace diffloco::sim {

// Base rotation (base -> world) from the quaternion stored in q[3:7] as (w, x, y, z).
Mat3 baseRotation(const Eigen::Ref<const VecX>& q);

// Fills data.X, data.R, data.p for configuration q. The quaternion is used as given (unit norm is
// the caller's business; step() keeps it).
void forwardKinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

// World position of a point given in a body's frame.
inline Vec3 worldPoint(const Data& data, int body, const Vec3& local) {
  return data.R[body] * local + data.p[body];
}

// Jacobian (3 x nv) of the world-frame velocity of the material point of `body` that is currently at
// world position `x`: xdot = J v. Columns of dofs that do not move the body are set to zero.
void pointJacobian(const Model& model, const Data& data, int body, const Vec3& x,
                   Eigen::Ref<Eigen::Matrix<double, 3, Eigen::Dynamic>> J);

}  // namespace diffloco::sim
