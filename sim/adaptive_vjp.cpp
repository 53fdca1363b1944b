// Reverse pass of the adaptive soft-contact integration (see sim/adaptive.h): the adjoint of a
// Dormand-Prince step through its stages (the stages' softDynamicsVjp), the touchdown saltation,
// and the env step's reverse sweep over its accepted steps (step sizes frozen).
#include <cmath>

#include "sim/adaptive.h"
#include "sim/adaptive_rk.h"

namespace diffloco::sim {
namespace {

using rk::Packed;
using rk::Scratch;
using Vec4 = Eigen::Vector4d;

// Adjoint of n = quat / |quat|: quatBar += (nBar - n (n . nBar)) / |quat|.
void normalizeVjp(const Vec4& quat, const Vec4& nBar, Eigen::Ref<Vec4> quatBar) {
  const double r = quat.norm();
  const Vec4 n = quat / r;
  quatBar += (nBar - n * n.dot(nBar)) / r;
}

// The adjoints a reverse sweep accumulates besides the state's: the targets' and the parameters'.
template <class D>
struct InputBars {
  double qTarget[D::NJSLOTS];
  ParamBar<D> params;
};

// The jump of the sensitivities at a touchdown (the saltation matrix of a hybrid system). The
// approach damping makes the normal force jump from 0 to kd |v_n| when a sphere touches down (and
// the friction it carries with it), so the flow's derivative picks up, at the touchdown time t*
// where the depth g(x) = d_a crosses 0,
//   dx+ = S dx-,  S = I + (f+ - f-) grad g^T / (grad g . f-),   adjoint: lam- = S^T lam+
// with f+ - f- = (0, H^-1 J_a^T f_a) and grad g . f- = d_a' = -v_n. A step VJP never contains it,
// however small the steps: the event step's boundary sits on t*, and this adds it there, for the
// spheres in `feet` that are on their switch (|d| <= contactEventTol) and approaching. `t` holds
// softDynamics(x) at that boundary x; xBar is lam+ on entry, lam- on exit. A lift-off has no jump
// (the force is k d -> 0 there and the damping is off when receding).
template <class D>
void touchdownSaltation(const Packed<D>& p, const SimOptions& opt, const SoftDynamicsTape<D>& t,
                        const VecX& x, std::uint32_t feet, VecX& xBar, ParamBar<D>& params) {
  const ContactOptions& c = opt.contact;
  const double* v = x.data() + D::NQ;
  const Contacts<D>& fc = t.fc;
  for (int a = 0; a < fc.nc; ++a) {
    const int s = fc.active[a];
    if (!(feet >> s & 1u)) continue;
    const double d = fc.contact[a].depth;
    if (std::abs(d) > c.adaptive.contactEventTol) continue;
    V3 vc = zero3();
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) vc[r] += fc.Jc[3 * a + r][k] * v[k];
    if (!(vc[0] < 0) || c.softKd == 0) continue;  // not touching down, or no jump
    const V3 f = softForce(p.o, std::max(d, 0.0), vc);  // the force just after the touchdown
    double dvdot[D::NV];
    for (int k = 0; k < D::NV; ++k)
      dvdot[k] = fc.Jc[3 * a][k] * f[0] + fc.Jc[3 * a + 1][k] * f[1] + fc.Jc[3 * a + 2][k] * f[2];
    solveH(p.m, t.d, dvdot);
    // grad g: the depth through the sphere centre (on the plane d = radius - centre_z, d' = -v_n;
    // on a height field the ground's depth and its rate along the centre's velocity), then
    // through the kinematics of the normalised q.
    const int body = p.m.footBody[s];
    const V3 centre = sphereCentre(p.m, t.d, s);
    V3 depthGrad = v3(0, 0, -1);
    double depthRate = -vc[0];
    if (p.hf.heights) {
      const M3 zero = {};
      depthGrad = sphereContactVjp(centre, p.m.footRadius[s], fc.contact[a], 1.0, zero, zero3());
      double Jw[3][D::NV];
      pointJacobian(p.m, t.d, body, centre, Jw);
      depthRate = 0;
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < D::NV; ++k) depthRate += depthGrad[r] * Jw[r][k] * v[k];
      if (!(depthRate < 0)) continue;  // not touching down along the surface
    }
    double lamDv = 0;
    for (int k = 0; k < D::NV; ++k) lamDv += dvdot[k] * xBar[D::NQ + k];
    const V3 cb = (lamDv / depthRate) * depthGrad;  // adjoint of the sphere centre
    KinBar<D> bar;
    setZero(bar);
    addTo(bar.R[body], outer(cb, p.m.footOffset[s]));
    bar.p[body] += cb;
    params.footOffset[s] += mulT(t.d.R[body], cb);
    double qn[D::NQ], qnBar[D::NQ], zeroV[D::NV], dvBar[D::NV];
    for (int k = 0; k < D::NQ; ++k) qnBar[k] = 0;
    for (int k = 0; k < D::NV; ++k) zeroV[k] = dvBar[k] = 0;
    integrate<D>(x.data(), zeroV, qn);
    forwardKinematicsVjp(p.m, t.d, qn, bar, qnBar);
    integrateVjp<D>(x.data(), zeroV, qnBar, xBar.data(), dvBar);
  }
}

