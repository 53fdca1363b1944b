// The adjoints of the parameters a user identifies, on the host objects (sim::Model's bodies and
// spheres): what a step's or a rollout's VJP hands back (sim/stage_rollout.h; toParamGrad in
// sim/pack.h turns the stages' ParamBar<D> into one).
#pragma once

#include <vector>

#include "sim/model.h"

namespace diffloco::sim {

// The adjoint of one body's inertia (m, h, Io), Io taken as a general 3x3 matrix.
struct InertiaBar {
  double m = 0;
  Vec3 h = Vec3::Zero();
  Mat3 Io = Mat3::Zero();
};

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
  // since each body's inertia scales with its mass (dI/dm = I/m), contracted to `mass`. Defined
  // in sim/pack.cpp.
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

}  // namespace diffloco::sim
