// What a step on plain arrays reads: the robot (StepModel) with its dimensions fixed at compile
// time, the options (FixedOptions) and the ground (HeightFieldView). The sizes are a parameter
// (Dims), so that the arrays are plain data with no pointers (one copy lives in a kernel's constant
// parameter space) and of a constant size. Quadruped holds the 12-joint quadrupeds' sizes (13
// bodies, 4 sphere feet, up to 24 leg spheres: every robot in configs/robots fits); SingleBody
// those of one free body with spheres (the identification's cube, the toys). A robot of other
// sizes fits neither, and toStepModel (sim/pack.h) refuses it.
#pragma once

#include "sim/small_math.h"

namespace diffloco::sim {

// The sizes a step's arrays are declared with. The loops over spheres, contacts and sweeps run to
// the runtime counts (nspheres, nc, iterations) these bound, so an instantiation with larger bounds
// does the same arithmetic.
template <int Bodies, int Feet, int LegSpheres, int MaxGsIter, int MaxSoftSubsteps>
struct Dims {
  static constexpr int NB = Bodies;  // bodies
  static constexpr int NJ = NB - 1;  // revolute joints
  static constexpr int NV = 6 + NJ;  // velocity dofs
  static constexpr int NQ = 7 + NJ;  // configuration entries
  // The length of the per-joint arrays: a single body (NJ = 0) keeps one unused entry, since C++
  // has no zero-length arrays. The loops run to NJ.
  static constexpr int NJSLOTS = NJ > 0 ? NJ : 1;
  static constexpr int NFEET = Feet;         // sphere feet
  static constexpr int MAXLEG = LegSpheres;  // leg spheres (sim::Model::legSpheres)
  static constexpr int MAXSPHERES = NFEET + MAXLEG;
  // Spheres in one contact problem at most: every sphere, so that no contact set overflows. The
  // arrays of the Delassus problem and the solver's tape are sized by it.
  static constexpr int MAXACTIVE = MAXSPHERES;
  static constexpr int MAXPATH = NV;  // upper bound on a sphere's dof path (base + its leg)
  static constexpr int MAXGSITER = MaxGsIter;  // Gauss-Seidel sweeps the solver's tape holds
  static constexpr int MAXSOFTSUBSTEPS = MaxSoftSubsteps;  // soft sub-steps the soft VJP holds
};

// The 12-joint quadrupeds: 13 bodies, 4 feet, up to 24 leg spheres (ANYmal: 6 per shank). A
// struct rather than an alias, so that it can be declared ahead (batch/batch_sim.h) and reads as its
// name in symbols.
struct Quadruped : Dims<13, 4, 24, 20, 32> {};

// One free body (no joints) with up to 8 spheres, all of them feet: the identification's cube has
// one at each corner (sysid::cubeModel), the toys fewer (nspheres bounds the loops).
struct SingleBody : Dims<1, 8, 0, 20, 32> {};

template <class D>
struct StepModel {
  // bodies, parent before child (sim::Model's order); body i > 0 carries joint i - 1, dof 5 + i
  int parent[D::NB];
  M3 treeE[D::NB];  // parent -> joint frame at q = 0
  V3 treeR[D::NB];
  V3 axis[D::NB];
  SInertia inertia[D::NB];
  // joints
  double damping[D::NJSLOTS], armature[D::NJSLOTS], effort[D::NJSLOTS];
  // dof tree of the sparse factor: the parent of each velocity dof, -1 at the root
  int dofParent[D::NV];
  // spheres, the feet first, then the leg spheres (sim::Model::sphere(j)): body, centre in that
  // body, radius; each sphere's dof path (root first), its length, and per pair of spheres the
  // length of the paths' common prefix (sim::Model::footDofs, footCommonDofs)
  int nspheres;  // the feet (D::NFEET, or fewer without leg spheres) and the leg spheres
  int footBody[D::MAXSPHERES];
  V3 footOffset[D::MAXSPHERES];
  double footRadius[D::MAXSPHERES];
  unsigned char footDofs[D::MAXSPHERES][D::MAXPATH];
  unsigned char footDofCount[D::MAXSPHERES];
  unsigned char footCommon[D::MAXSPHERES][D::MAXSPHERES];
  V3 gravity;
};

// Transitional names for the quadruped instantiation, which the code outside the stages uses.
using FixedModel = StepModel<Quadruped>;
inline constexpr int NB = Quadruped::NB;
inline constexpr int NJ = Quadruped::NJ;
inline constexpr int NV = Quadruped::NV;
inline constexpr int NQ = Quadruped::NQ;
inline constexpr int NFEET = Quadruped::NFEET;
inline constexpr int MAXLEG = Quadruped::MAXLEG;
inline constexpr int MAXSPHERES = Quadruped::MAXSPHERES;
inline constexpr int MAXACTIVE = Quadruped::MAXACTIVE;
inline constexpr int MAXPATH = Quadruped::MAXPATH;
inline constexpr int MAXGSITER = Quadruped::MAXGSITER;
inline constexpr int MAXSOFTSUBSTEPS = Quadruped::MAXSOFTSUBSTEPS;

enum class FixedContact { Hard = 0, Smoothed = 1, Soft = 2 };

// The parts of sim::SimOptions the fixed step reads (fixed integrator only).
struct FixedOptions {
  double dt;
  FixedContact model;
  double mu;
  int iterations;
  double kappa, cutoff;
  // A foot or a leg sphere enters the contact problem from these depths (toStepOptions sets
  // them; 0 for both in the soft model's fixed sub-steps).
  double footEntry, legEntry;
  double softKp, softKd, softKf;
  int softSubsteps;
  // sim::TerrainContact::Closest: a sphere touches a height field at the surface point closest to
  // its centre (sim/ground.h), else along the vertical under it.
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

}  // namespace diffloco::sim