// xBar (in: adjoint of the step's end state xEnd; out: adjoint of its start state x) of one
// Dormand-Prince step of size h followed by the quaternion renormalisation. nextIn: the spheres in
// contact throughout the next step; those that are not throughout this one touched down at xEnd
// (when on their switch there), and the saltation of that touchdown is applied first. Returns the
// spheres in contact throughout this step.
template <class D>
std::uint32_t rkStepVjp(const Packed<D>& p, const SimOptions& opt, Scratch<D>& W, const VecX& x,
                        const double* qTarget, double h, const VecX* xEnd, std::uint32_t nextIn,
                        VecX& xBar, InputBars<D>& bars) {
  // Recompute the stages.
  for (int i = 0; i < 6; ++i) {
    W.X.col(i) = x;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) W.X.col(i).noalias() += (h * rk::A[i][j]) * W.K.col(j);
    softDynamics(p.m, p.o, p.hf, W.X.col(i).data(), qTarget, W.K.col(i).data(), *W.tape[i]);
  }
  W.raw = x;
  for (int i = 0; i < 6; ++i)
    if (rk::B[i] != 0) W.raw.noalias() += (h * rk::B[i]) * W.K.col(i);
  // Switches a stage sits on: differentiated on the side of the step's other stages.
  ContactSides sides;
  if (opt.contact.adaptive.locateContacts) {
    rk::switchTolerances(opt.contact, sides.tol);
    for (int i = 0; i < 6; ++i)
      rk::sphereSwitches(*W.tape[i], p.o, W.X.col(i).data() + D::NQ, W.nf, W.S.col(i).data(),
                         W.Vn.col(i).data());
    for (int a = 0; a < W.nf; ++a) {
      for (int k = 0; k < 3; ++k) {
        bool in = false, out = false;
        for (int i = 0; i < 6; ++i) {
          const double sw = W.S(3 * a + k, i);
          in = in || sw > sides.tol[k];
          out = out || sw < -sides.tol[k];
        }
        if (in != out) {
          sides.known[k] |= 1u << a;
          if (in) sides.on[k] |= 1u << a;
        }
      }
    }
  }
  const std::uint32_t thisIn = sides.known[0] & sides.on[0];
  const bool salt = opt.contact.adaptive.locateContacts && opt.contact.adaptive.saltation;
  if (const std::uint32_t touched = nextIn & ~thisIn; touched && xEnd && salt) {
    softDynamics(p.m, p.o, p.hf, xEnd->data(), qTarget, W.xdot.data(), *W.tape[6]);
    touchdownSaltation(p, opt, *W.tape[6], *xEnd, touched, xBar, bars.params);
  }
  // Renormalisation of the quaternion.
  {
    const Vec4 nb = xBar.segment<4>(3);
    xBar.segment<4>(3).setZero();
    const VecX& raw = W.raw;
    normalizeVjp(raw.segment<4>(3), nb, xBar.segment<4>(3));
  }
  // raw = x + h sum_i B_i k_i; X_i = x + h sum_j A_ij k_j; k_i = f(X_i).
  for (int i = 0; i < 6; ++i) W.Kbar.col(i) = (h * rk::B[i]) * xBar;
  for (int i = 5; i >= 0; --i) {
    W.Xbar.setZero();
    softDynamicsVjp<true>(p.m, p.o, p.hf, W.X.col(i).data(), qTarget, *W.tape[i],
                          W.Kbar.col(i).data(), W.Xbar.data(), bars.qTarget, &bars.params, sides);
    xBar += W.Xbar;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) W.Kbar.col(j).noalias() += (h * rk::A[i][j]) * W.Xbar;
  }
  return thisIn;
}

