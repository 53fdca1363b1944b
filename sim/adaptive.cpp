// Adaptive Dormand-Prince 5(4) integration of the soft contact model (see sim/adaptive.h).
#include "sim/adaptive.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sim/actuator.h"
#include "sim/adaptive_rk.h"
#include "sim/cholesky.h"
#include "sim/contact.h"
#include "sim/crba.h"
#include "sim/kinematics.h"
#include "sim/rnea.h"
#include "sim/soft_contact.h"
#include "sim/workspace.h"

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

std::uint64_t softDynamics(const Model& model, const SimOptions& opt, Data& data,
                           const Eigen::Ref<const VecX>& x, const Eigen::Ref<const VecX>& qTarget,
                           Eigen::Ref<VecX> xdot, VecX* footForce) {
  const int nq = model.nq(), nv = model.nv(), nj = model.nj();
  const ContactOptions& c = opt.contact;
  std::uint64_t mode = 0;
  auto mix = [&mode](std::uint64_t value) { mode = (mode ^ value) * 0x100000001b3ull; };
  const auto v = x.tail(nv);

  // The configuration the dynamics see: quaternion normalised.
  data.qMid = x.head(nq);
  data.qMid.segment<4>(3) /= data.qMid.segment<4>(3).norm();
  const VecX& q = data.qMid;

  actuatorTorques(model, opt.actuator, qTarget, q, v, data.tauJoint);
  for (int j = 0; j < nj; ++j) {  // the actuator's clipped or free regime (as stepDynamics)
    const double free = opt.actuator.kp * (qTarget[j] - q[7 + j]) - opt.actuator.kd * v[6 + j];
    mix(free == data.tauJoint[j] ? 32 : 33 + (data.tauJoint[j] > free));
  }
  forwardKinematics(model, data, q);
  biasForces(model, data, v);  // data.tau = b
  for (int j = 0; j < nj; ++j)
    data.tau[6 + j] += model.joints[j].damping * v[6 + j] - data.tauJoint[j];
  crba(model, data);
  factorize(model, data);

  // Penalty forces of eq. 17-18 at (q, v): the law of step.cpp's softContactForce.
  footGeometry(model, c, data);
  selectContacts(model, c, data);  // soft: every foot
  contactJacobians(model, c, data);
  data.work.setZero();
  if (footForce) footForce->setZero(3 * model.nspheres());
  const int nc = static_cast<int>(data.active.size());
  for (int a = 0; a < nc; ++a) {
    const double d = data.depth[data.active[a]];
    if (d < 0) {
      mix(0);
      continue;
    }
    const auto J = data.Jc.middleRows<3>(3 * a);
    const Vec3 vc = J * v;  // (normal, tangent1, tangent2)
    const SoftBranches b = softBranches(c, d, vc);
    const Vec3 f = softPenaltyForce(c, d, vc, b);
    mix(b.mode());
    data.work.noalias() += J.transpose() * f;
    if (footForce) footForce->segment<3>(3 * data.active[a]) = f;
  }
  // vdot = H^-1 (J^T f - b), kept in data.u for the backward pass.
  data.u = data.work - data.tau;
  solve(model, data, data.u);

  xdot.head<3>() = v.head<3>();
  xdot.segment<4>(3) = rk::quatRate(x.segment<4>(3), v.segment<3>(3));
  xdot.segment(7, nj) = v.tail(nj);
  xdot.tail(nv) = data.u;
  return mode;
}

