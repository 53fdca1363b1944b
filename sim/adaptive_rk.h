// Internals of sim/adaptive.cpp shared with sim/adaptive_vjp.cpp: the Dormand-Prince 5(4) tableau
// and the integration loops on the stacked state x = (q, v).
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "sim/data.h"
#include "sim/options.h"

namespace diffloco::sim::rk {

// Dormand & Prince (1980), as in Hairer's DOPRI5: stages c = (0, 1/5, 3/10, 4/5, 8/9, 1, 1); the
// 5th-order weights B equal the last row of A (first same as last, B[6] = 0); E = B - B_hat, the
// weights of the error estimate against the embedded 4th-order solution.
inline constexpr double A[7][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
inline constexpr double B[7] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784,
                                11.0 / 84, 0};
inline constexpr double E[7] = {71.0 / 57600,      0, -71.0 / 16695, 71.0 / 1920,
                                -17253.0 / 339200, 22.0 / 525, -1.0 / 40};

// 0.5 quat (x) (0, w), quaternions (w, x, y, z).
inline Eigen::Vector4d quatRate(const Eigen::Ref<const Eigen::Vector4d>& q, const Vec3& w) {
  return 0.5 * Eigen::Vector4d(-q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                               q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                               q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
                               q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
}

// The kinks of the penalty force of one foot, as switching functions whose sign picks the smooth
// piece: [0] depth d (in contact iff d >= 0); [1] mu f_n - kf |v_t| (viscous friction iff >= 0);
// [2] -v_n (the approach damping acts iff > 0; only when kd > 0). [1] and [2] are NaN out of
// contact. A located event lands an RK step boundary on a zero of any of them (sim/adaptive.h).
inline void footSwitches(const ContactOptions& c, double d, const Vec3& vc, double* s) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s[0] = d;
  if (d < 0) {
    s[1] = s[2] = nan;
    return;
  }
  const double fn = c.softKp * d - c.softKd * std::min(vc[0], 0.0);
  s[1] = c.mu * fn - c.softKf * norm2(vc[1], vc[2]);
  s[2] = c.softKd > 0 ? -vc[0] : nan;
}
// Dead bands of the three switching functions: values within them count as on the switch.
inline void switchTolerances(const ContactOptions& c, double tol[3]) {
  tol[0] = c.adaptive.contactEventTol;                            // [m]
  tol[1] = std::max(c.softKp, c.softKf) * c.adaptive.contactEventTol;  // [N]
  tol[2] = c.adaptive.contactEventTol / 1e-3;                     // [m/s]: 1e-10 m in 1 ms
}

// The adaptive loop from x0 over opt.dt into xOut; returns the number of accepted steps. Fills
// data.adaptive, data.footImpulse, data.mode (mixed, not reset) and, when given, the accepted step
// sizes and the state at the start of each accepted step (checkpoints[n] for n < accepted; the
// vector is overwritten in place and may hold stale entries beyond).
int integrateAdaptive(const Model& model, const SimOptions& opt, Data& data,
                      const Eigen::Ref<const VecX>& x0, const Eigen::Ref<const VecX>& qTarget,
                      Eigen::Ref<VecX> xOut, std::vector<double>* steps,
                      std::vector<VecX>* checkpoints);

// The same steps with given sizes, no error control.
void integrateFrozen(const Model& model, const SimOptions& opt, Data& data,
                     const Eigen::Ref<const VecX>& x0, const Eigen::Ref<const VecX>& qTarget,
                     const std::vector<double>& steps, Eigen::Ref<VecX> xOut);

}  // namespace diffloco::sim::rk
