// The joint order map between our models and the MJCF written from them. MuJoCo numbers hinges in
// the depth-first order of the body tree; our joints follow the robot file's joint_order
// (sim::reorderJoints), which may list all hips first (IsaacLab's order). toMujocoState and
// fromMujocoState (mujoco/mujoco_model.h) go through this map; so must any code that reads qpos,
// qvel, qfrc_* or qM by index. Actuators are written in our order, so ctrl needs no map.
#pragma once

#include <mujoco/mujoco.h>

#include <vector>

#include "sim/model.h"

namespace diffloco::mj {

// Element k is our joint index of MuJoCo's hinge k: the identity for a depth-first model.
std::vector<int> mujocoJointOrder(const sim::Model& model);

// MuJoCo's mass matrix and bias forces (mujoco/mujoco_model.h) in our dof order, to compare with
// sim::crba and sim::biasForces.
sim::MatX massMatrix(const sim::Model& model, const mjModel* m, const mjData* d);
sim::VecX biasForces(const sim::Model& model, const mjModel* m, const mjData* d);

}  // namespace diffloco::mj