namespace {

// The adaptive loop's scratch in data's workspace, sized for the model on first use.
AdaptiveScratch& workFor(const Model& model, Data& data) {
  AdaptiveScratch& w = data.workspace().adaptive;
  const int n = model.nq() + model.nv();
  if (n == w.nx && model.nspheres() == w.nf) return w;
  w.nx = n;
  w.nf = model.nspheres();
  w.K.resize(n, 7);
  w.F.resize(3 * w.nf, 7);
  w.S.resize(3 * w.nf, 7);
  w.Vn.resize(w.nf, 7);
  w.x.resize(n), w.xs.resize(n), w.xn.resize(n), w.sc.resize(n);
  return w;
}

// Switching values and normal velocities of stage i, just evaluated in `data` at state xi.
void recordFeet(AdaptiveScratch& W, int i, const ContactOptions& c, const Data& data,
                const Eigen::Ref<const VecX>& xi, int nv) {
  for (int a = 0; a < W.nf; ++a) {  // soft: data.active lists every foot in order
    const Vec3 vc = data.Jc.middleRows<3>(3 * a) * xi.tail(nv);
    W.Vn(a, i) = vc[0];
    double sw[3];
    rk::footSwitches(c, data.depth[a], vc, sw);
    for (int k = 0; k < 3; ++k) W.S(3 * a + k, i) = sw[k];
  }
}

// Stages 2..6 of a step of size h from W.x with W.K.col(0) = f(W.x) already set; the 5th-order
// solution (before renormalisation) goes to W.xn.
void stages(const Model& model, const SimOptions& opt, Data& data,
            const Eigen::Ref<const VecX>& qTarget, double h, AdaptiveScratch& W, bool forces) {
  // The foot forces land in a local vector that borrows W.stageForce's storage (swapped in and
  // back: no allocation). A local rather than a reference into W lets the compiler tell it from
  // data's and W's vectors, as it could the per-thread static this replaced: the generated code
  // (its fused multiply-adds included), and so the results, stay the same to the bit.
  VecX fbuf;
  fbuf.swap(W.stageForce);
  for (int i = 1; i < 6; ++i) {
    W.xs = W.x;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) W.xs.noalias() += (h * rk::A[i][j]) * W.K.col(j);
    W.modes[i] = softDynamics(model, opt, data, W.xs, qTarget, W.K.col(i), forces ? &fbuf : nullptr);
    if (forces) {
      W.F.col(i) = fbuf;
      recordFeet(W, i, opt.contact, data, W.xs, model.nv());
    }
  }
  W.xn = W.x;
  for (int i = 0; i < 6; ++i)
    if (rk::B[i] != 0) W.xn.noalias() += (h * rk::B[i]) * W.K.col(i);
  fbuf.swap(W.stageForce);
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
bool straddles(const AdaptiveScratch& W, const double tol[3]) {
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
double eventFraction(const AdaptiveScratch& W, double h, const double tol[3]) {
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

}  // namespace

namespace {

// Hairer's estimate of the first step (Hairer, Norsett, Wanner I, II.4) from W.x and its
// derivative in W.K.col(0); one more evaluation of the dynamics.
double estimateFirstStep(const Model& model, const SimOptions& opt, Data& data,
                         const Eigen::Ref<const VecX>& qTarget, AdaptiveScratch& W, double hMax) {
  const AdaptiveOptions& o = opt.contact.adaptive;
  W.sc = (o.atol + o.rtol * W.x.array().abs()).matrix();
  const double n = static_cast<double>(W.x.size());
  const double d0 = std::sqrt((W.x.array() / W.sc.array()).square().sum() / n);
  const double d1 = std::sqrt((W.K.col(0).array() / W.sc.array()).square().sum() / n);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = std::min(h0, hMax);
  W.xs = W.x + h0 * W.K.col(0);
  softDynamics(model, opt, data, W.xs, qTarget, W.K.col(1));
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
void acceptStep(const Model& model, Data& data, AdaptiveScratch& W, double h,
                std::vector<double>* steps, std::vector<VecX>* checkpoints) {
  Data::AdaptiveStats& st = data.adaptive;
  const int nf = model.nspheres(), nq = model.nq();
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
  W.x = W.xn;
  W.x.segment<4>(3) /= W.x.segment<4>(3).norm();
  // First same as last, with the quaternion rate of the renormalised quaternion.
  W.K.col(0) = W.K.col(6);
  W.K.col(0).segment<4>(3) = rk::quatRate(W.x.segment<4>(3), W.x.segment<3>(nq + 3));
  W.F.col(0) = W.F.col(6);
  W.S.col(0) = W.S.col(6);
  W.Vn.col(0) = W.Vn.col(6);
  W.modes[0] = W.modes[6];
}

}  // namespace

namespace {
std::atomic<AdaptiveCapHandler> gCapHandler{nullptr};
std::atomic<long long> gCapHits{0};

// The step cap was hit in this env step: counted in data and in the process, reported to the
// handler.
void countCapHit(const SimOptions& opt, Data& data) {
  ++data.adaptiveCapHits;
  ++gCapHits;
  if (const AdaptiveCapHandler h = gCapHandler.load()) h(opt, data.adaptive);
}
}  // namespace

void setAdaptiveCapHandler(AdaptiveCapHandler handler) { gCapHandler.store(handler); }
long long adaptiveCapHitsTotal() { return gCapHits.load(); }

namespace rk {

int integrateAdaptive(const Model& model, const SimOptions& opt, Data& data,
                      const Eigen::Ref<const VecX>& x0, const Eigen::Ref<const VecX>& qTarget,
                      Eigen::Ref<VecX> xOut, std::vector<double>* steps,
                      std::vector<VecX>* checkpoints) {
  const AdaptiveOptions& o = opt.contact.adaptive;
  if (model.nspheres() > 32)  // the backward keeps per-sphere switch sides in 32-bit masks
    throw std::invalid_argument(
        "adaptive integration: at most 32 contact spheres (feet and leg spheres)");
  AdaptiveScratch& W = workFor(model, data);
  const double T = opt.dt;
  const double hMax = o.maxStep > 0 ? std::min(o.maxStep, T) : T;
  const double hMin = std::min(std::max(o.minStep, 1e-14), hMax);
  Data::AdaptiveStats& st = data.adaptive;
  st = Data::AdaptiveStats{};
  data.footImpulse.setZero();
  if (steps) steps->clear();

  W.x = x0;
  VecX fbuf;  // borrows W.loopForce's storage, as in stages()
  fbuf.swap(W.loopForce);
  W.modes[0] = softDynamics(model, opt, data, W.x, qTarget, W.K.col(0), &fbuf);
  W.F.col(0) = fbuf;
  recordFeet(W, 0, opt.contact, data, W.x, model.nv());
  st.evaluations = 1;

  // First step: given, or Hairer's estimate.
  double h = o.initialStep;
  if (!(h > 0)) h = estimateFirstStep(model, opt, data, qTarget, W, hMax);
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
    stages(model, opt, data, qTarget, h, W, true);
    // FSAL stage at the new point: the error estimate, and the next step's first stage.
    W.modes[6] = softDynamics(model, opt, data, W.xn, qTarget, W.K.col(6), &fbuf);
    W.F.col(6) = fbuf;
    recordFeet(W, 6, opt.contact, data, W.xn, model.nv());
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
      acceptStep(model, data, W, h, steps, checkpoints);
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
  if (st.capHit) countCapHit(opt, data);
  fbuf.swap(W.loopForce);
  xOut = W.x;
  return st.accepted;
}

void integrateFrozen(const Model& model, const SimOptions& opt, Data& data,
                     const Eigen::Ref<const VecX>& x0, const Eigen::Ref<const VecX>& qTarget,
                     const std::vector<double>& steps, Eigen::Ref<VecX> xOut) {
  AdaptiveScratch& W = workFor(model, data);
  W.x = x0;
  data.footImpulse.setZero();
  for (double h : steps) {
    W.modes[0] = softDynamics(model, opt, data, W.x, qTarget, W.K.col(0));
    stages(model, opt, data, qTarget, h, W, false);
    for (int i = 0; i < 6; ++i) data.mixMode(W.modes[i]);
    W.x = W.xn;
    W.x.segment<4>(3) /= W.x.segment<4>(3).norm();
  }
  xOut = W.x;
}

}  // namespace rk

bool adaptiveStep(const Model& model, const SimOptions& opt, Data& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, Eigen::Ref<VecX> qNext,
                  Eigen::Ref<VecX> vNext, std::vector<double>* steps) {
  const int nq = model.nq(), nv = model.nv();
  VecX& x0 = data.workspace().adaptive.x0;
  VecX& x1 = data.workspace().adaptive.x1;
  x0.resize(nq + nv);
  x1.resize(nq + nv);
  x0 << q, v;
  data.mode = 0;
  rk::integrateAdaptive(model, opt, data, x0, qTarget, x1, steps, nullptr);
  qNext = x1.head(nq);
  vNext = x1.tail(nv);
  return qNext.allFinite() && vNext.allFinite();
}

bool rkIntegrate(const Model& model, const SimOptions& opt, Data& data,
                 const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                 Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext) {
  const int nq = model.nq(), nv = model.nv();
  VecX x0(nq + nv), x1(nq + nv);
  x0 << q, v;
  data.mode = 0;
  rk::integrateFrozen(model, opt, data, x0, qTarget, steps, x1);
  qNext = x1.head(nq);
  vNext = x1.tail(nv);
  return qNext.allFinite() && vNext.allFinite();
}

std::size_t adaptiveCheckpointBytes(const Model& model, int acceptedSteps) {
  return static_cast<std::size_t>(acceptedSteps) * (model.nq() + model.nv() + 1) * sizeof(double);
}

}  // namespace diffloco::sim
