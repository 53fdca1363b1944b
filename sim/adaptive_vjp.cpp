// Reverse pass of the adaptive soft-contact integration (see sim/adaptive.h): the forward-dynamics
// adjoint, the adjoint of a Dormand-Prince step through its stages, and the env step's reverse
// sweep over its accepted steps (step sizes frozen).
#include <memory>

#include "sim/actuator.h"
#include "sim/adaptive.h"
#include "sim/adaptive_rk.h"
#include "sim/adjoint.h"
#include "sim/cholesky.h"
#include "sim/kinematics.h"
#include "sim/quaternion.h"
#include "sim/soft_contact.h"
#include "sim/workspace.h"

namespace diffloco::sim {
namespace {

// Adjoint of n = quat / |quat|: quatBar += (nBar - n (n . nBar)) / |quat|.
void normalizeVjp(const Vec4& quat, const Vec4& nBar, Eigen::Ref<Vec4> quatBar) {
  const double r = quat.norm();
  const Vec4 n = quat / r;
  quatBar += (nBar - n * n.dot(nBar)) / r;
}

// softDynamicsVjp's scratch in the caller's workspace, made for the model's sizes on first use.
SoftDynamicsVjpScratch& scratchFor(const Model& model, Workspace& ws) {
  std::unique_ptr<SoftDynamicsVjpScratch>& s = ws.adaptiveVjp.dynamics;
  if (!s || s->bar.R.size() != model.bodies.size() || s->Jw.cols() != model.nv())
    s = std::make_unique<SoftDynamicsVjpScratch>(model);
  return *s;
}

}  // namespace

void softDynamicsVjp(const Model& model, const SimOptions& opt, const Data& data,
                     const Eigen::Ref<const VecX>& x, const Eigen::Ref<const VecX>& qTarget,
                     const Eigen::Ref<const VecX>& xdotBar, Eigen::Ref<VecX> xBar, StepAdjoint& out,
                     Workspace& ws, const ContactSides& sides) {
  const int nq = model.nq(), nv = model.nv(), nj = model.nj(), nf = model.nspheres();
  const ContactOptions& c = opt.contact;
  SoftDynamicsVjpScratch& S = scratchFor(model, ws);
  S.bar.reset(model);
  const auto v = x.tail(nv);
  auto qBar = xBar.head(nq);
  auto vBar = xBar.tail(nv);
  const VecX& qn = data.qMid;  // the normalised configuration the dynamics saw

  // qdot = (v_lin, 0.5 quat (x) (0, w), v_joints).
  vBar.head<3>() += xdotBar.head<3>();
  vBar.tail(nj) += xdotBar.segment(7, nj);
  {
    const Vec4 quat = x.segment<4>(3), pb = xdotBar.segment<4>(3);
    const Vec3 w = v.segment<3>(3);
    qBar.segment<4>(3) += 0.5 * quatMul(pb, Vec4(0, -w[0], -w[1], -w[2]));
    vBar.segment<3>(3) += 0.5 * quatMul(quatConj(quat), pb).tail<3>();
  }

  // vdot = H^-1 z, z = J^T f - b: zbar = lambda = H^-1 vdotBar, Hbar = -lambda vdot^T.
  S.lambda = xdotBar.tail(nv);
  solve(model, data, S.lambda);
  S.Hbar.noalias() = -S.lambda * data.u.transpose();

  // Penalty forces f_a(depth_a, J_a v) (forward law as in softDynamics).
  S.Jbar.setZero(3 * nf, nv);
  S.depthBar.setZero(nf);
  for (int a = 0; a < static_cast<int>(data.active.size()); ++a) {
    const int foot = data.active[a];
    auto side = [&](int k, double value, bool forwardRule) {
      return std::abs(value) <= sides.tol[k] && (sides.known[k] >> foot & 1u)
                 ? static_cast<bool>(sides.on[k] >> foot & 1u)
                 : forwardRule;
    };
    const double d = data.depth[foot];
    if (!side(0, d, d >= 0)) continue;
    const auto Ja = data.Jc.middleRows<3>(3 * a);
    const Vec3 vc = Ja * v;
    // The branches on the sides the events located. max(.., 0): a foot held in contact on its
    // switch may have f_n = k d slightly below 0; a foot that does not slide has no Coulomb branch.
    SoftBranches b;
    b.approaching = side(2, -vc[0], vc[0] < 0);
    const double fn = softNormalForce(c, d, vc[0], b.approaching);
    const double vt = norm2(vc[1], vc[2]);
    b.viscous = vt == 0 || side(1, c.mu * fn - c.softKf * vt, c.softKf * vt <= c.mu * std::max(fn, 0.0));
    const Vec3 f = softPenaltyForce(c, d, vc, b);
    S.Jbar.middleRows<3>(3 * a).noalias() += f * S.lambda.transpose();
    Vec3 vcb = Vec3::Zero();
    softPenaltyForceVjp(c, d, vc, b, f, Ja * S.lambda, S.depthBar[a], vcb, out.params);
    S.Jbar.middleRows<3>(3 * a).noalias() += vcb * v.transpose();
    vBar.noalias() += Ja.transpose() * vcb;
  }
  contactGeometryVjp(model, c, data, S.Jbar, S.depthBar, S.bar, out.params.footOffset, S.Jw,
                     S.Jp);

  // b = RNEA(q, v) + damping v - tau(q, v): bbar = -lambda.
  S.bbar = -S.lambda;
  biasForcesVjp(model, data, v, S.bbar, S.bar, vBar, ws.dynamicsVjp);
  crbaVjp(model, data, S.Hbar, S.bar, ws.dynamicsVjp);
  S.qnBar.setZero(nq);
  forwardKinematicsVjp(model, data, qn, S.bar, S.qnBar);
  for (int j = 0; j < nj; ++j) {
    const double bb = S.bbar[6 + j];
    vBar[6 + j] += model.joints[j].damping * bb;
    actuatorTorqueVjp(opt.actuator, model.joints[j].effort, qTarget[j], qn[7 + j], v[6 + j], -bb,
                      out.qTarget[j], S.qnBar[7 + j], vBar[6 + j], out.params.kp, out.params.kd);
  }
  out.params.addInertia(model, S.bar.inertia);
  // qn = q with its quaternion normalised.
  qBar.head<3>() += S.qnBar.head<3>();
  qBar.tail(nj) += S.qnBar.tail(nj);
  normalizeVjp(x.segment<4>(3), S.qnBar.segment<4>(3), qBar.segment<4>(3));
}

namespace {

// The jump of the sensitivities at a touchdown (the saltation matrix of a hybrid system). The
// approach damping makes the normal force jump from 0 to kd |v_n| when a foot touches down (and
// the friction it carries with it), so the flow's derivative picks up, at the touchdown time t*
// where the depth g(x) = d_a crosses 0,
//   dx+ = S dx-,  S = I + (f+ - f-) grad g^T / (grad g . f-),   adjoint: lam- = S^T lam+
// with f+ - f- = (0, H^-1 J_a^T f_a) and grad g . f- = d_a' = -v_n. A step VJP never contains it,
// however small the steps: the event step's boundary sits on t*, and this adds it there, for the
// feet in `feet` that are on their switch (|d| <= contactEventTol) and approaching. `d0` holds
// softDynamics(x) at that boundary x; xBar is lam+ on entry, lam- on exit. A lift-off has no jump
// (the force is k d -> 0 there and the damping is off when receding).
void touchdownSaltation(const Model& model, const SimOptions& opt, const Data& d0, const VecX& x,
                        std::uint32_t feet, VecX& xBar, StepAdjoint& out, Workspace& ws) {
  const ContactOptions& c = opt.contact;
  const int nq = model.nq(), nv = model.nv();
  const auto v = x.tail(nv);
  for (int a = 0; a < model.nspheres(); ++a) {
    if (!(feet >> a & 1u)) continue;
    const double d = d0.depth[a];
    if (std::abs(d) > c.adaptive.contactEventTol) continue;
    const auto Ja = d0.Jc.middleRows<3>(3 * a);
    const Vec3 vc = Ja * v;
    if (!(vc[0] < 0) || c.softKd == 0) continue;  // not touching down, or no jump
    const double dPlus = std::max(d, 0.0);  // the foot's force just after the touchdown
    const Vec3 f = softPenaltyForce(c, dPlus, vc, softBranches(c, dPlus, vc));
    VecX dvdot = Ja.transpose() * f;
    solve(model, d0, dvdot);
    // grad g: the depth through the sphere centre (on the plane d = radius - centre_z, d' = -v_n;
    // on a height field sim/terrain.h's depth and its rate along the centre's velocity), then
    // through the kinematics of the normalised q.
    SoftDynamicsVjpScratch& S = scratchFor(model, ws);
    const Foot& ft = model.sphere(a);
    Vec3 depthGrad(0, 0, -1);
    double depthRate = -vc[0];
    if (c.terrain) {
      depthGrad = sphereContactVjp(d0.footCentre[a], ft.radius, d0.footContact[a], 1.0,
                                   Mat3::Zero(), Vec3::Zero());
      pointJacobian(model, d0, ft.body, d0.footCentre[a], S.Jw);
      depthRate = depthGrad.dot(S.Jw * v);
      if (!(depthRate < 0)) continue;  // not touching down along the surface
    }
    const double coef = dvdot.dot(xBar.tail(nv)) / depthRate;
    S.bar.reset(model);
    const Vec3 cb = coef * depthGrad;  // adjoint of the sphere centre
    S.bar.R[ft.body] += cb * ft.offset.transpose();
    S.bar.p[ft.body] += cb;
    out.params.footOffset[a] += d0.R[ft.body].transpose() * cb;
    S.qnBar.setZero(nq);
    forwardKinematicsVjp(model, d0, d0.qMid, S.bar, S.qnBar);
    xBar.head<3>() += S.qnBar.head<3>();
    xBar.segment(7, model.nj()) += S.qnBar.tail(model.nj());
    normalizeVjp(x.segment<4>(3), S.qnBar.segment<4>(3), xBar.segment<4>(3));
  }
}

// The RK step's tape in the caller's workspace, sized for the model on first use.
RkStepTape& tapeFor(const Model& m, Workspace& ws) {
  RkStepTape& T = ws.adaptiveVjp.tape;
  const int n = m.nq() + m.nv();
  if (n == T.nx && T.data.size() == 7 && T.data[0]->H.rows() == m.nv() &&
      T.data[0]->depth.size() == m.nspheres())
    return T;
  T.nx = n;
  T.data.clear();
  for (int i = 0; i < 7; ++i) T.data.push_back(std::make_unique<Data>(m));  // 6 stages + scratch
  T.X.resize(n, 6), T.K.resize(n, 6), T.Kbar.resize(n, 6), T.raw.resize(n), T.Xbar.resize(n);
  return T;
}

// xBar (in: adjoint of the step's end state xEnd; out: adjoint of its start state x) of one
// Dormand-Prince step of size h followed by the quaternion renormalisation. nextIn: the feet in
// contact throughout the next step; those that are not throughout this one touched down at xEnd
// (when on their switch there), and the saltation of that touchdown is applied first. Returns the
// feet in contact throughout this step.
std::uint32_t rkStepVjp(const Model& model, const SimOptions& opt, const VecX& x,
                        const Eigen::Ref<const VecX>& qTarget, double h, const VecX* xEnd,
                        std::uint32_t nextIn, VecX& xBar, StepAdjoint& out, Workspace& ws) {
  RkStepTape& T = tapeFor(model, ws);
  // Recompute the stages.
  for (int i = 0; i < 6; ++i) {
    T.X.col(i) = x;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) T.X.col(i).noalias() += (h * rk::A[i][j]) * T.K.col(j);
    softDynamics(model, opt, *T.data[i], T.X.col(i), qTarget, T.K.col(i));
  }
  T.raw = x;
  for (int i = 0; i < 6; ++i)
    if (rk::B[i] != 0) T.raw.noalias() += (h * rk::B[i]) * T.K.col(i);
  // Switches a stage sits on: differentiated on the side of the step's other stages.
  ContactSides sides;
  if (opt.contact.adaptive.locateContacts) {
    rk::switchTolerances(opt.contact, sides.tol);
    const int nv = model.nv();
    for (int a = 0; a < model.nspheres(); ++a) {
      bool in[3] = {false, false, false}, out[3] = {false, false, false};
      for (int i = 0; i < 6; ++i) {
        const Data& di = *T.data[i];
        double sw[3];
        rk::footSwitches(opt.contact, di.depth[a],
                         di.Jc.middleRows<3>(3 * a) * T.X.col(i).tail(nv), sw);
        for (int k = 0; k < 3; ++k) {
          in[k] = in[k] || sw[k] > sides.tol[k];
          out[k] = out[k] || sw[k] < -sides.tol[k];
        }
      }
      for (int k = 0; k < 3; ++k)
        if (in[k] != out[k]) {
          sides.known[k] |= 1u << a;
          if (in[k]) sides.on[k] |= 1u << a;
        }
    }
  }
  const std::uint32_t thisIn = sides.known[0] & sides.on[0];
  const bool salt = opt.contact.adaptive.locateContacts && opt.contact.adaptive.saltation;
  if (const std::uint32_t touched = nextIn & ~thisIn; touched && xEnd && salt) {
    VecX& xdot = ws.adaptiveVjp.xdot;
    xdot.resize(x.size());
    softDynamics(model, opt, *T.data[6], *xEnd, qTarget, xdot);
    touchdownSaltation(model, opt, *T.data[6], *xEnd, touched, xBar, out, ws);
  }
  // Renormalisation of the quaternion.
  {
    const Vec4 nb = xBar.segment<4>(3);
    xBar.segment<4>(3).setZero();
    normalizeVjp(T.raw.segment<4>(3), nb, xBar.segment<4>(3));
  }
  // raw = x + h sum_i B_i k_i; X_i = x + h sum_j A_ij k_j; k_i = f(X_i).
  for (int i = 0; i < 6; ++i) T.Kbar.col(i) = (h * rk::B[i]) * xBar;
  for (int i = 5; i >= 0; --i) {
    T.Xbar.setZero();
    softDynamicsVjp(model, opt, *T.data[i], T.X.col(i), qTarget, T.Kbar.col(i), T.Xbar, out, ws,
                    sides);
    xBar += T.Xbar;
    for (int j = 0; j < i; ++j)
      if (rk::A[i][j] != 0) T.Kbar.col(j).noalias() += (h * rk::A[i][j]) * T.Xbar;
  }
  return thisIn;
}

void sweep(const Model& model, const SimOptions& opt, const std::vector<VecX>& checkpoints,
           const std::vector<double>& steps, const Eigen::Ref<const VecX>& qTarget,
           const Eigen::Ref<const VecX>& gqNext, const Eigen::Ref<const VecX>& gvNext,
           StepAdjoint& out, Workspace& ws) {
  const int nq = model.nq(), nv = model.nv();
  VecX xBar(nq + nv);
  xBar << gqNext, gvNext;
  const int N = static_cast<int>(steps.size());
  std::uint32_t nextIn = 0;  // unknown after the env step: its end is the next one's start
  for (int n = N - 1; n >= 0; --n)
    nextIn = rkStepVjp(model, opt, checkpoints[n], qTarget, steps[n],
                       n + 1 < N ? &checkpoints[n + 1] : nullptr, nextIn, xBar, out, ws);
  // A touchdown on the env step's start (the previous env step ended on it).
  if (nextIn && N > 0 && opt.contact.adaptive.locateContacts && opt.contact.adaptive.saltation) {
    std::unique_ptr<Data>& d = ws.adaptiveVjp.start;
    if (!d || d->H.rows() != nv || d->depth.size() != model.nspheres())
      d = std::make_unique<Data>(model);
    VecX xdot(nq + nv);
    softDynamics(model, opt, *d, checkpoints[0], qTarget, xdot);
    touchdownSaltation(model, opt, *d, checkpoints[0], nextIn, xBar, out, ws);
  }
  out.q += xBar.head(nq);
  out.v += xBar.tail(nv);
}

}  // namespace

