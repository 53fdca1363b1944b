// Composite-rigid-body algorithm (Featherstone, RBDA Table 6.2) for the joint-space inertia matrix.
#pragma once

#include "sim/data.h"

namespace diffloco::sim {

// Fills data.H (both triangles) for the configuration of the last forwardKinematics call, with the
// joint armature added on the diagonal.
void crba(const Model& model, Data& data);

}  // namespace diffloco::sim
