// Adaptive Dormand-Prince 5(4) integration of the soft contact model (see sim/adaptive.h).
#include "sim/adaptive.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sim/adaptive_rk.h"

namespace diffloco::sim {

Integrator parseIntegrator(const std::string& name) {
  if (name == "fixed") return Integrator::Fixed;
  if (name == "adaptive") return Integrator::Adaptive;
  throw std::invalid_argument("unknown integrator '" + name + "' (expected fixed or adaptive)");
}

const char* toString(Integrator i) {
  switch (i) {
    case Integrator::Fixed: return "fixed";
    case Integrator::Adaptive: return "adaptive";
  }
  return "?";
}

AdaptiveData::AdaptiveData(const Model& model)
    : footImpulse(VecX::Zero(3 * model.nspheres())), depth(VecX::Zero(model.nspheres())) {}
AdaptiveData::~AdaptiveData() = default;
AdaptiveData::AdaptiveData(AdaptiveData&&) noexcept = default;
AdaptiveData& AdaptiveData::operator=(AdaptiveData&&) noexcept = default;

namespace {

using rk::Packed;
using rk::Scratch;

// xdot = f(x) (the stages' softDynamics) with its tape in t; returns a fingerprint of the
// piecewise branches taken (actuator clips, penalty regimes). With W, stage i's sphere forces,
// switching values and normal velocities go to W's column i.
template <class D>
std::uint64_t evaluate(const Packed<D>& p, const double* x, const double* qTarget, double* xdot,
                       SoftDynamicsTape<D>& t, Scratch<D>* W = nullptr, int i = 0) {
  softDynamics(p.m, p.o, p.hf, x, qTarget, xdot, t);
  std::uint64_t mode = 0;
  auto mix = [&mode](std::uint64_t value) { mode = (mode ^ value) * 0x100000001b3ull; };
  const double* q = x;  // the joints of q^ are q's
  const double* v = x + D::NQ;
  for (int j = 0; j < D::NJ; ++j) {  // the actuator's clipped or free regime
    const double free = p.o.kp * (qTarget[j] - q[7 + j]) - p.o.kd * v[6 + j];
    const double tau = actuatorTorque(p.o, p.m.effort[j], qTarget[j], q[7 + j], v[6 + j]);
    mix(free == tau ? 32 : 33 + (tau > free));
  }
  if (W) {
    rk::sphereSwitches(t, p.o, v, W->nf, W->S.col(i).data(), W->Vn.col(i).data());
    W->F.col(i).setZero();
  }
  for (int a = 0; a < t.fc.nc; ++a) {
    const double d = t.fc.contact[a].depth;
    if (d < 0) {
      mix(0);
      continue;
    }
    V3 vc = zero3();
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) vc[r] += t.fc.Jc[3 * a + r][k] * v[k];
    const bool approaching = vc[0] < 0;
    const double fn = p.o.softKp * d - (approaching ? p.o.softKd * vc[0] : 0.0);
    const bool viscous = p.o.softKf * norm2(vc[1], vc[2]) <= p.o.mu * fn;
    mix(1 + approaching + 2 * viscous);
    if (W) {
      const V3 f = softForce(p.o, d, vc);
      for (int r = 0; r < 3; ++r) W->F(3 * t.fc.active[a] + r, i) = f[r];
    }
  }
  return mode;
}

// Stages 2..6 of a step of size h from W.x with W.K.col(0) = f(W.x) already set; the 5th-order
// solution (before renormalisation) goes to W.xn.
template <class D>
void stages(const Packed<D>& p, const double* qTarget, double h, Scratch<D>& W, bool forces) {
  for (int i = 1; i < 6; ++i) {
    W.xs = W.x;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) W.xs.noalias() += (h * rk::A[i][j]) * W.K.col(j);
    W.modes[i] =
        evaluate(p, W.xs.data(), qTarget, W.K.col(i).data(), *W.tape[0], forces ? &W : nullptr, i);
  }
  W.xn = W.x;
  for (int i = 0; i < 6; ++i)
    if (rk::B[i] != 0) W.xn.noalias() += (h * rk::B[i]) * W.K.col(i);
}

// Hairer's RMS norm of e scaled by atol + rtol max(|a|, |b|).
double errorNorm(const VecX& e, const VecX& a, const VecX& b, const AdaptiveOptions& o) {
  double s = 0;
  for (int i = 0; i < e.size(); ++i) {
    const double sc = o.atol + o.rtol * std::max(std::abs(a[i]), std::abs(b[i]));
    s += (e[i] / sc) * (e[i] / sc);
  }
  return std::sqrt(s / e.size());
}

