// One simulation step: Moreau's midpoint time stepping (Algorithm 2 of the locomotion paper).
//
//   q_mid = q (+) dt/2 v
//   h     = RNEA(q_mid, v) - tau(q, v)          control merged into the bias forces
//   H     = CRBA(q_mid) + armature, factored    H = L^T D L
//   u     = v - dt H^-1 h                       the velocity the step gives without contact
//   c     = Jc u,  G = Jc H^-1 Jc^T             contact-space problem
//   p     = GaussSeidel(G, c)                   hard / smoothed contact impulses
//   v'    = u + H^-1 Jc^T p
//   q'    = q (+) dt/2 (v + v')                 trapezoidal rule
//
// Sign of c: the paper's eq. 10 prints c = Jc (v + dt H^-1 h); with h = bias - tau the velocity
// update is v' = v + H^-1 (Jc^T p - dt h), so the impulse-free contact velocity is Jc (v - dt H^-1 h).
// The soft model replaces the solver by penalty forces (eq. 17-18) and runs softSubsteps sub-steps
// of the same scheme.
#pragma once

#include "sim/data.h"
#include "sim/options.h"

namespace diffloco::sim {

// Advances (q, v) by opt.dt with joint position targets qTarget. qNext/vNext must not alias q/v.
// Returns false when the new state is not finite (the caller decides what to do with the world).
bool step(const Model& model, const SimOptions& opt, Data& data, const Eigen::Ref<const VecX>& q,
          const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& qTarget,
          Eigen::Ref<VecX> qNext, Eigen::Ref<VecX> vNext);

// The dynamics part shared by every model, at time step h: actuator torques, q_mid, bias forces,
// H and its factor, u = v - h H^-1 (bias - tau + damping). Exposed for tests and the backward pass.
void stepDynamics(const Model& model, const SimOptions& opt, Data& data,
                  const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                  const Eigen::Ref<const VecX>& qTarget, double h);

// Total mechanical energy (kinetic + gravitational potential) at (q, v).
double mechanicalEnergy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v);

}  // namespace diffloco::sim
