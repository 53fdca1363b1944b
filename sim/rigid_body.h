// The rigid-body stages of the fixed-size step: forward kinematics, bias forces (RNEA at zero
// acceleration), the joint-space inertia (CRBA, armature included), its tree-sparse factor
// H = L^T D L (Featherstone's LTDL on the dof tree) and solves with it, on fixed-size arrays (no
// heap, no exceptions).
#pragma once

#include "sim/step_model.h"

namespace diffloco::sim {

// Per-world scratch of one step's dynamics.
template <class D>
struct StepData {
  M3 E[D::NB];  // parent -> body rotation of X[i] (X[i].r is the model's treeR)
  M3 R[D::NB];  // body -> world
  V3 p[D::NB];  // body origin, world
  // H's lower triangle on the dof tree, then L (below the diagonal) and D
  double LD[D::NV * D::NV];
  double tau[D::NV];  // bias forces minus joint torques
};

// What the VJP reads of RNEA and CRBA besides StepData (velocities, accelerations, forces, composite
// inertias): written by biasForces and crba when given one.
template <class D>
struct DynamicsTape {
  SMotion vel[D::NB], acc[D::NB];
  SForce f[D::NB];     // after the inward pass
  SInertia Ic[D::NB];  // composite inertias
};

using FixedData = StepData<Quadruped>;  // transitional (sim/step_model.h)
using FixedDynamicsTape = DynamicsTape<Quadruped>;

DL_HD M3 quatToMatrix(double w, double x, double y, double z) {  // Eigen's toRotationMatrix
  const double tx = 2 * x, ty = 2 * y, tz = 2 * z;
  const double twx = tx * w, twy = ty * w, twz = tz * w;
  const double txx = tx * x, txy = ty * x, txz = tz * x;
  const double tyy = ty * y, tyz = tz * y, tzz = tz * z;
  return M3{{1 - (tyy + tzz), txy - twz, txz + twy, txy + twz, 1 - (txx + tzz), tyz - twx,
             txz - twy, tyz + twx, 1 - (txx + tyy)}};
}

template <class D>
DL_HD void forwardKinematics(const StepModel<D>& m, StepData<D>& d, const double* q) {
  d.R[0] = quatToMatrix(q[3], q[4], q[5], q[6]);
  d.p[0] = v3(q[0], q[1], q[2]);
  d.E[0] = transpose(d.R[0]);
  for (int i = 1; i < D::NB; ++i) {
    const int lam = m.parent[i];
    d.E[i] = mulTN(axisRotation(m.axis[i], q[6 + i]), m.treeE[i]);
    d.R[i] = mulNT(d.R[lam], d.E[i]);
    d.p[i] = d.p[lam] + mul(d.R[lam], m.treeR[i]);
  }
}

// tau = RNEA(q, v, 0): Coriolis, centrifugal and gravity forces.
template <class D>
DL_HD void biasForces(const StepModel<D>& m, StepData<D>& d, const double* v,
                      DynamicsTape<D>* tape = nullptr) {
  SMotion vel[D::NB], acc[D::NB];
  SForce f[D::NB];
  const M3& R0 = d.R[0];
  vel[0].v = mulT(R0, v3(v[0], v[1], v[2]));
  vel[0].w = v3(v[3], v[4], v[5]);
  acc[0].v = -mulT(R0, m.gravity) - cross(vel[0].w, vel[0].v);
  acc[0].w = zero3();
  f[0] = inertiaTimes(m.inertia[0], acc[0]);
  {
    const SForce c = crossForce(vel[0], inertiaTimes(m.inertia[0], vel[0]));
    f[0] = {f[0].f + c.f, f[0].n + c.n};
  }
  for (int i = 1; i < D::NB; ++i) {
    const int lam = m.parent[i];
    const SMotion vJ{zero3(), v[5 + i] * m.axis[i]};
    const SMotion vp = xApply(d.E[i], m.treeR[i], vel[lam]);
    vel[i] = {vp.v + vJ.v, vp.w + vJ.w};
    const SMotion ap = xApply(d.E[i], m.treeR[i], acc[lam]);
    const SMotion c = crossMotion(vel[i], vJ);
    acc[i] = {ap.v + c.v, ap.w + c.w};
    const SForce Ia = inertiaTimes(m.inertia[i], acc[i]);
    const SForce cf = crossForce(vel[i], inertiaTimes(m.inertia[i], vel[i]));
    f[i] = {Ia.f + cf.f, Ia.n + cf.n};
  }
  for (int i = D::NB - 1; i > 0; --i) {
    const int lam = m.parent[i];
    d.tau[5 + i] = dot(m.axis[i], f[i].n);
    const SForce fp = xApplyTranspose(d.E[i], m.treeR[i], f[i]);
    f[lam] = {f[lam].f + fp.f, f[lam].n + fp.n};
  }
  const V3 fw = mul(R0, f[0].f);
  for (int k = 0; k < 3; ++k) {
    d.tau[k] = fw[k];
    d.tau[3 + k] = f[0].n[k];
  }
  if (tape)
    for (int i = 0; i < D::NB; ++i) {
      tape->vel[i] = vel[i];
      tape->acc[i] = acc[i];
      tape->f[i] = f[i];
    }
}

// H = CRBA(q) + armature into d.LD's lower triangle (the entries the sparse factor reads).
template <class D>
DL_HD void crba(const StepModel<D>& m, StepData<D>& d, DynamicsTape<D>* tape = nullptr) {
  SInertia Ic[D::NB];
  for (int i = 0; i < D::NB; ++i) Ic[i] = m.inertia[i];
  for (int i = D::NB - 1; i > 0; --i)
    addInertia(Ic[m.parent[i]], toParent(Ic[i], d.E[i], m.treeR[i]));
  if (tape)
    for (int i = 0; i < D::NB; ++i) tape->Ic[i] = Ic[i];
  double* H = d.LD;
  for (int i = D::NB - 1; i > 0; --i) {
    const int k = 5 + i;
    const V3& axis = m.axis[i];
    SForce F{-cross(Ic[i].h, axis), mul(Ic[i].Io, axis)};
    H[k * D::NV + k] = dot(axis, F.n) + m.armature[i - 1];
    int j = i;
    while (m.parent[j] > 0) {
      F = xApplyTranspose(d.E[j], m.treeR[j], F);
      j = m.parent[j];
      H[k * D::NV + 5 + j] = dot(m.axis[j], F.n);  // row k > column 5 + j: the lower triangle
    }
    F = xApplyTranspose(d.E[j], m.treeR[j], F);
    const V3 fw = mul(d.R[0], F.f);
    for (int r = 0; r < 3; ++r) {
      H[k * D::NV + r] = fw[r];
      H[k * D::NV + 3 + r] = F.n[r];
    }
  }
  const SInertia& I0 = Ic[0];
  const M3 Rh = mul(d.R[0], skew(I0.h));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c) H[r * D::NV + c] = r == c ? I0.m : 0.0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      H[(3 + r) * D::NV + c] = -Rh(c, r);  // block (3, 0) = -Rh^T
      if (c <= r) H[(3 + r) * D::NV + 3 + c] = I0.Io(r, c);
    }
}

// In-place H = L^T D L on the dof tree (sim::factorize).
template <class D>
DL_HD void factorize(const StepModel<D>& m, StepData<D>& d) {
  double* A = d.LD;
  for (int k = D::NV - 1; k >= 0; --k) {
    const double dk = A[k * D::NV + k];
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) {
      const double a = A[k * D::NV + i] / dk;
      for (int j = i; j >= 0; j = m.dofParent[j]) A[i * D::NV + j] -= a * A[k * D::NV + j];
      A[k * D::NV + i] = a;
    }
  }
}

template <class D>
DL_HD void solveL(const StepModel<D>& m, const StepData<D>& d, double* x) {
  for (int k = 0; k < D::NV; ++k)
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) x[k] -= d.LD[k * D::NV + i] * x[i];
}

// x <- H^-1 x (sim::solve).
template <class D>
DL_HD void solveH(const StepModel<D>& m, const StepData<D>& d, double* x) {
  for (int k = D::NV - 1; k >= 0; --k)
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) x[i] -= d.LD[k * D::NV + i] * x[k];
  for (int k = 0; k < D::NV; ++k) x[k] /= d.LD[k * D::NV + k];
  solveL(m, d, x);
}

}  // namespace diffloco::sim
