// MuJoCo bridge: an MJCF model generated from our parsed sim::Model (so both simulators see the
// same bodies, inertias and joint frames), the state/velocity maps between the two conventions, and
// the mj_step timing anchor used by `diffloco bench`.
//
// State conventions: ours are MuJoCo's free-joint conventions (sim/model.h): q = [base position
// (world), quaternion (w, x, y, z), joint angles], v = [base-origin linear velocity in WORLD axes,
// angular velocity in BASE axes, joint rates]. The state maps below are therefore copies, and mass
// matrices and bias forces compare entry by entry (tests/sim/test_mujoco_oracle.cpp).
#pragma once

#include <mujoco/mujoco.h>

#include <string>

#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::mj {

using sim::MatX;
using sim::VecX;

struct MjcfOptions {
  double timestep = 0.005;
  double jointDamping = 0;   // added to every hinge on top of JointInfo::damping
  bool jointLimits = false;  // hinge ranges from JointInfo (limits MuJoCo enforces as constraints)
  double kp = 0;             // > 0: a position actuator with this gain on every hinge
  double forceLimit = 0;     // > 0: actuator force range +-forceLimit
  double friction = 0.8;     // sliding friction of feet AND floor (MuJoCo combines them with max)
  std::string footSolref;    // empty: MuJoCo's default
  std::string footSolimp;    // empty: MuJoCo's default
  // Engine options (MJCF <option>), MuJoCo's defaults: a sim-to-sim number is meaningless
  // without them, so evaluations state them (engineOptions).
  std::string integrator = "Euler";  // Euler | RK4 | implicit | implicitfast
  std::string cone = "pyramidal";    // pyramidal | elliptic
  std::string solver = "Newton";     // PGS | CG | Newton
  int iterations = 100;              // constraint solver iterations
  int noslipIterations = 0;
  // The ground: null, the plane z = 0; else this height field as an `hfield` geom with the same
  // samples (MuJoCo joins them by two triangles per cell, where our surface is a bicubic patch
  // through them, sim/terrain.h: the two agree at the samples and on planes). The heights
  // themselves go in after compiling (loadHeightField): the MJCF text names the grid's size and
  // place only.
  const sim::HeightField* terrain = nullptr;
};

// The options a compiled model runs with, read back from it, as one line:
// "MuJoCo 4.0.0, integrator euler, cone pyramidal, solver newton, iterations 100 (tolerance
// 1e-08), noslip 0, impratio 1, timestep 0.002 s".
std::string engineOptions(const mjModel* m);

// The linked library's version, "4.0.0" (mj_versionString).
std::string versionString();

// The settings of the reference ANYmal C MJCF with primitive geoms (anymal_c_prim.xml: Newton,
// pyramidal cone, 5 ms, joint damping 1, kp 100, +-80 N m, foot friction 0.8 and its
// solref/solimp) so that mj_step times on our robots compare with that anchor.
MjcfOptions benchOptions();

// MJCF text for `model`: a ground plane (or the height field `terrain`) named "floor" in geom
// group 0 (with a terrain, also boxes "floor_skirt<k>" continuing each level side of the grid
// outwards, as our surface continues beyond the grid), the base under a free joint, the body tree
// with hinges, and one collision sphere per foot in group 3 (the only geoms besides the ground: a
// ray cast with group 0 alone sees the ground only).
std::string toMjcf(const sim::Model& model, const MjcfOptions& opt = {});

// Writes hf's heights into the compiled model's hfield "terrain" (toMjcf with opt.terrain = &hf);
// throws std::invalid_argument if the model has no such hfield of hf's size.
void loadHeightField(mjModel* m, const sim::HeightField& hf);

// Owns a compiled mjModel and its mjData.
class MujocoModel {
 public:
  // Compiles MJCF text; throws std::runtime_error with MuJoCo's message on failure.
  explicit MujocoModel(const std::string& mjcf);
  // Loads an MJCF file from disk.
  static MujocoModel fromFile(const std::string& path);
  ~MujocoModel();
  MujocoModel(MujocoModel&& o) noexcept;
  MujocoModel& operator=(MujocoModel&& o) noexcept;
  MujocoModel(const MujocoModel&) = delete;
  MujocoModel& operator=(const MujocoModel&) = delete;

  mjModel* m = nullptr;
  mjData* d = nullptr;

 private:
  explicit MujocoModel(mjModel* model);
  void adopt(mjModel* model);  // makes d; deletes `model` if that fails
};

// Our (q, v) -> MuJoCo (qpos, qvel); arrays of size nq and nv. The free joints are the same; the
// hinges go through mj::mujocoJointOrder (mujoco/joint_order.h): MuJoCo's are depth-first, ours in
// the robot file's joint_order. (Kept to these three lines: the header's bytes stay cacheable.)
void toMujocoState(const sim::Model& model, const VecX& q, const VecX& v, mjtNum* qpos,
                   mjtNum* qvel);
// MuJoCo (qpos, qvel) -> our (q, v).
void fromMujocoState(const sim::Model& model, const mjtNum* qpos, const mjtNum* qvel, VecX& q,
                     VecX& v);

// MuJoCo's dense mass matrix (mj_fullM) and bias forces (d->qfrc_bias), after mj_forward, in
// MUJOCO's dof order (mujoco/joint_order.h has them in ours).
MatX massMatrix(const mjModel* m, const mjData* d);
VecX biasForces(const mjModel* m, const mjData* d);

// Microseconds per mj_step for `model` with benchOptions(), position targets = the joint angles of
// q, started from (q, v): best of 5 repeats of at least seconds / 5 each. The state is reset every
// second of simulated time so the robot stays in the benchmarked regime. `contacts` (optional)
// receives d->ncon at (q, v).
double benchStepMicros(const sim::Model& model, const VecX& q, const VecX& v, double seconds,
                       int* contacts = nullptr);

// The same for an MJCF file, started from its first keyframe (qpos and ctrl) if it has one.
double benchStepMicrosFile(const std::string& path, double seconds, int* contacts = nullptr);

}  // namespace diffloco::mj
