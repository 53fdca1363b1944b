// The soft model's penalty law (locomotion paper, eq. 17-18) at one contact, written once for
// the fixed-step and adaptive integrators and their reverse passes:
//   f_n = kp d - kd min(v_n, 0)                      d: penetration depth, v_n < 0: approaching
//   f_t = -v_t / |v_t| min(kf |v_t|, mu f_n)         viscous below the Coulomb cone, on it above
// Forces and velocities are in the contact's (normal, tangent1, tangent2) coordinates.
#pragma once

#include "sim/options.h"
#include "sim/spatial.h"
#include "sim/step_vjp.h"

namespace diffloco::sim {

// The law's two switches. The forward takes them from the state (softBranches); a reverse pass
// may pin them to the side an event located (adaptive_vjp.cpp).
struct SoftBranches {
  bool approaching = false;  // v_n < 0: the damping term is on
  bool viscous = true;       // kf |v_t| <= mu f_n: viscous friction, not the cone
  int mode() const { return 1 + approaching + 2 * viscous; }  // Data::mixMode's code
};

inline double softNormalForce(const ContactOptions& c, double depth, double vn, bool approaching) {
  return c.softKp * depth - (approaching ? c.softKd * vn : 0.0);
}

inline SoftBranches softBranches(const ContactOptions& c, double depth, const Vec3& vc) {
  SoftBranches b;
  b.approaching = vc[0] < 0;
  b.viscous =
      c.softKf * norm2(vc[1], vc[2]) <= c.mu * softNormalForce(c, depth, vc[0], b.approaching);
  return b;
}

// The force at the given branches; f_t is written without the division at v_t = 0.
inline Vec3 softPenaltyForce(const ContactOptions& c, double depth, const Vec3& vc,
                             SoftBranches b) {
  Vec3 f;
  f[0] = softNormalForce(c, depth, vc[0], b.approaching);
  const double k = b.viscous ? c.softKf : c.mu * f[0] / norm2(vc[1], vc[2]);
  f[1] = -k * vc[1];
  f[2] = -k * vc[2];
  return f;
}

// Reverse of softPenaltyForce at the same branches: from the force's adjoint fb, adds the
// adjoints of the depth and the contact velocity to depthBar and vcBar, and those of the
// coefficients (kp, kd, kf, mu) to p.
inline void softPenaltyForceVjp(const ContactOptions& c, double depth, const Vec3& vc,
                                SoftBranches b, const Vec3& f, Vec3 fb, double& depthBar,
                                Vec3& vcBar, ParamGrad& p) {
  if (b.viscous) {
    vcBar[1] -= c.softKf * fb[1];
    vcBar[2] -= c.softKf * fb[2];
    p.softKf -= vc[1] * fb[1] + vc[2] * fb[2];
  } else {  // f_t = -mu f_n e, e = v_t / |v_t|
    const double vt = norm2(vc[1], vc[2]);
    const Eigen::Vector2d e(vc[1] / vt, vc[2] / vt), ftb(fb[1], fb[2]);
    const double proj = ftb.dot(e);
    fb[0] -= c.mu * proj;  // from here on fb[0] is the normal force's adjoint, friction's included
    p.mu -= f[0] * proj;
    const Eigen::Vector2d vtb = -c.mu * f[0] / vt * (ftb - proj * e);
    vcBar[1] += vtb[0];
    vcBar[2] += vtb[1];
  }
  depthBar += c.softKp * fb[0];
  p.softKp += depth * fb[0];
  if (b.approaching) {
    p.softKd -= vc[0] * fb[0];
    vcBar[0] -= c.softKd * fb[0];
  }
}

}  // namespace diffloco::sim
