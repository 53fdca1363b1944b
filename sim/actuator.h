// The PD actuator law with torque limit and the speed-torque envelope of an electric drive.
#pragma once

#include "sim/model.h"
#include "sim/options.h"

namespace diffloco::sim {

// Torque of one joint for target qTarget at position q and velocity qd.
double actuatorTorque(const ActuatorOptions& a, double effortLimit, double qTarget, double q,
                      double qd);

// Joint torques (size nj) for all joints; the effort limit is min(options, URDF).
void actuatorTorques(const Model& model, const ActuatorOptions& a,
                     const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& q,
                     const Eigen::Ref<const VecX>& v, Eigen::Ref<VecX> tau);

}  // namespace diffloco::sim
