#include "sim/step.h"

#include "sim/actuator.h"
#include "sim/cholesky.h"
#include "sim/contact.h"
#include "sim/crba.h"
#include "sim/integrate.h"
#include "sim/kinematics.h"
#include "sim/rnea.h"
#include "sim/soft_contact.h"

namespace diffloco::sim {

void stepDynamics(const Model& model, const SimOptions& opt, Data& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, double h) {
  actuatorTorques(model, opt.actuator, qTarget, q, v, data.tauJoint);
  for (int j = 0; j < model.nj(); ++j) {  // the actuator's clipped or free regime
    const double free = opt.actuator.kp * (qTarget[j] - q[7 + j]) - opt.actuator.kd * v[6 + j];
    data.mixMode(free == data.tauJoint[j] ? 32 : 33 + (data.tauJoint[j] > free));
  }
  data.work = 0.5 * h * v;
  integrate(model, q, data.work, data.qMid);
  forwardKinematics(model, data, data.qMid);
  biasForces(model, data, v);
  for (int j = 0; j < model.nj(); ++j)
    data.tau[6 + j] += model.joints[j].damping * v[6 + j] - data.tauJoint[j];
  crba(model, data);
  factorize(model, data);
  data.u = data.tau;
  solve(model, data, data.u);
  data.u = v - h * data.u;
}

namespace {

// v' = u + H^-1 Jc^T p, using Y = L^-T Jc^T: H^-1 Jc^T p = L^-1 D^-1 Y p.
void applyImpulses(const Model& model, Data& data, Eigen::Ref<VecX> vNext) {
  const int m = 3 * static_cast<int>(data.active.size());
  data.work.noalias() = data.Y.leftCols(m) * data.impulse.head(m);
  data.work.array() /= data.LD.diagonal().array();
  solveL(model, data, data.work);
  vNext = data.u + data.work;
}

// Penalty forces of eq. 17-18 at the mid-step, as a generalized force added to data.work.
void softContactForce(const Model& model, const ContactOptions& opt, Data& data,
                      const Eigen::Ref<const VecX>& v, double h) {
  data.work.setZero();
  const int nc = static_cast<int>(data.active.size());
  for (int a = 0; a < nc; ++a) {
    const double d = data.depth[data.active[a]];
    if (d < 0) {
      data.mixMode(0);
      continue;
    }
    const auto J = data.Jc.middleRows<3>(3 * a);
    const Vec3 vc = J * v;  // (normal, tangent1, tangent2)
    const SoftBranches b = softBranches(opt, d, vc);
    const Vec3 f = softPenaltyForce(opt, d, vc, b);
    data.mixMode(b.mode());
    data.work.noalias() += J.transpose() * f;
    data.footImpulse.segment<3>(3 * data.active[a]) += h * f;
  }
}

}  // namespace

bool step(const Model& model, const SimOptions& opt, Data& data, const Eigen::Ref<const VecX>& q,
          const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& qTarget,
          Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext) {
  data.mode = 0;
  if (opt.contact.model == ContactModel::Soft) {
    const int n = std::max(1, opt.contact.softSubsteps);
    const double h = opt.dt / n;
    qNext = q;
    vNext = v;
    VecX vPrev(model.nv());
    data.footImpulse.setZero();
    for (int s = 0; s < n; ++s) {
      vPrev = vNext;
      stepDynamics(model, opt, data, qNext, vPrev, qTarget, h);
      footGeometry(model, opt.contact, data);
      selectContacts(model, opt.contact, data);
      contactJacobians(model, opt.contact, data);
      softContactForce(model, opt.contact, data, vPrev, h);
      solve(model, data, data.work);
      vNext = data.u + h * data.work;
      data.work = 0.5 * h * (vPrev + vNext);
      integrate(model, qNext, data.work, qNext);
    }
  } else {
    stepDynamics(model, opt, data, q, v, qTarget, opt.dt);
    footGeometry(model, opt.contact, data);
    selectContacts(model, opt.contact, data);
    for (int a : data.active) data.mixMode(16 + a);
    const int m = 3 * static_cast<int>(data.active.size());
    if (m > 0) {
      contactJacobians(model, opt.contact, data);
      delassus(model, data);
      data.c.head(m).noalias() = data.Jc.topRows(m) * data.u;
      solveContacts(opt.contact, data);
      applyImpulses(model, data, vNext);
      data.footImpulse.setZero();
      for (int a = 0; a < m / 3; ++a)
        data.footImpulse.segment<3>(3 * data.active[a]) = data.impulse.segment<3>(3 * a);
    } else {
      vNext = data.u;
      data.footImpulse.setZero();
    }
    data.work = 0.5 * opt.dt * (v + vNext);
    integrate(model, q, data.work, qNext);
  }
  return qNext.allFinite() && vNext.allFinite();
}

double mechanicalEnergy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v) {
  forwardKinematics(model, data, q);
  crba(model, data);
  double potential = 0;
  for (int i = 0; i < model.nbodies(); ++i) {
    const Vec3 com = data.R[i] * model.bodies[i].inertia.com() + data.p[i];
    potential -= model.bodies[i].inertia.m * model.gravity.dot(com);
  }
  return 0.5 * v.dot(data.H * v) + potential;
}

}  // namespace diffloco::sim
