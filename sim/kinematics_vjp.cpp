// Adjoints of the kinematic stages: base rotation, forward kinematics, point Jacobians, and the
// configuration update.
#include "sim/adjoint.h"
#include "sim/integrate.h"
#include "sim/quaternion.h"

namespace diffloco::sim {
namespace {

// Adjoint of a - (vector a with the skew matrix [a]x): the coefficients of S in the skew basis.
Vec3 skewVjp(const Mat3& S) {
  return Vec3(S(2, 1) - S(1, 2), S(0, 2) - S(2, 0), S(1, 0) - S(0, 1));
}

}  // namespace

void KinematicsBar::reset(const Model& model) {
  const int n = model.nbodies();
  E.assign(n, Mat3::Zero());
  R.assign(n, Mat3::Zero());
  p.assign(n, Vec3::Zero());
  inertia.assign(n, InertiaBar{});
}

Vec4 rotationMatrixVjp(const Vec4& q, const Mat3& B) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  // d/d(w, x, y, z) of Eigen's toRotationMatrix entries, contracted with B.
  return 2.0 * Vec4(-B(0, 1) * z + B(0, 2) * y + B(1, 0) * z - B(1, 2) * x - B(2, 0) * y +
                        B(2, 1) * x,
                    B(0, 1) * y + B(0, 2) * z + B(1, 0) * y - 2 * B(1, 1) * x - B(1, 2) * w +
                        B(2, 0) * z + B(2, 1) * w - 2 * B(2, 2) * x,
                    -2 * B(0, 0) * y + B(0, 1) * x + B(0, 2) * w + B(1, 0) * x + B(1, 2) * z -
                        B(2, 0) * w + B(2, 1) * z - 2 * B(2, 2) * y,
                    -2 * B(0, 0) * z - B(0, 1) * w + B(0, 2) * x + B(1, 0) * w - 2 * B(1, 1) * z +
                        B(1, 2) * y + B(2, 0) * x + B(2, 1) * y);
}

void forwardKinematicsVjp(const Model& model, const Data& data, const Eigen::Ref<const VecX>& q,
                          KinematicsBar& bar, Eigen::Ref<VecX> qbar) {
  // Leaves to root: R_i = R_parent E_i^T, p_i = p_parent + R_parent r_i.
  for (int i = model.nbodies() - 1; i > 0; --i) {
    const int lam = model.bodies[i].parent;
    const Mat3& E = data.X[i].E;
    bar.R[lam] += bar.R[i] * E;
    bar.E[i] += bar.R[i].transpose() * data.R[lam];
    bar.p[lam] += bar.p[i];
    bar.R[lam] += bar.p[i] * model.bodies[i].tree.r.transpose();
    // E_i = Rot(axis, q_i)^T E_tree, so dE_i / dq_i = -[axis]x E_i.
    qbar[6 + i] -= (bar.E[i].cwiseProduct(skew(model.bodies[i].axis) * E)).sum();
  }
  qbar.head<3>() += bar.p[0];
  qbar.segment<4>(3) += rotationMatrixVjp(q.segment<4>(3), bar.R[0]);
}

void pointJacobianVjp(const Model& model, const Data& data, int body, const Vec3& x,
                      const Eigen::Ref<const Eigen::Matrix<double, 3, Eigen::Dynamic>>& Jbar,
                      KinematicsBar& bar, Vec3& xbar) {
  // Joint columns: (R_i a) x (x - p_i).
  for (int i = body; i > 0; i = model.bodies[i].parent) {
    const Vec3& a = model.bodies[i].axis;
    const Vec3 w = data.R[i] * a, s = x - data.p[i];
    const Vec3 cb = Jbar.col(5 + i);
    bar.R[i] += s.cross(cb) * a.transpose();
    const Vec3 sb = cb.cross(w);
    xbar += sb;
    bar.p[i] -= sb;
  }
  // Base angular columns: -[x - p0]x R0 (the linear columns are constant).
  const Mat3 Mb = Jbar.middleCols<3>(3);
  const Vec3 s0 = x - data.p[0];
  bar.R[0] += skew(s0) * Mb;
  const Vec3 s0b = skewVjp(-Mb * data.R[0].transpose());
  xbar += s0b;
  bar.p[0] -= s0b;
}

void integrateVjp(const Model& model, const Eigen::Ref<const VecX>& q,
                  const Eigen::Ref<const VecX>& dv, const Eigen::Ref<const VecX>& qOutBar,
                  Eigen::Ref<VecX> qbar, Eigen::Ref<VecX> dvbar) {
  const int nj = model.nj();
  qbar.tail(nj) += qOutBar.tail(nj);
  dvbar.tail(nj) += qOutBar.tail(nj);
  qbar.head<3>() += qOutBar.head<3>();
  dvbar.head<3>() += qOutBar.head<3>();

  // Orientation: Q1 = Qp / |Qp| with Qp = Q0 * exp(dw).
  const Vec4 Q0 = q.segment<4>(3);
  const Vec3 dw = dv.segment<3>(3);
  const Quat e = quatExp(dw);
  const Vec4 Eq(e.w(), e.x(), e.y(), e.z());
  const Vec4 Qp = quatMul(Q0, Eq);
  const double n = Qp.norm();
  const Vec4 Q1 = Qp / n;
  const Vec4 Q1b = qOutBar.segment<4>(3);
  const Vec4 Qpb = (Q1b - Q1 * Q1.dot(Q1b)) / n;
  qbar.segment<4>(3) += quatMul(Qpb, quatConj(Eq));
  const Vec4 Eb = quatMul(quatConj(Q0), Qpb);

  // exp: E = (cos(th/2), k(th) w) with k = sin(th/2)/th; g = k'(th)/th.
  const double th = dw.norm();
  double k, g;
  if (th < 1e-4) {
    k = 0.5 - th * th / 48.0;
    g = -1.0 / 24.0 + th * th / 960.0;
  } else {
    k = std::sin(0.5 * th) / th;
    g = (0.5 * th * std::cos(0.5 * th) - std::sin(0.5 * th)) / (th * th * th);
  }
  const Vec3 Ebv = Eb.tail<3>();
  dvbar.segment<3>(3) += -0.5 * k * Eb[0] * dw + k * Ebv + g * dw.dot(Ebv) * dw;
}

}  // namespace diffloco::sim
