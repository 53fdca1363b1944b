// The body poses of one configuration on the host (forward kinematics' output, sim/kinematics.h),
// for what reads a robot's geometry outside the step: observations, rewards, viewers, the robot
// tools. One per world or thread; the step's own scratch is StepData (sim/rigid_body.h).
#pragma once

#include <vector>

#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::sim {

struct Data {
  explicit Data(const Model& model);

  // body poses at the configuration last given to forwardKinematics
  std::vector<Transform> X;  // parent -> body; X[0] is world -> base
  std::vector<Mat3> R;       // body -> world rotation
  std::vector<Vec3> p;       // body origin in world
};

}  // namespace diffloco::sim
