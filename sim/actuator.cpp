#include "sim/actuator.h"

#include <algorithm>

namespace diffloco::sim {

double actuatorTorque(const ActuatorOptions& a, double effortLimit, double qTarget, double q,
                      double qd) {
  const double effort = std::min(a.effort, effortLimit);
  const double tau = a.kp * (qTarget - q) - a.kd * qd;
  // The speed is clipped where the envelope meets the opposite effort limit (as IsaacLab's DCMotor),
  // so that hi >= lo always holds.
  const double vmax = a.velocityLimit * (1.0 + effort / a.saturation);
  const double w = std::clamp(qd, -vmax, vmax) / a.velocityLimit;
  const double hi = std::min(a.saturation * (1.0 - w), effort);
  const double lo = std::max(a.saturation * (-1.0 - w), -effort);
  return std::clamp(tau, lo, hi);
}

void actuatorTorques(const Model& model, const ActuatorOptions& a,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& q,
                     const Eigen::Ref<const VecX>& v, Eigen::Ref<VecX> tau) {
  for (int j = 0; j < model.nj(); ++j)
    tau[j] = actuatorTorque(a, model.joints[j].effort, qTarget[j], q[7 + j], v[6 + j]);
}

}  // namespace diffloco::sim
