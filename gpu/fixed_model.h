// A robot with its dimensions fixed at compile time: a 12-joint quadruped's 13 bodies (base + 12
// joint bodies) and 4 sphere feet (ANYmal's; every robot in configs/robots has them). Plain data with no pointers, so one copy lives in a kernel's constant parameter
// space and every loop has a constant trip count. A robot of other sizes does not fit; toFixed
// (gpu/fixed_convert.h) refuses it.
#pragma once

#include "gpu/small_math.h"

namespace diffloco::gpu {

constexpr int NB = 13;          // bodies
constexpr int NJ = NB - 1;      // revolute joints
constexpr int NV = 6 + NJ;      // velocity dofs
constexpr int NQ = 7 + NJ;      // configuration entries
constexpr int NFEET = 4;        // sphere feet
constexpr int MAXPATH = NV;     // upper bound on a foot's dof path (base + its leg)

struct FixedModel {
  // bodies, parent before child (sim::Model's order); body i > 0 carries joint i - 1, dof 5 + i
  int parent[NB];
  M3 treeE[NB];  // parent -> joint frame at q = 0
  V3 treeR[NB];
  V3 axis[NB];
  SInertia inertia[NB];
  // joints
  double damping[NJ], armature[NJ], effort[NJ];
  // dof tree of the sparse factor: the parent of each velocity dof, -1 at the root
  int dofParent[NV];
  // feet: body, sphere centre in that body, radius; each foot's dof path (root first), its length,
  // and per pair of feet the length of the paths' common prefix
  int footBody[NFEET];
  V3 footOffset[NFEET];
  double footRadius[NFEET];
  int footDofs[NFEET][MAXPATH];
  int footDofCount[NFEET];
  int footCommon[NFEET][NFEET];
  V3 gravity;
};

enum class FixedContact { Hard = 0, Smoothed = 1, Soft = 2 };

// The parts of sim::SimOptions the fixed step reads (fixed integrator only).
struct FixedOptions {
  double dt;
  FixedContact model;
  double mu;
  int iterations;
  double kappa, cutoff;
  double softKp, softKd, softKf;
  int softSubsteps;
  double kp, kd, effort, saturation, velocityLimit;  // actuator
};

// A height field's samples, read in place (host vector or device buffer), as sim::HeightField.
// heights == nullptr means the plane z = 0.
struct HeightFieldView {
  double originX, originY, spacing;
  int nx, ny;
  const double* heights;
};

}  // namespace diffloco::gpu
