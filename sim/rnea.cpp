#include "sim/rnea.h"

namespace diffloco::sim {
namespace {

// Shared implementation; `a` may be null for zero acceleration.
void rneaImpl(const Model& model, Data& data, const Eigen::Ref<const VecX>& v, const double* a) {
  const int nb = model.nbodies();
  // Base twist in base coordinates: (R^T v_world, w). Its spatial acceleration is
  // (R^T a_world - w x (R^T v_world), dw) because base axes rotate; gravity enters as a fictitious
  // upward acceleration of the base (Featherstone's trick), so no body needs a gravity term.
  const Mat3& R0 = data.R[0];
  Motion& v0 = data.vel[0];
  v0.v = R0.transpose() * v.segment<3>(0);
  v0.w = v.segment<3>(3);
  Motion& a0 = data.acc[0];
  a0.v = -(R0.transpose() * model.gravity) - v0.w.cross(v0.v);
  a0.w.setZero();
  if (a) {
    a0.v += R0.transpose() * Vec3(a[0], a[1], a[2]);
    a0.w += Vec3(a[3], a[4], a[5]);
  }
  data.f[0] = model.bodies[0].inertia * a0 + crossForce(v0, model.bodies[0].inertia * v0);

  // Outward pass: velocities, accelerations, and the force each body needs.
  for (int i = 1; i < nb; ++i) {
    const Body& b = model.bodies[i];
    const Transform& X = data.X[i];
    const double qd = v[5 + i];
    const Motion vJ{Vec3::Zero(), b.axis * qd};
    data.vel[i] = X.apply(data.vel[b.parent]) + vJ;
    data.acc[i] = X.apply(data.acc[b.parent]) + cross(data.vel[i], vJ);
    if (a) data.acc[i].w += b.axis * a[5 + i];
    const Force Iv = b.inertia * data.vel[i];
    data.f[i] = b.inertia * data.acc[i] + crossForce(data.vel[i], Iv);
  }
  // Inward pass: project onto joint axes and accumulate into parents.
  for (int i = nb - 1; i > 0; --i) {
    const Body& b = model.bodies[i];
    data.tau[5 + i] = b.axis.dot(data.f[i].n);
    data.f[b.parent] += data.X[i].applyTranspose(data.f[i]);
  }
  data.tau.segment<3>(0) = R0 * data.f[0].f;  // S_base^T f: the force in world axes
  data.tau.segment<3>(3) = data.f[0].n;
}

}  // namespace

void rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& v,
          const Eigen::Ref<const VecX>& a) {
  rneaImpl(model, data, v, a.data());
}

void biasForces(const Model& model, Data& data, const Eigen::Ref<const VecX>& v) {
  rneaImpl(model, data, v, nullptr);
}

}  // namespace diffloco::sim
