// Internals of sim/adaptive.cpp shared with sim/adaptive_vjp.cpp: the Dormand-Prince 5(4) tableau,
// the penalty law's switching functions, the model packed for a size class with the integrator's
// scratch, and the integration loops on the stacked state x = (q, v).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/adaptive.h"
#include "sim/pack.h"
#include "sim/soft_dynamics.h"

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
inline void footSwitches(const FixedOptions& c, double d, const Vec3& vc, double* s) {
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

// Switching values (footSwitches) of each sphere in t's contact set, and its normal velocity, at
// velocity v: S (3 per sphere) and vn (one per sphere), NaN for a sphere not in the set.
template <class D>
void sphereSwitches(const SoftDynamicsTape<D>& t, const FixedOptions& o, const double* v,
                    int nspheres, double* S, double* vn) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int r = 0; r < 3 * nspheres; ++r) S[r] = nan;
  for (int a = 0; a < nspheres; ++a) vn[a] = nan;
  for (int a = 0; a < t.fc.nc; ++a) {
    const int s = t.fc.active[a];
    Vec3 vc = Vec3::Zero();
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) vc[r] += t.fc.Jc[3 * a + r][k] * v[k];
    vn[s] = vc[0];
    footSwitches(o, t.fc.contact[a].depth, vc, S + 3 * s);
  }
}

// The model, options and ground of an env step packed for size class D: the soft model with
// every sphere in the contact set (everySphere).
template <class D>
struct Packed {
  StepModel<D> m;
  FixedOptions o;
  HeightFieldView hf;
  Packed(const Model& model, const SimOptions& opt) : m(toStepModel<D>(model)), hf{} {
    SimOptions fixed = opt;  // the stages' options; the integrator is this one
    fixed.contact.integrator = Integrator::Fixed;
    fixed.contact.model = ContactModel::Soft;
    o = toStepOptions(fixed);
    hf = toView(opt.contact.terrain.get());
  }
};

// The adaptive loop's and the reverse sweep's scratch for size class D, sized for a model.
template <class D>
struct Scratch final : AdaptiveData::Scratch {
  static_assert(D::MAXSPHERES <= 32, "the sweep keeps per-sphere switch sides in 32-bit masks");
  int nx, nf;
  MatX K, F, S, Vn;  // per stage (7 columns): derivative, sphere forces, switch values, v_n
  VecX x, xs, xn, sc, x0, x1;
  std::uint64_t modes[7] = {};
  // The reverse sweep: one RK step's stage states and derivatives and their adjoints, and the
  // tapes of its six stages and of a touchdown's dynamics.
  MatX X, Kbar;
  VecX raw, Xbar, xdot;
  std::unique_ptr<SoftDynamicsTape<D>> tape[7];
  std::vector<double> steps;
  std::vector<VecX> checkpoints;
  explicit Scratch(const Model& model)
      : nx(model.nq() + model.nv()),
        nf(model.nspheres()),
        K(nx, 7),
        F(3 * nf, 7),
        S(3 * nf, 7),
        Vn(nf, 7),
        x(nx),
        xs(nx),
        xn(nx),
        sc(nx),
        x0(nx),
        x1(nx),
        X(nx, 6),
        Kbar(nx, 6),
        raw(nx),
        Xbar(nx),
        xdot(nx) {
    for (auto& t : tape) t = std::make_unique<SoftDynamicsTape<D>>();
  }
};

// data's scratch for size class D and the model's sizes, made on first use.
template <class D>
Scratch<D>& scratchFor(const Model& model, AdaptiveData& data) {
  auto* s = dynamic_cast<Scratch<D>*>(data.scratch.get());
  if (!s || s->nx != model.nq() + model.nv() || s->nf != model.nspheres()) {
    auto made = std::make_unique<Scratch<D>>(model);
    s = made.get();
    data.scratch = std::move(made);
    data.footImpulse.setZero(3 * model.nspheres());
    data.depth.setZero(model.nspheres());
  }
  return *s;
}

// f(D{}) for the model's size class: Quadruped, else SingleBody; a model of neither is an error
// that names why.
template <class F>
decltype(auto) withSizeClass(const Model& model, F&& f) {
  const std::string quadruped = notInStepModel<Quadruped>(model);
  if (quadruped.empty()) return f(Quadruped{});
  const std::string singleBody = notInStepModel<SingleBody>(model);
  if (singleBody.empty()) return f(SingleBody{});
  throw std::invalid_argument(
      "adaptive integration: the model fits no size class of the stages: Quadruped: " + quadruped +
      "; SingleBody: " + singleBody);
}

// The adaptive loop from x0 over opt.dt into xOut; returns the number of accepted steps. Fills
// data (statistics, footImpulse, depth; mode mixed, not reset) and, when given, the accepted step
// sizes and the state at the start of each accepted step (checkpoints[n] for n < accepted; the
// vector is overwritten in place and may hold stale entries beyond).
template <class D>
int integrateAdaptive(const Packed<D>& p, const SimOptions& opt, AdaptiveData& data, Scratch<D>& W,
                      const VecX& x0, const double* qTarget, VecX& xOut, std::vector<double>* steps,
                      std::vector<VecX>* checkpoints);

// The same steps with given sizes, no error control (mode mixed).
template <class D>
void integrateFrozen(const Packed<D>& p, AdaptiveData& data, Scratch<D>& W, const VecX& x0,
                     const double* qTarget, const std::vector<double>& steps, VecX& xOut);

}  // namespace diffloco::sim::rk
