#include "sim/kinematics.h"

namespace diffloco::sim {

Mat3 baseRotation(const Eigen::Ref<const VecX>& q) {
  return Quat(q[3], q[4], q[5], q[6]).toRotationMatrix();
}

void forwardKinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  data.R[0] = baseRotation(q);
  data.p[0] = q.head<3>();
  data.X[0].E = data.R[0].transpose();
  data.X[0].r = data.p[0];
  for (int i = 1; i < model.nbodies(); ++i) {
    const Body& b = model.bodies[i];
    const int lam = b.parent;
    // Child frame = joint frame rotated by q about the axis: E = Rot(axis, q)^T E_tree.
    data.X[i].E = axisRotation(b.axis, q[6 + i]).transpose() * b.tree.E;
    data.X[i].r = b.tree.r;
    data.R[i] = data.R[lam] * data.X[i].E.transpose();
    data.p[i] = data.p[lam] + data.R[lam] * b.tree.r;
  }
}

void pointJacobian(const Model& model, const Data& data, int body, const Vec3& x,
                   Eigen::Ref<Eigen::Matrix<double, 3, Eigen::Dynamic>> J) {
  J.setZero();
  // Joints on the path to the root: column = (world axis) x (x - joint origin).
  for (int i = body; i > 0; i = model.bodies[i].parent)
    J.col(5 + i) = (data.R[i] * model.bodies[i].axis).cross(x - data.p[i]);
  // Base: linear velocity in world coordinates, angular velocity in base coordinates.
  J.leftCols<3>().setIdentity();
  J.middleCols<3>(3) = -skew(x - data.p[0]) * data.R[0];
}

}  // namespace diffloco::sim
