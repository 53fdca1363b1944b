// The adjoints of the model's and the options' parameters that a fixed-size step's VJP forms on
// request (sim::ParamGrad's entries on fixed-size data): what system identification reads.
// fixedStepVjp and fixedSoftStepVjp ADD to it when given one; the training's VJP passes none and
// pays nothing for it. toParamGrad (sim/pack.h) turns it into a sim::ParamGrad.
#pragma once

#include "sim/step_model.h"

namespace diffloco::sim {

template <class D>
struct ParamBar {
  double mu, kappa, kp, kd;       // friction, sigmoid stiffness, PD gains
  double softKp, softKd, softKf;  // the soft model's penalty coefficients
  V3 footOffset[D::MAXSPHERES];   // each sphere's centre in its body (StepModel::footOffset)
  SInertia inertia[D::NB];        // each body's (m, h, Io), Io as a general 3 x 3 matrix
};

using FixedParamBar = ParamBar<Quadruped>;  // transitional (sim/step_model.h)

template <class D>
DL_HD void setZero(ParamBar<D>& p) {
  p.mu = p.kappa = p.kp = p.kd = 0;
  p.softKp = p.softKd = p.softKf = 0;
  for (int j = 0; j < D::MAXSPHERES; ++j) p.footOffset[j] = zero3();
  for (int i = 0; i < D::NB; ++i) {
    p.inertia[i].m = 0;
    p.inertia[i].h = zero3();
    for (int k = 0; k < 9; ++k) p.inertia[i].Io.e[k] = 0;
  }
}

// a += b.
template <class D>
DL_HD void addTo(ParamBar<D>& a, const ParamBar<D>& b) {
  a.mu += b.mu, a.kappa += b.kappa, a.kp += b.kp, a.kd += b.kd;
  a.softKp += b.softKp, a.softKd += b.softKd, a.softKf += b.softKf;
  for (int j = 0; j < D::MAXSPHERES; ++j) a.footOffset[j] += b.footOffset[j];
  for (int i = 0; i < D::NB; ++i) {
    a.inertia[i].m += b.inertia[i].m;
    a.inertia[i].h += b.inertia[i].h;
    for (int k = 0; k < 9; ++k) a.inertia[i].Io.e[k] += b.inertia[i].Io.e[k];
  }
}

}  // namespace diffloco::sim