// Whether the stages of the trial step lie on both sides of a switch (values within its dead band
// count as on either side; undefined values are skipped).
template <class D>
bool straddles(const Scratch<D>& W, const double tol[3]) {
  for (int r = 0; r < W.S.rows(); ++r) {
    bool in = false, out = false;
    for (int i = 0; i < 7; ++i) {
      const double v = W.S(r, i);
      in = in || v > tol[r % 3];
      out = out || v < -tol[r % 3];
    }
    if (in && out) return true;
  }
  return false;
}

// Fraction of the trial step at which the first switch is crossed: for a depth, the cubic Hermite
// interpolant between the step's ends (d' = -vn); for the friction and approach switches, linear
// interpolation. 0.5 if no switch's ends differ (a stage grazed a switch inside the step).
template <class D>
double eventFraction(const Scratch<D>& W, double h, const double tol[3]) {
  double best = 1;
  bool found = false;
  for (int r = 0; r < W.S.rows(); ++r) {
    const int kind = r % 3, a = r / 3;
    const double s0 = W.S(r, 0), s1 = W.S(r, 6);
    if (!((s0 < -tol[kind] && s1 > tol[kind]) || (s0 > tol[kind] && s1 < -tol[kind]))) continue;
    if (kind != 0) {
      best = std::min(best, s0 / (s0 - s1));
      found = true;
      continue;
    }
    const double m0 = -h * W.Vn(a, 0), m1 = -h * W.Vn(a, 6);
    auto p = [&](double s) {
      const double s2 = s * s, s3 = s2 * s;
      return (2 * s3 - 3 * s2 + 1) * s0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * s1 +
             (s3 - s2) * m1;
    };
    // First sign change away from the start's side, on a grid, then bisection.
    double lo = 0, hi = -1;
    const int n = 64;
    for (int k = 1; k <= n; ++k) {
      const double s = static_cast<double>(k) / n;
      if (p(s) * s0 <= 0) {
        hi = s;
        lo = static_cast<double>(k - 1) / n;
        break;
      }
    }
    if (hi < 0) continue;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (p(mid) * s0 > 0 ? lo : hi) = mid;
    }
    best = std::min(best, hi);
    found = true;
  }
  return found ? best : 0.5;
}

// Hairer's estimate of the first step (Hairer, Norsett, Wanner I, II.4) from W.x and its
// derivative in W.K.col(0); one more evaluation of the dynamics.
template <class D>
double estimateFirstStep(const Packed<D>& p, const SimOptions& opt, AdaptiveData& data,
                         const double* qTarget, Scratch<D>& W, double hMax) {
  const AdaptiveOptions& o = opt.contact.adaptive;
  W.sc = (o.atol + o.rtol * W.x.array().abs()).matrix();
  const double n = static_cast<double>(W.x.size());
  const double d0 = std::sqrt((W.x.array() / W.sc.array()).square().sum() / n);
  const double d1 = std::sqrt((W.K.col(0).array() / W.sc.array()).square().sum() / n);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = std::min(h0, hMax);
  W.xs = W.x + h0 * W.K.col(0);
  evaluate(p, W.xs.data(), qTarget, W.K.col(1).data(), *W.tape[0]);
  ++data.adaptive.evaluations;
  const double d2 =
      std::sqrt(((W.K.col(1) - W.K.col(0)).array() / W.sc.array()).square().sum() / n) / h0;
  const double dm = std::max(d1, d2);
  const double h1 = dm <= 1e-15 ? std::max(1e-6, 1e-3 * h0) : std::pow(0.01 / dm, 1.0 / 5.0);
  return std::min(100 * h0, h1);
}

// Accepts the step of size h to W.xn: its impulses and contact modes into data, the step and
// its starting point recorded, W.x moved to the new point (quaternion renormalised) with its
// first stage the last one's.
template <class D>
void acceptStep(AdaptiveData& data, Scratch<D>& W, double h, std::vector<double>* steps,
                std::vector<VecX>* checkpoints) {
  AdaptiveStats& st = data.adaptive;
  const int nf = W.nf, nq = D::NQ;
  if (steps) steps->push_back(h);
  if (checkpoints) {  // kept, not cleared, between calls: no allocation once grown
    if (static_cast<int>(checkpoints->size()) > st.accepted)
      (*checkpoints)[st.accepted] = W.x;
    else
      checkpoints->push_back(W.x);
  }
  for (int i = 0; i < 6; ++i) {
    data.mixMode(W.modes[i]);
    if (rk::B[i] != 0)
      for (int f = 0; f < 3 * nf; ++f) data.footImpulse[f] += h * rk::B[i] * W.F(f, i);
  }
  st.minStep = st.accepted ? std::min(st.minStep, h) : h;
  st.maxStep = std::max(st.maxStep, h);
  ++st.accepted;
  VecX& x = W.x;
  x = W.xn;
  x.segment<4>(3) /= x.segment<4>(3).norm();
  // First same as last, with the quaternion rate of the renormalised quaternion.
  MatX& K = W.K;
  K.col(0) = K.col(6);
  K.col(0).segment<4>(3) = rk::quatRate(x.segment<4>(3), x.segment<3>(nq + 3));
  W.F.col(0) = W.F.col(6);
  W.S.col(0) = W.S.col(6);
  W.Vn.col(0) = W.Vn.col(6);
  W.modes[0] = W.modes[6];
}

}  // namespace