// The reverse sweep over the accepted steps (W.steps, W.checkpoints) from the adjoints of the env
// step's end state; adds the adjoints of its inputs to out.
template <class D>
void sweep(const Model& model, const Packed<D>& p, const SimOptions& opt, Scratch<D>& W,
           const double* qTarget, const Eigen::Ref<const VecX>& gqNext,
           const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out) {
  VecX xBar(D::NQ + D::NV);
  xBar << gqNext, gvNext;
  auto bars = std::make_unique<InputBars<D>>();
  for (double& b : bars->qTarget) b = 0;
  setZero(bars->params);
  const int N = static_cast<int>(W.steps.size());
  std::uint32_t nextIn = 0;  // unknown after the env step: its end is the next one's start
  for (int n = N - 1; n >= 0; --n)
    nextIn = rkStepVjp(p, opt, W, W.checkpoints[n], qTarget, W.steps[n],
                       n + 1 < N ? &W.checkpoints[n + 1] : nullptr, nextIn, xBar, *bars);
  // A touchdown on the env step's start (the previous env step ended on it).
  if (nextIn && N > 0 && opt.contact.adaptive.locateContacts && opt.contact.adaptive.saltation) {
    softDynamics(p.m, p.o, p.hf, W.checkpoints[0].data(), qTarget, W.xdot.data(), *W.tape[6]);
    touchdownSaltation(p, opt, *W.tape[6], W.checkpoints[0], nextIn, xBar, bars->params);
  }
  out.q += xBar.head(D::NQ);
  out.v += xBar.tail(D::NV);
  for (int j = 0; j < D::NJ; ++j) out.qTarget[j] += bars->qTarget[j];
  out.params += toParamGrad(model, bars->params);
}

}  // namespace

void adaptiveStepVjp(const Model& model, const SimOptions& opt, AdaptiveData& data,
                     const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
                     const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out) {
  if (q.size() != model.nq() || v.size() != model.nv() || qTarget.size() != model.nj() ||
      gqNext.size() != model.nq() || gvNext.size() != model.nv())
    throw std::invalid_argument("adaptiveStepVjp: the sizes are not the model's");
  rk::withSizeClass(model, [&](auto dims) {
    using D = decltype(dims);
    const Packed<D> p(model, opt);
    Scratch<D>& W = rk::scratchFor<D>(model, data);
    W.x0 << q, v;
    data.mode = 0;
    rk::integrateAdaptive(p, opt, data, W, W.x0, qTarget.data(), W.x1, &W.steps, &W.checkpoints);
    sweep(model, p, opt, W, qTarget.data(), gqNext, gvNext, out);
  });
}

}  // namespace diffloco::sim
