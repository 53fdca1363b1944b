// A robot with its dimensions fixed at compile time: a 12-joint quadruped's 13 bodies (base + 12
// joint bodies), 4 sphere feet and up to MAXLEG spheres on its legs (ANYmal's knee and shank
// tubes; every robot in configs/robots fits). Plain data with no pointers, so one copy lives in a
// kernel's constant parameter space and every loop has a constant bound. A robot of other sizes
// does not fit; toFixed (gpu/fixed_convert.h) refuses it.
#pragma once

#include "gpu/small_math.h"

namespace diffloco::gpu {

constexpr int NB = 13;          // bodies
constexpr int NJ = NB - 1;      // revolute joints
constexpr int NV = 6 + NJ;      // velocity dofs
constexpr int NQ = 7 + NJ;      // configuration entries
constexpr int NFEET = 4;        // sphere feet
constexpr int MAXLEG = 24;      // leg spheres (sim::Model::legSpheres; ANYmal: 6 per shank)
constexpr int MAXSPHERES = NFEET + MAXLEG;
// Spheres in one contact problem at most: the feet and up to 12 leg spheres. A step whose
// contact set is larger fails (as a non-finite one does) rather than dropping contacts; the
// arrays of the Delassus problem and the solver's tape are sized by it.
constexpr int MAXACTIVE = 16;
constexpr int MAXPATH = NV;  // upper bound on a sphere's dof path (base + its leg)

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
  // spheres, the feet first, then the leg spheres (sim::Model::sphere(j)): body, centre in that
  // body, radius; each sphere's dof path (root first), its length, and per pair of spheres the
  // length of the paths' common prefix (sim::Model::footDofs, footCommonDofs)
  int nspheres;  // NFEET + the robot's leg spheres
  int footBody[MAXSPHERES];
  V3 footOffset[MAXSPHERES];
  double footRadius[MAXSPHERES];
  unsigned char footDofs[MAXSPHERES][MAXPATH];
  unsigned char footDofCount[MAXSPHERES];
  unsigned char footCommon[MAXSPHERES][MAXSPHERES];
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
  // A foot or a leg sphere enters the contact problem from these depths (sim/contact.cpp's
  // entryDepth; toFixed sets them; 0 for both in the soft model's fixed sub-steps).
  double footEntry, legEntry;
  double softKp, softKd, softKf;
  int softSubsteps;
  // sim::TerrainContact::Closest: a sphere touches a height field at the surface point closest to
  // its centre (gpu/fixed_terrain.h), else along the vertical under it.
  bool closestTerrain;
  double kp, kd, effort, saturation, velocityLimit;  // actuator
};

// A height field's samples, read in place (host vector or device buffer), as sim::HeightField.
// heights == nullptr means the plane z = 0. cellBounds: sim::HeightField::cellBounds as two
// floats a cell (top, minNormalZ) in its layout, or nullptr: the leg spheres' depth bound then
// reads the samples around each sphere. monotone: sim::Interpolant::Monotone, else Catmull-Rom.
struct HeightFieldView {
  double originX, originY, spacing;
  int nx, ny;
  const double* heights;
  const float* cellBounds;
  bool monotone;
};

}  // namespace diffloco::gpu
