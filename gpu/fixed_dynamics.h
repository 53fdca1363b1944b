// The rigid-body stages of the fixed-size step: forward kinematics, bias forces (RNEA at zero
// acceleration), the joint-space inertia (CRBA, armature included), its tree-sparse factor
// H = L^T D L and solves with it. The same recursions as sim/kinematics.cpp, sim/rnea.cpp,
// sim/crba.cpp and sim/cholesky.cpp, on fixed-size arrays (no heap, no exceptions).
#pragma once

#include "gpu/fixed_model.h"

namespace diffloco::gpu {

// Per-world scratch of one step (sim::Data's forward part).
struct FixedData {
  M3 E[NB];            // parent -> body rotation of X[i] (X[i].r is the model's treeR)
  M3 R[NB];            // body -> world
  V3 p[NB];            // body origin, world
  double LD[NV * NV];  // H's lower triangle on the dof tree, then L (below the diagonal) and D
  double tau[NV];      // bias forces minus joint torques
};

// What the VJP reads of RNEA and CRBA besides FixedData (sim::Data's vel, acc, f, Ic): written by
// biasForces and crba when given one.
struct FixedDynamicsTape {
  SMotion vel[NB], acc[NB];
  SForce f[NB];     // after the inward pass
  SInertia Ic[NB];  // composite inertias
};

DL_HD M3 quatToMatrix(double w, double x, double y, double z) {  // Eigen's toRotationMatrix
  const double tx = 2 * x, ty = 2 * y, tz = 2 * z;
  const double twx = tx * w, twy = ty * w, twz = tz * w;
  const double txx = tx * x, txy = ty * x, txz = tz * x;
  const double tyy = ty * y, tyz = tz * y, tzz = tz * z;
  return M3{{1 - (tyy + tzz), txy - twz, txz + twy, txy + twz, 1 - (txx + tzz), tyz - twx,
             txz - twy, tyz + twx, 1 - (txx + tyy)}};
}

DL_HD void forwardKinematics(const FixedModel& m, FixedData& d, const double* q) {
  d.R[0] = quatToMatrix(q[3], q[4], q[5], q[6]);
  d.p[0] = v3(q[0], q[1], q[2]);
  d.E[0] = transpose(d.R[0]);
  for (int i = 1; i < NB; ++i) {
    const int lam = m.parent[i];
    d.E[i] = mulTN(axisRotation(m.axis[i], q[6 + i]), m.treeE[i]);
    d.R[i] = mulNT(d.R[lam], d.E[i]);
    d.p[i] = d.p[lam] + mul(d.R[lam], m.treeR[i]);
  }
}

// tau = RNEA(q, v, 0): Coriolis, centrifugal and gravity forces (sim::biasForces).
DL_HD void biasForces(const FixedModel& m, FixedData& d, const double* v,
                      FixedDynamicsTape* tape = nullptr) {
  SMotion vel[NB], acc[NB];
  SForce f[NB];
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
  for (int i = 1; i < NB; ++i) {
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
  for (int i = NB - 1; i > 0; --i) {
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
    for (int i = 0; i < NB; ++i) {
      tape->vel[i] = vel[i];
      tape->acc[i] = acc[i];
      tape->f[i] = f[i];
    }
}

// H = CRBA(q) + armature into d.LD's lower triangle (the entries the sparse factor reads).
DL_HD void crba(const FixedModel& m, FixedData& d, FixedDynamicsTape* tape = nullptr) {
  SInertia Ic[NB];
  for (int i = 0; i < NB; ++i) Ic[i] = m.inertia[i];
  for (int i = NB - 1; i > 0; --i) addInertia(Ic[m.parent[i]], toParent(Ic[i], d.E[i], m.treeR[i]));
  if (tape)
    for (int i = 0; i < NB; ++i) tape->Ic[i] = Ic[i];
  double* H = d.LD;
  for (int i = NB - 1; i > 0; --i) {
    const int k = 5 + i;
    const V3& axis = m.axis[i];
    SForce F{-cross(Ic[i].h, axis), mul(Ic[i].Io, axis)};
    H[k * NV + k] = dot(axis, F.n) + m.armature[i - 1];
    int j = i;
    while (m.parent[j] > 0) {
      F = xApplyTranspose(d.E[j], m.treeR[j], F);
      j = m.parent[j];
      H[k * NV + 5 + j] = dot(m.axis[j], F.n);  // row k > column 5 + j: the lower triangle
    }
    F = xApplyTranspose(d.E[j], m.treeR[j], F);
    const V3 fw = mul(d.R[0], F.f);
    for (int r = 0; r < 3; ++r) {
      H[k * NV + r] = fw[r];
      H[k * NV + 3 + r] = F.n[r];
    }
  }
  const SInertia& I0 = Ic[0];
  const M3 Rh = mul(d.R[0], skew(I0.h));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c) H[r * NV + c] = r == c ? I0.m : 0.0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      H[(3 + r) * NV + c] = -Rh(c, r);  // block (3, 0) = -Rh^T
      if (c <= r) H[(3 + r) * NV + 3 + c] = I0.Io(r, c);
    }
}

// In-place H = L^T D L on the dof tree (sim::factorize).
DL_HD void factorize(const FixedModel& m, FixedData& d) {
  double* A = d.LD;
  for (int k = NV - 1; k >= 0; --k) {
    const double dk = A[k * NV + k];
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) {
      const double a = A[k * NV + i] / dk;
      for (int j = i; j >= 0; j = m.dofParent[j]) A[i * NV + j] -= a * A[k * NV + j];
      A[k * NV + i] = a;
    }
  }
}

DL_HD void solveL(const FixedModel& m, const FixedData& d, double* x) {
  for (int k = 0; k < NV; ++k)
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) x[k] -= d.LD[k * NV + i] * x[i];
}

// x <- H^-1 x (sim::solve).
DL_HD void solveH(const FixedModel& m, const FixedData& d, double* x) {
  for (int k = NV - 1; k >= 0; --k)
    for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i]) x[i] -= d.LD[k * NV + i] * x[k];
  for (int k = 0; k < NV; ++k) x[k] /= d.LD[k * NV + k];
  solveL(m, d, x);
}

}  // namespace diffloco::gpu
