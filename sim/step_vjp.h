// The hand-written reverse-mode (adjoint) pass of one simulation step.
//
// stepVjp recomputes the forward step from its inputs (nothing is stored between the forward and
// the backward pass except the inputs q, v, qTarget: 49 doubles = 392 bytes per world and step for
// an 18-DoF robot) and propagates the adjoints of (q', v') back through every stage in reverse:
// trapezoidal position update, velocity update, the Gauss-Seidel sweeps unrolled (hard: the branch
// taken by each projection; smoothed: sigmoid scalings too), Delassus matrix and contact Jacobians,
// H^-1 solves (through the identity d(H^-1 z) = -H^-1 dH H^-1 z, so the factorization itself is
// never differentiated), CRBA and RNEA in reverse, forward kinematics, the half step, and the PD
// actuator. The soft model runs the same per sub-step with the penalty forces of eq. 17-18.
//
// Gradients on q are with respect to all 19 coordinates as the step uses them (the quaternion is
// renormalised inside the step, so its adjoint may have a radial part).
#pragma once

#include <vector>

#include "sim/adjoint.h"
#include "sim/data.h"
#include "sim/options.h"

namespace diffloco::sim {

// Gradients with respect to the parameters a user identifies.
struct ParamGrad {
  VecX mass;  // per body; each body's inertia scales with its mass (fixed shape and density map)
  double mu = 0, kappa = 0, kp = 0, kd = 0;
  double softKp = 0, softKd = 0, softKf = 0;  // soft model's penalty coefficients
  // Geometry and inertia, for identifying shapes (sysid: a cube's side length): per foot the
  // adjoint of Foot::offset (body frame), per body the adjoint of Body::inertia's (m, h, Io) taken
  // as independent entries (Io as a general 3x3 matrix: a symmetric change dIo pairs with
  // sum(Io .* dIo)). `mass` above is the contraction of `inertia` with (m, h, Io) / m.
  std::vector<Vec3> footOffset;
  std::vector<InertiaBar> inertia;
  void setZero(const Model& model) {
    mass = VecX::Zero(model.nbodies());
    mu = kappa = kp = kd = 0;
    softKp = softKd = softKf = 0;
    footOffset.assign(model.nspheres(), Vec3::Zero());
    inertia.assign(model.nbodies(), InertiaBar{});
  }
  // Adds the adjoint of the bodies' inertias (KinematicsBar::inertia) as is to `inertia` and,
  // since each body's inertia scales with its mass (dI/dm = I/m), contracted to `mass`.
  void addInertia(const Model& model, const std::vector<InertiaBar>& bar);
  ParamGrad& operator+=(const ParamGrad& o) {
    mass += o.mass;
    mu += o.mu, kappa += o.kappa, kp += o.kp, kd += o.kd;
    softKp += o.softKp, softKd += o.softKd, softKf += o.softKf;
    for (size_t f = 0; f < footOffset.size(); ++f) footOffset[f] += o.footOffset[f];
    for (size_t i = 0; i < inertia.size(); ++i) {
      inertia[i].m += o.inertia[i].m;
      inertia[i].h += o.inertia[i].h;
      inertia[i].Io += o.inertia[i].Io;
    }
    return *this;
  }
};

struct StepAdjoint {
  VecX q, v, qTarget;  // adjoints of the step's inputs (19, 18, 12)
  ParamGrad params;
  explicit StepAdjoint(const Model& model)
      : q(VecX::Zero(model.nq())), v(VecX::Zero(model.nv())), qTarget(VecX::Zero(model.nj())) {
    params.setZero(model);
  }
  void setZero(const Model& model) {
    q.setZero();
    v.setZero();
    qTarget.setZero();
    params.setZero(model);
  }
};

// Adds to `out` the adjoints of the inputs of step(model, opt, ., q, v, qTarget) given the adjoints
// gqNext, gvNext of its outputs. `data` is scratch (the forward is recomputed in it; the backward's
// own is in data.workspace()). For straight_through these are the smoothed model's adjoints at
// (q, v), not the hard step's; with a contact.backwardTerrain, the adjoints of the step on that
// terrain.
void stepVjp(const Model& model, const SimOptions& opt, Data& data,
             const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
             const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
             const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out);

}  // namespace diffloco::sim