void rkIntegrateVjp(const Model& model, const SimOptions& opt, Data& data,
                    const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                    const Eigen::Ref<const VecX>& qTarget, const std::vector<double>& steps,
                    const Eigen::Ref<const VecX>& gqNext, const Eigen::Ref<const VecX>& gvNext,
                    StepAdjoint& out) {
  const int nq = model.nq(), nv = model.nv();
  std::vector<VecX> checkpoints;
  checkpoints.reserve(steps.size());
  VecX x(nq + nv);
  x << q, v;
  for (double h : steps) {  // the start state of every step, one step at a time
    checkpoints.push_back(x);
    rk::integrateFrozen(model, opt, data, checkpoints.back(), qTarget, {h}, x);
  }
  sweep(model, opt, checkpoints, steps, qTarget, gqNext, gvNext, out, data.workspace());
}

void adaptiveStepVjp(const Model& model, const SimOptions& opt, Data& data,
                     const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
                     const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out) {
  const int nq = model.nq(), nv = model.nv();
  AdaptiveVjpScratch& S = data.workspace().adaptiveVjp;
  std::vector<double>& steps = S.steps;
  std::vector<VecX>& checkpoints = S.checkpoints;
  VecX &x0 = S.x0, &x1 = S.x1;
  x0.resize(nq + nv);
  x1.resize(nq + nv);
  x0 << q, v;
  data.mode = 0;
  rk::integrateAdaptive(model, opt, data, x0, qTarget, x1, &steps, &checkpoints);
  sweep(model, opt, checkpoints, steps, qTarget, gqNext, gvNext, out, data.workspace());
}

}  // namespace diffloco::sim
