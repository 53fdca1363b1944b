#include "sim/step_vjp.h"

#include <memory>

#include "sim/actuator.h"
#include "sim/adjoint.h"
#include "sim/cholesky.h"
#include "sim/contact.h"
#include "sim/integrate.h"
#include "sim/soft_contact.h"
#include "sim/step.h"
#include "sim/workspace.h"

namespace diffloco::sim {

namespace {

// The step's scratch in the caller's workspace, made for the model's sizes on first use.
StepVjpScratch& scratchFor(const Model& model, Workspace& ws) {
  std::unique_ptr<StepVjpScratch>& s = ws.stepVjp;
  if (!s || s->bar.R.size() != model.bodies.size() || s->Jw.cols() != model.nv())
    s = std::make_unique<StepVjpScratch>(model);
  return *s;
}

// Reverse of stepDynamics(q, v, qTarget, h), given the adjoint of u and the adjoints already
// gathered on H and on the kinematics at q_mid. Adds to out.
void dynamicsVjp(const Model& model, const SimOptions& opt, Data& data,
                 const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& qTarget, double h, const VecX& ubar,
                 StepVjpScratch& S, DynamicsVjpScratch& dyn, StepAdjoint& out,
                 bool lambdaReady = false) {
  const int nv = model.nv(), nj = model.nj();
  // u = v - h H^-1 b.
  out.v += ubar;
  if (!lambdaReady) {  // else the caller has S.lambda = H^-1 ubar already
    S.lambda = ubar;
    solve(model, data, S.lambda);
  }
  S.Hbar.noalias() += S.lambda * (v - data.u).transpose();
  S.work = -h * S.lambda;  // bbar
  // b = RNEA(q_mid, v) + damping v - tau.
  S.dvbar.setZero(nv);
  biasForcesVjp(model, data, v, S.work, S.bar, out.v, dyn);
  crbaVjp(model, data, S.Hbar, S.bar, dyn);
  S.qmidBar.setZero(model.nq());
  forwardKinematicsVjp(model, data, data.qMid, S.bar, S.qmidBar);
  // q_mid = q (+) h/2 v.
  data.work = 0.5 * h * v;
  integrateVjp(model, q, data.work, S.qmidBar, out.q, S.dvbar);
  out.v += 0.5 * h * S.dvbar;
  for (int j = 0; j < nj; ++j) {
    const double bb = S.work[6 + j];
    out.v[6 + j] += model.joints[j].damping * bb;
    actuatorTorqueVjp(opt.actuator, model.joints[j].effort, qTarget[j], q[7 + j], v[6 + j], -bb,
                      out.qTarget[j], out.q[7 + j], out.v[6 + j], out.params.kp, out.params.kd);
  }
  out.params.addInertia(model, S.bar.inertia);
}

void hardOrSmoothedVjp(const Model& model, const SimOptions& opt, Data& data,
                       const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                       const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gq,
                       const Eigen::Ref<const VecX>& gv, StepAdjoint& out) {
  const int nv = model.nv();
  const double h = opt.dt;
  Workspace& ws = data.workspace();
  StepVjpScratch& S = scratchFor(model, ws);
  S.bar.reset(model);
  S.Hbar.setZero(nv, nv);

  // Forward, recording the solver's tape.
  VecX& qn = S.qn;
  VecX& vn = S.vn;
  qn.resize(model.nq());
  vn.resize(nv);
  data.recordGs = true;
  step(model, opt, data, q, v, qTarget, qn, vn);
  data.recordGs = false;
  const int nc = static_cast<int>(data.active.size()), m = 3 * nc;

  // q' = q (+) h/2 (v + v').
  S.dvbar.setZero(nv);
  data.work = 0.5 * h * (v + vn);
  integrateVjp(model, q, data.work, gq, out.q, S.dvbar);
  VecX& vnBar = S.vnBar;
  vnBar = gv + 0.5 * h * S.dvbar;
  out.v += 0.5 * h * S.dvbar;

  VecX& ubar = vnBar;  // u enters v' with weight one
  if (m > 0) {
    const auto J = data.Jc.topRows(m);
    // v' = u + H^-1 J^T p.
    S.lambda = vnBar;
    solve(model, data, S.lambda);
    S.dv = vn - data.u;
    S.Hbar.noalias() -= S.lambda * S.dv.transpose();
    S.pbar.noalias() = J * S.lambda;
    // p = GaussSeidel(G, c, sigma).
    solveContactsVjp(opt.contact, data, S.pbar, S.Gbar, S.cbar, S.sigmaBar, out.params.mu,
                     ws.contactVjp);
    // G = J W with W = H^-1 J^T = L^-1 D^-1 Y.
    // All columns at once, row by row (rows of W are contiguous: the updates vectorise).
    S.W = data.LD.diagonal().cwiseInverse().asDiagonal() * data.Y.leftCols(m);
    for (int k = 0; k < nv; ++k)
      for (int i = model.dofParent[k]; i >= 0; i = model.dofParent[i])
        S.W.row(k) -= data.LD(k, i) * S.W.row(i);
    // Jbar = p lambda^T (v' = u + W p) + cbar u^T (c = J u) + (Gbar + Gbar^T) W^T (G = J W), with
    // lambda = H^-1 vnBar. Only the entries contactGeometryVjp reads are formed: per contact, the
    // base angular columns and the joint columns of its foot's path (6 of 18 for the quadrupeds),
    // and on a height field the base linear ones (constant on the plane, the contact frame's
    // transpose on a height field, where the frame depends on the state). The rest stays zero.
    S.Gsym = S.Gbar + S.Gbar.transpose();
    S.Jbar.setZero(m, nv);
    for (int a = 0; a < nc; ++a) {
      const auto Gs = S.Gsym.middleRows<3>(3 * a);
      const Vec3 pa = data.impulse.segment<3>(3 * a), ca = S.cbar.segment<3>(3 * a);
      auto column = [&](int c) {
        S.Jbar.block<3, 1>(3 * a, c) =
            pa * S.lambda[c] + ca * data.u[c] + Gs.lazyProduct(S.W.row(c).transpose());
      };
      for (int c = opt.contact.terrain ? 0 : 3; c < 6; ++c) column(c);
      for (int i = model.sphere(data.active[a]).body; i > 0; i = model.bodies[i].parent)
        column(5 + i);
    }
    // c = J u. The adjoint of u is then vnBar + J^T cbar, and H^-1 of it is lambda' + W cbar:
    // one solve saved.
    ubar.noalias() += J.transpose() * S.cbar;
    S.lambda.noalias() += S.W * S.cbar;
    // Hbar -= W Gbar W^T, only on the entries crbaVjp reads: i = k or i an ancestor dof of k (H's
    // tree-sparsity pattern). H is symmetric and crbaVjp counts both triangles, so the pair's sum
    // W_i (Gbar + Gbar^T) W_k^T goes to (i, k) alone: half the products. Rows of W and W Gsym are
    // contiguous.
    S.WG.noalias() = S.W.lazyProduct(S.Gsym);
    for (int k = 0; k < nv; ++k) {
      S.Hbar(k, k) -= 0.5 * S.WG.row(k).dot(S.W.row(k));
      for (int i = model.dofParent[k]; i >= 0; i = model.dofParent[i])
        S.Hbar(i, k) -= S.WG.row(k).dot(S.W.row(i));
    }
    // sigma = sigmoid(kappa d).
    VecX& depthBar = S.depthBar;
    depthBar.setZero(nc);
    if (opt.contact.model == ContactModel::Smoothed)
      for (int a = 0; a < nc; ++a) {
        const double s = data.sigma[a], ds = s * (1 - s);
        depthBar[a] = S.sigmaBar[a] * ds * opt.contact.kappa;
        out.params.kappa += S.sigmaBar[a] * ds * data.depth[data.active[a]];
      }
    contactGeometryVjp(model, opt.contact, data, S.Jbar, depthBar, S.bar, out.params.footOffset,
                       S.Jw, S.Jp);
  }
  if (m == 0) {
    S.lambda = ubar;
    solve(model, data, S.lambda);
  }
  dynamicsVjp(model, opt, data, q, v, qTarget, h, ubar, S, ws.dynamicsVjp, out, true);
}

void softVjp(const Model& model, const SimOptions& opt, Data& stepData,
             const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
             const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gq,
             const Eigen::Ref<const VecX>& gv, StepAdjoint& out) {
  const int nv = model.nv(), nf = model.nspheres();
  const ContactOptions& c = opt.contact;
  const int n = std::max(1, c.softSubsteps);
  const double h = opt.dt / n;
  // The scratch of the caller's Data (each sub-step's own Data below runs no backward).
  Workspace& ws = stepData.workspace();
  StepVjpScratch& S = scratchFor(model, ws);

  // Forward, one sub-step at a time with the sim's own code, each in its own scratch Data so that
  // the reverse sweep finds every sub-step's intermediate quantities without recomputing them
  // (about 14 KB per sub-step for an 18-DoF robot, held only during this call).
  SimOptions sub = opt;
  sub.dt = h;
  sub.contact.softSubsteps = 1;
  std::vector<std::unique_ptr<Data>>& tape = ws.softTape;
  if (static_cast<int>(tape.size()) < n || tape[0]->H.rows() != nv) {
    tape.clear();
    for (int s = 0; s < n; ++s) tape.push_back(std::make_unique<Data>(model));
  }
  // No heap allocation once the workspace has its sizes.
  std::vector<VecX>& qs = S.qs;
  std::vector<VecX>& vs = S.vs;
  if (static_cast<int>(qs.size()) < n + 1) {
    qs.resize(n + 1);
    vs.resize(n + 1);
  }
  for (int s = 0; s <= n; ++s) {  // step() writes through Refs: the sizes must be right
    qs[s].resize(model.nq());
    vs[s].resize(nv);
  }
  qs[0] = q;
  vs[0] = v;
  for (int s = 0; s < n; ++s)
    step(model, sub, *tape[s], qs[s], vs[s], qTarget, qs[s + 1], vs[s + 1]);

  VecX& qBar = S.qBar;
  VecX& vBar = S.vBar;
  qBar = gq;
  vBar = gv;
  if (!S.local) S.local = std::make_unique<StepAdjoint>(model);
  StepAdjoint& local = *S.local;
  local.setZero(model);
  for (int s = n - 1; s >= 0; --s) {
    Data& data = *tape[s];
    const VecX& qs0 = qs[s];
    const VecX& vs0 = vs[s];
    const VecX& v1 = vs[s + 1];
    S.bar.reset(model);
    S.Hbar.setZero(nv, nv);
    local.q.setZero();
    local.v.setZero();

    // q1 = q0 (+) h/2 (v0 + v1).
    S.dvbar.setZero(nv);
    data.work = 0.5 * h * (vs0 + v1);
    integrateVjp(model, qs0, data.work, qBar, local.q, S.dvbar);
    VecX& v1Bar = S.vnBar;
    v1Bar = vBar + 0.5 * h * S.dvbar;
    local.v += 0.5 * h * S.dvbar;

    // v1 = u + h H^-1 F, F = sum_a J_a^T f_a.
    S.lambda = v1Bar;
    solve(model, data, S.lambda);
    S.Hbar.noalias() -= S.lambda * (v1 - data.u).transpose();
    VecX& Fbar = S.Fbar;
    Fbar = h * S.lambda;
    S.Jbar.setZero(3 * nf, nv);
    VecX& depthBar = S.depthBar;
    depthBar.setZero(nf);
    for (int a = 0; a < static_cast<int>(data.active.size()); ++a) {
      const double d = data.depth[data.active[a]];
      if (d < 0) continue;
      const auto Ja = data.Jc.middleRows<3>(3 * a);
      const Vec3 vc = Ja.lazyProduct(vs0);  // coefficient-wise: 3 x nv is too small for GEMV
      const SoftBranches b = softBranches(c, d, vc);
      const Vec3 f = softPenaltyForce(c, d, vc, b);  // the forward's force (step.cpp)
      S.Jbar.middleRows<3>(3 * a) += f * Fbar.transpose();
      Vec3 vcb = Vec3::Zero();
      softPenaltyForceVjp(c, d, vc, b, f, Ja.lazyProduct(Fbar), depthBar[a], vcb, local.params);
      S.Jbar.middleRows<3>(3 * a) += vcb * vs0.transpose();
      local.v.noalias() += Ja.transpose().lazyProduct(vcb);
    }
    contactGeometryVjp(model, c, data, S.Jbar, depthBar, S.bar, local.params.footOffset, S.Jw,
                       S.Jp);
    dynamicsVjp(model, sub, data, qs0, vs0, qTarget, h, v1Bar, S, ws.dynamicsVjp, local,
                true);  // u's adjoint is v1's
    qBar = local.q;
    vBar = local.v;
  }
  out.q += qBar;
  out.v += vBar;
  out.qTarget += local.qTarget;
  out.params += local.params;  // every parameter adjoint gathered over the sub-steps
}

}  // namespace

void stepVjp(const Model& model, const SimOptions& options, Data& data,
             const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
             const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
             const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out) {
  // Straight-through terrain: the step's derivative on the backward terrain.
  SimOptions withBackwardTerrain;
  if (options.contact.backwardTerrain) {
    withBackwardTerrain = options;
    withBackwardTerrain.contact.terrain = options.contact.backwardTerrain;
  }
  const SimOptions& opt = options.contact.backwardTerrain ? withBackwardTerrain : options;
  switch (opt.contact.model) {
    case ContactModel::Soft:
      softVjp(model, opt, data, q, v, qTarget, gqNext, gvNext, out);
      break;
    case ContactModel::StraightThrough: {
      // The smoothed model's derivative at the (hard) trajectory's state.
      SimOptions smoothed = opt;
      smoothed.contact.model = ContactModel::Smoothed;
      hardOrSmoothedVjp(model, smoothed, data, q, v, qTarget, gqNext, gvNext, out);
      break;
    }
    default:
      hardOrSmoothedVjp(model, opt, data, q, v, qTarget, gqNext, gvNext, out);
  }
}

}  // namespace diffloco::sim
