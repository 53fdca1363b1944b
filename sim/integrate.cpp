#include "sim/integrate.h"

namespace diffloco::sim {

Quat quatExp(const Vec3& w) {
  const double th = w.norm();
  const double half = 0.5 * th;
  // sin(th/2)/th with its Taylor series near zero.
  const double k = th < 1e-6 ? 0.5 - th * th / 48.0 : std::sin(half) / th;
  return Quat(std::cos(half), k * w.x(), k * w.y(), k * w.z());
}

void integrate(const Model& model, const Eigen::Ref<const VecX>& q,
               const Eigen::Ref<const VecX>& dv, Eigen::Ref<VecX> qOut) {
  const Quat q0(q[3], q[4], q[5], q[6]);
  const Vec3 dw = dv.segment<3>(3);
  const Vec3 pos = q.head<3>() + dv.head<3>();
  Quat q1 = q0 * quatExp(dw);
  q1.normalize();
  qOut.tail(model.nj()) = q.tail(model.nj()) + dv.tail(model.nj());
  qOut.head<3>() = pos;
  qOut[3] = q1.w();
  qOut[4] = q1.x();
  qOut[5] = q1.y();
  qOut[6] = q1.z();
}

}  // namespace diffloco::sim