namespace rk {

template <class D>
int integrateAdaptive(const Packed<D>& p, const SimOptions& opt, AdaptiveData& data, Scratch<D>& W,
                      const VecX& x0, const double* qTarget, VecX& xOut, std::vector<double>* steps,
                      std::vector<VecX>* checkpoints) {
  const AdaptiveOptions& o = opt.contact.adaptive;
  const double T = opt.dt;
  const double hMax = o.maxStep > 0 ? std::min(o.maxStep, T) : T;
  const double hMin = std::min(std::max(o.minStep, 1e-14), hMax);
  AdaptiveStats& st = data.adaptive;
  st = AdaptiveStats{};
  data.footImpulse.setZero();
  if (steps) steps->clear();

  W.x = x0;
  W.modes[0] = evaluate(p, W.x.data(), qTarget, W.K.col(0).data(), *W.tape[0], &W, 0);
  st.evaluations = 1;

  // First step: given, or Hairer's estimate.
  double h = o.initialStep;
  if (!(h > 0)) h = estimateFirstStep(p, opt, data, qTarget, W, hMax);
  h = std::clamp(h, hMin, hMax);

  const double b1 = (o.pcoeff + o.icoeff) / 5.0, b2 = o.pcoeff / 5.0;
  double tol[3];
  switchTolerances(opt.contact, tol);
  const double safety = 0.9, facMin = 0.2, facMax = 10.0;
  double t = 0, errPrev = 1e-4;
  bool rejectedLast = false, eventLimited = false;
  double hBeforeEvent = 0;
  int attempts = 0, eventTries = 0;
  while (t < T) {
    bool last = false, forced = false;
    if (attempts >= o.maxSteps) {
      forced = true;
      st.capHit = true;
    }
    // Stretch a step that would leave a sliver before the env step's end (not while homing in on
    // an event: that could stretch the step back across the switch).
    if (forced || t + (eventLimited ? 1.0 : 1.01) * h >= T) {
      h = T - t;
      last = true;
    }
    stages(p, qTarget, h, W, true);
    // FSAL stage at the new point: the error estimate, and the next step's first stage.
    W.modes[6] = evaluate(p, W.xn.data(), qTarget, W.K.col(6).data(), *W.tape[0], &W, 6);
    st.evaluations += 6;
    ++attempts;
    W.xs.setZero();
    for (int i = 0; i < 7; ++i)
      if (E[i] != 0) W.xs.noalias() += (h * E[i]) * W.K.col(i);
    const double err = errorNorm(W.xs, W.x, W.xn, o);
    const bool atMin = h <= hMin * (1 + 1e-12);
    // A step whose stages straddle a contact switch is retaken, shortened to end on the switch
    // (at most 8 tries per step; a step at the minimum size is accepted as it is).
    if (err <= 1 && !forced && o.locateContacts && !atMin && eventTries < 8 &&
        straddles(W, tol)) {
      if (!eventLimited) hBeforeEvent = h;
      h = std::max(hMin, eventFraction(W, h, tol) * h);
      ++eventTries;
      ++st.rejected;  // a retake, counted with the rejections
      eventLimited = true;
      continue;
    }
    if (err <= 1 || forced || atMin) {
      if (err > 1 && !forced) st.minStepHit = true;
      const bool wasEvent = eventLimited;
      if (eventLimited) ++st.events;
      eventLimited = false;
      eventTries = 0;
      acceptStep(data, W, h, steps, checkpoints);
      t = last ? T : t + h;
      double fac = std::isfinite(err)
                       ? safety * std::pow(std::max(err, 1e-10), -b1) * std::pow(errPrev, b2)
                       : facMin;
      fac = std::clamp(fac, facMin, rejectedLast ? 1.0 : facMax);
      errPrev = std::max(err, 1e-4);
      // After an event step, resume with what is left of the step that was cut short, rather
      // than growing from the (possibly tiny) event step.
      h = std::clamp(wasEvent ? std::max(h * fac, hBeforeEvent - h) : h * fac, hMin, hMax);
      rejectedLast = false;
      if (!W.x.allFinite()) break;
    } else {
      ++st.rejected;
      const double fac = std::isfinite(err) ? std::max(facMin, safety * std::pow(err, -0.2)) : facMin;
      h = std::max(h * fac, hMin);
      rejectedLast = true;
    }
  }
  if (st.capHit) ++data.adaptiveCapHits;
  for (int a = 0; a < W.nf; ++a) data.depth[a] = W.S(3 * a, 0);  // at the end state
  xOut = W.x;
  return st.accepted;
}

template <class D>
void integrateFrozen(const Packed<D>& p, AdaptiveData& data, Scratch<D>& W, const VecX& x0,
                     const double* qTarget, const std::vector<double>& steps, VecX& xOut) {
  W.x = x0;
  data.footImpulse.setZero();
  for (double h : steps) {
    W.modes[0] = evaluate(p, W.x.data(), qTarget, W.K.col(0).data(), *W.tape[0]);
    stages(p, qTarget, h, W, false);
    for (int i = 0; i < 6; ++i) data.mixMode(W.modes[i]);
    VecX& x = W.x;
    x = W.xn;
    x.segment<4>(3) /= x.segment<4>(3).norm();
  }
  xOut = W.x;
}

template int integrateAdaptive<Quadruped>(const Packed<Quadruped>&, const SimOptions&,
                                          AdaptiveData&, Scratch<Quadruped>&, const VecX&,
                                          const double*, VecX&, std::vector<double>*,
                                          std::vector<VecX>*);
template int integrateAdaptive<SingleBody>(const Packed<SingleBody>&, const SimOptions&,
                                           AdaptiveData&, Scratch<SingleBody>&, const VecX&,
                                           const double*, VecX&, std::vector<double>*,
                                           std::vector<VecX>*);
template void integrateFrozen<Quadruped>(const Packed<Quadruped>&, AdaptiveData&,
                                         Scratch<Quadruped>&, const VecX&, const double*,
                                         const std::vector<double>&, VecX&);
template void integrateFrozen<SingleBody>(const Packed<SingleBody>&, AdaptiveData&,
                                          Scratch<SingleBody>&, const VecX&, const double*,
                                          const std::vector<double>&, VecX&);

}  // namespace rk

