// Adjoints of the kinematic stages on fixed-size data: the base rotation, forward kinematics, a
// point Jacobian and the configuration update; each function ADDS the adjoints of its inputs.
// Host and device code.
#pragma once

#include "sim/rigid_body.h"

namespace diffloco::sim {

// Adjoints of the kinematic quantities of a configuration: per body the parent->body rotation E,
// the world rotation R and position p.
template <class D>
struct KinBar {
  M3 E[D::NB], R[D::NB];
  V3 p[D::NB];
};

using FixedKinBar = KinBar<Quadruped>;  // transitional (sim/step_model.h)

template <class D>
DL_HD void setZero(KinBar<D>& b) {
  for (int i = 0; i < D::NB; ++i) {
    for (int k = 0; k < 9; ++k) b.E[i].e[k] = b.R[i].e[k] = 0;
    b.p[i] = zero3();
  }
}

DL_HD void addTo(M3& a, const M3& b) {
  for (int k = 0; k < 9; ++k) a.e[k] += b.e[k];
}
DL_HD void subFrom(M3& a, const M3& b) {
  for (int k = 0; k < 9; ++k) a.e[k] -= b.e[k];
}
DL_HD M3 outer(const V3& a, const V3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a[i] * b[j];
  return r;
}
DL_HD V3& operator-=(V3& a, const V3& b) {
  a[0] -= b[0];
  a[1] -= b[1];
  a[2] -= b[2];
  return a;
}

// Adjoint of a -> [a]x: the coefficients of S in the skew basis.
DL_HD V3 skewVjp(const M3& S) {
  return v3(S(2, 1) - S(1, 2), S(0, 2) - S(2, 0), S(1, 0) - S(0, 1));
}

// Adjoint of quatToMatrix(w, x, y, z) given the matrix's adjoint B, added to out[0..3]
// (sim::rotationMatrixVjp).
DL_HD void rotationMatrixVjp(const double* quat, const M3& B, double* out) {
  const double w = quat[0], x = quat[1], y = quat[2], z = quat[3];
  out[0] +=
      2.0 * (-B(0, 1) * z + B(0, 2) * y + B(1, 0) * z - B(1, 2) * x - B(2, 0) * y + B(2, 1) * x);
  out[1] += 2.0 * (B(0, 1) * y + B(0, 2) * z + B(1, 0) * y - 2 * B(1, 1) * x - B(1, 2) * w +
                   B(2, 0) * z + B(2, 1) * w - 2 * B(2, 2) * x);
  out[2] += 2.0 * (-2 * B(0, 0) * y + B(0, 1) * x + B(0, 2) * w + B(1, 0) * x + B(1, 2) * z -
                   B(2, 0) * w + B(2, 1) * z - 2 * B(2, 2) * y);
  out[3] += 2.0 * (-2 * B(0, 0) * z - B(0, 1) * w + B(0, 2) * x + B(1, 0) * w - 2 * B(1, 1) * z +
                   B(1, 2) * y + B(2, 0) * x + B(2, 1) * y);
}

// Adjoint of forwardKinematics(q): bar -> qbar. Consumes bar.R and
// bar.p (propagated to the root in place).
template <class D>
DL_HD void forwardKinematicsVjp(const StepModel<D>& m, const StepData<D>& d, const double* q,
                                KinBar<D>& bar, double* qbar) {
  for (int i = D::NB - 1; i > 0; --i) {
    const int lam = m.parent[i];
    const M3& E = d.E[i];
    addTo(bar.R[lam], mul(bar.R[i], E));
    addTo(bar.E[i], mulTN(bar.R[i], d.R[lam]));
    bar.p[lam] += bar.p[i];
    addTo(bar.R[lam], outer(bar.p[i], m.treeR[i]));
    // E_i = Rot(axis, q_i)^T E_tree, so dE_i / dq_i = -[axis]x E_i.
    const M3 SE = mul(skew(m.axis[i]), E);
    double s = 0;
    for (int k = 0; k < 9; ++k) s += bar.E[i].e[k] * SE.e[k];
    qbar[6 + i] -= s;
  }
  for (int r = 0; r < 3; ++r) qbar[r] += bar.p[0][r];
  rotationMatrixVjp(q + 3, bar.R[0], qbar + 3);
}

// Adjoint of the point Jacobian of `body` at x (world rows, 3 x NV; sim::pointJacobianVjp):
// Jbar -> bar.R, bar.p and xbar. Reads the base angular columns and the body's path columns.
template <class D>
DL_HD void pointJacobianVjp(const StepModel<D>& m, const StepData<D>& d, int body, const V3& x,
                            const double (*Jbar)[D::NV], KinBar<D>& bar, V3& xbar) {
  for (int i = body; D::NJ > 0 && i > 0; i = m.parent[i]) {
    const V3& a = m.axis[i];
    const V3 w = mul(d.R[i], a), s = x - d.p[i];
    const V3 cb = v3(Jbar[0][5 + i], Jbar[1][5 + i], Jbar[2][5 + i]);
    addTo(bar.R[i], outer(cross(s, cb), a));
    const V3 sb = cross(cb, w);
    xbar += sb;
    bar.p[i] -= sb;
  }
  M3 Mb;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) Mb(r, c) = Jbar[r][3 + c];
  const V3 s0 = x - d.p[0];
  addTo(bar.R[0], mul(skew(s0), Mb));
  const M3 MR = mulNT(Mb, d.R[0]);
  const V3 s0b = -skewVjp(MR);
  xbar += s0b;
  bar.p[0] -= s0b;
}

