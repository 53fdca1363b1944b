// Quaternions as plain 4-vectors in (w, x, y, z) layout, the layout of the base orientation
// q[3:7]: the Hamilton product and the conjugate that the reverse passes (and sysid's state
// perturbations) differentiate through. Eigen::Quaterniond stores (x, y, z, w) and normalises in
// places where an adjoint must not.
#pragma once

#include <Eigen/Core>

namespace diffloco::sim {

using Vec4 = Eigen::Vector4d;

inline Vec4 quatMul(const Vec4& a, const Vec4& b) {
  return Vec4(a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
              a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
              a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
              a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]);
}

inline Vec4 quatConj(const Vec4& a) { return Vec4(a[0], -a[1], -a[2], -a[3]); }

}  // namespace diffloco::sim