namespace {

// Packs the model for its size class, stacks (q, v) into the scratch's x0, runs
// integrate(packed, scratch) into its x1 (mode reset first) and unstacks that into (qNext, vNext);
// false when the new state is not finite.
template <class F>
bool integrateFrom(const Model& model, const SimOptions& opt, AdaptiveData& data,
                   const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                   const Eigen::Ref<const VecX>& qTarget, Eigen::Ref<VecX> qNext,
                   Eigen::Ref<VecX> vNext, F&& integrate) {
  if (q.size() != model.nq() || v.size() != model.nv() || qTarget.size() != model.nj())
    throw std::invalid_argument("adaptive integration: the state's sizes are not the model's");
  return rk::withSizeClass(model, [&](auto dims) {
    using D = decltype(dims);
    const Packed<D> p(model, opt);
    Scratch<D>& W = rk::scratchFor<D>(model, data);
    W.x0 << q, v;
    data.mode = 0;
    integrate(p, W);
    qNext = W.x1.head(model.nq());
    vNext = W.x1.tail(model.nv());
    return qNext.allFinite() && vNext.allFinite();
  });
}

}  // namespace

bool adaptiveStep(const Model& model, const SimOptions& opt, AdaptiveData& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, Eigen::Ref<VecX> qNext,
                  Eigen::Ref<VecX> vNext, std::vector<double>* steps) {
  return integrateFrom(model, opt, data, q, v, qTarget, qNext, vNext, [&](const auto& p, auto& W) {
    rk::integrateAdaptive(p, opt, data, W, W.x0, qTarget.data(), W.x1, steps, nullptr);
  });
}

bool rkIntegrate(const Model& model, const SimOptions& opt, AdaptiveData& data,
                 const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                 Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext) {
  return integrateFrom(model, opt, data, q, v, qTarget, qNext, vNext, [&](const auto& p, auto& W) {
    rk::integrateFrozen(p, data, W, W.x0, qTarget.data(), steps, W.x1);
  });
}

std::size_t adaptiveCheckpointBytes(const Model& model, int acceptedSteps) {
  return static_cast<std::size_t>(acceptedSteps) * (model.nq() + model.nv() + 1) * sizeof(double);
}

std::size_t adaptiveTapeBytes(const Model& model) {
  return rk::withSizeClass(model,
                           [](auto dims) { return 7 * sizeof(SoftDynamicsTape<decltype(dims)>); });
}

}  // namespace diffloco::sim