// Rows of the point Jacobian of `body` at x (sim::pointJacobian): 3 x NV, world rows.
template <class D>
DL_HD void pointJacobian(const StepModel<D>& m, const StepData<D>& d, int body, const V3& x,
                         double (*J)[D::NV]) {
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < D::NV; ++k) J[r][k] = 0;
  for (int i = body; D::NJ > 0 && i > 0; i = m.parent[i]) {
    const V3 col = cross(mul(d.R[i], m.axis[i]), x - d.p[i]);
    for (int r = 0; r < 3; ++r) J[r][5 + i] = col[r];
  }
  const M3 base = mul(skew(x - d.p[0]), d.R[0]);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      J[r][k] = r == k ? 1.0 : 0.0;
      J[r][3 + k] = -base(r, k);
    }
}

DL_HD void quatMul(const double* a, const double* b, double* out) {
  out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// Adjoint of integrate(q, dv): qOutBar -> qbar, dvbar.
template <class D>
DL_HD void integrateVjp(const double* q, const double* dv, const double* qOutBar, double* qbar,
                        double* dvbar) {
  for (int j = 0; j < D::NJ; ++j) {
    qbar[7 + j] += qOutBar[7 + j];
    dvbar[6 + j] += qOutBar[7 + j];
  }
  for (int r = 0; r < 3; ++r) {
    qbar[r] += qOutBar[r];
    dvbar[r] += qOutBar[r];
  }
  // Orientation: Q1 = Qp / |Qp| with Qp = Q0 * exp(dw).
  const double* Q0 = q + 3;
  const double* dw = dv + 3;
  const double th0 = sqrt(dw[0] * dw[0] + dw[1] * dw[1] + dw[2] * dw[2]);
  const double half = 0.5 * th0;
  const double k0 = th0 < 1e-6 ? 0.5 - th0 * th0 / 48.0 : sin(half) / th0;
  const double Eq[4] = {cos(half), k0 * dw[0], k0 * dw[1], k0 * dw[2]};
  double Qp[4];
  quatMul(Q0, Eq, Qp);
  const double n = sqrt(Qp[0] * Qp[0] + Qp[1] * Qp[1] + Qp[2] * Qp[2] + Qp[3] * Qp[3]);
  double Q1[4], Qpb[4];
  for (int r = 0; r < 4; ++r) Q1[r] = Qp[r] / n;
  const double* Q1b = qOutBar + 3;
  const double d1 = Q1[0] * Q1b[0] + Q1[1] * Q1b[1] + Q1[2] * Q1b[2] + Q1[3] * Q1b[3];
  for (int r = 0; r < 4; ++r) Qpb[r] = (Q1b[r] - Q1[r] * d1) / n;
  const double EqConj[4] = {Eq[0], -Eq[1], -Eq[2], -Eq[3]};
  const double Q0Conj[4] = {Q0[0], -Q0[1], -Q0[2], -Q0[3]};
  double qb[4], Eb[4];
  quatMul(Qpb, EqConj, qb);
  for (int r = 0; r < 4; ++r) qbar[3 + r] += qb[r];
  quatMul(Q0Conj, Qpb, Eb);
  // exp: E = (cos(th/2), k(th) w) with k = sin(th/2)/th; g = k'(th)/th.
  const double th = th0;
  double k, g;
  if (th < 1e-4) {
    k = 0.5 - th * th / 48.0;
    g = -1.0 / 24.0 + th * th / 960.0;
  } else {
    k = sin(0.5 * th) / th;
    g = (0.5 * th * cos(0.5 * th) - sin(0.5 * th)) / (th * th * th);
  }
  const double dwEb = dw[0] * Eb[1] + dw[1] * Eb[2] + dw[2] * Eb[3];
  for (int r = 0; r < 3; ++r)
    dvbar[3 + r] += -0.5 * k * Eb[0] * dw[r] + k * Eb[1 + r] + g * dwEb * dw[r];
}

}  // namespace diffloco::sim
