// Named task terms: observations, rewards and terminations, each a plain torch computation of the
// state (so that autograd differentiates rewards and observations through simStep), selected by
// name in the task YAML (configs/tasks/) with per-term parameters.
//
// Conventions: the state is q [n, nq], v [n, nv] in double (envs/sim_function.h). "B" marks base
// coordinates, "W" world coordinates. A reward term returns its value with its sign (penalties are
// negative) and the YAML weight is positive, as in the paper's Tables 4 and 7.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/options.h"
#include "sim/terrain.h"

namespace diffloco::envs {

class SimLink;

// What terms may read besides the state: fixed per task.
struct TaskConstants {
  torch::Tensor defaultJointPos;  // [nj]
  torch::Tensor effort;           // [nj] torque limits, min(task, URDF)
  torch::Tensor jointLower, jointUpper;  // [nj] the URDF's position limits [rad]
  torch::Tensor footRadius;       // [F]
  torch::Tensor legSphereRadius;  // [L]: the leg spheres' radii (knees, shanks; may be empty)
  sim::ActuatorOptions actuator;  // PD law (for the torque term)
  double envDt = 0.01;
  SimLink* link = nullptr;  // foot kinematics
  std::shared_ptr<const sim::HeightField> terrain;  // null: the plane z = 0
  // The field whose slopes the ground heights' derivatives take (terrain.backward_smoothing's
  // smoothed copy, as the simulator's backward pass does); null: the terrain's own.
  std::shared_ptr<const sim::HeightField> terrainSlopes;
};

// The state split into the quantities terms read, each its own tensor made by one autograd node
// (stateFeatures). Slicing q and v instead would add a backward node per slice, each
// materialising a zero tensor of q's size: in a SHAC window that cost more than the terms.
struct StateFeatures {
  torch::Tensor height;     // [n]: z of the base origin (world)
  torch::Tensor quat;       // [n, 4]: base orientation (w, x, y, z)
  torch::Tensor linVelW;    // [n, 3]: W v
  torch::Tensor linVelB;    // [n, 3]: B v
  torch::Tensor angVelB;    // [n, 3]: B w
  torch::Tensor gravityB;   // [n, 3]: world -z in base coordinates
  torch::Tensor alignment;  // [n]: e_z^W . e_z^B = R_22
  torch::Tensor heading;    // [n]: e_x^W . e_x^B = R_00
  torch::Tensor jointPos;   // [n, nj]: q_j - q_default
  torch::Tensor jointVel;   // [n, nj]: qd_j
};

// The features of states q [n, nq], v [n, nv], differentiable (hand-written backward). R is
// Eigen's polynomial form of the quaternion, as in the simulator.
StateFeatures stateFeatures(const torch::Tensor& q, const torch::Tensor& v,
                            const torch::Tensor& defaultJointPos);

// The quantities of a batch of envs after an env step. The env fills the inputs; derived values
// are computed on first use and cached, so a quantity used by several terms is computed once.
class TermContext {
 public:
  explicit TermContext(const TaskConstants& k) : k_(k) {}

  // Inputs (rows = envs).
  torch::Tensor q, v;                    // state after the step
  torch::Tensor vStart;                  // velocity at the start of the env step
  torch::Tensor action, lastAction;      // clipped actions of this step and of the one before
  torch::Tensor actions;  // [n, D, nj]: the last D clipped actions, newest (= action) first
  torch::Tensor qSub, vSub, qTargetSub;  // input of the last sim sub-step (actuator torque)
  torch::Tensor command;                 // [n, 3]: (B v_x*, B v_y*, B w_z*)
  torch::Tensor time;                    // [n]: episode time after the step [s]
  // The env's randomised parameters, [n] double each (TermDef::kWorldParams): ground friction
  // coefficient, drive-gain scale, mass added to the base [kg], action latency [control steps].
  torch::Tensor friction, motorStrength, addedMass, actionDelay;

  const TaskConstants& constants() const { return k_; }
  const StateFeatures& state();       // of (q, v)
  // [n]: the base origin's height above the ground under it (z on the plane z = 0).
  const torch::Tensor& baseHeight();
  // [n, F, 3]: world positions of the foot sphere centres.
  const torch::Tensor& footCentres();
  // [n, F]: lowest point of each foot sphere above the ground under its centre.
  const torch::Tensor& footHeight();
  // [n, L]: the same for each leg sphere (sim::Model::legSpheres).
  const torch::Tensor& legSphereHeight();
  const torch::Tensor& torque();      // [n, nj]: actuator torque of the last sub-step
  const torch::Tensor& jointAcc();    // [n, nj]: (qd - qd_start) / env dt

 private:
  const TaskConstants& k_;
  bool haveState_ = false;
  StateFeatures state_;
  torch::Tensor baseHeight_, footCentres_, footHeight_, legSphereHeight_, torque_, jointAcc_;
};

// A term's parameters as given in YAML (after defaults). Scalars are 1-element lists.
class TermParams {
 public:
  TermParams() = default;
  explicit TermParams(std::map<std::string, std::vector<double>> values)
      : values_(std::move(values)) {}
  double operator()(const std::string& key) const { return list(key).at(0); }
  const std::vector<double>& list(const std::string& key) const;
  const std::map<std::string, std::vector<double>>& values() const { return values_; }

 private:
  std::map<std::string, std::vector<double>> values_;
};

struct ParamDef {
  std::string name;
  std::vector<double> value;  // default; a YAML value must have the same number of entries
  std::string doc;
};

enum class TermKind { Observation, Reward, Termination };

// What an observation term means, written for someone who computes it outside diffloco: exported
// with every policy that uses the term (runtime/policy_metadata.h) and listed in docs/deploy.md, so
// the code below and its documentation have one source. Every observation term has all four
// (tests/envs/test_term_definitions.cpp).
struct TermDefinition {
  std::string formula;      // in the quantities of the robot's state
  std::string frame;        // the axes the values are expressed in
  std::string units;        // of each value
  std::string conventions;  // signs, ordering, dependence on the world frame, initial values
};

struct TermDef {
  std::string name;
  std::string formula;  // shown in the start-up table
  std::vector<ParamDef> params;
  // Observation size: > 0 fixed, kPerJoint, kPerFoot or kFromParams (sizeOf).
  int dim = 1;
  static constexpr int kPerJoint = -1, kPerFoot = -2, kFromParams = -3;
  // Observations [n, dim]; rewards [n]; terminations [n] bool.
  std::function<torch::Tensor(TermContext&, const TermParams&)> eval;
  // Optional inputs of TermContext the term reads (the env fills only what some term needs).
  unsigned needs = 0;
  static constexpr unsigned kTime = 1, kSubstep = 2, kStepStart = 4, kWorldParams = 8;
  // Observations: privileged, a value the simulator knows and a robot cannot measure (the
  // friction, the drive's strength, ...): only the critic may read it (critic_observations).
  bool privileged = false;
  // Observations: the term's contract for deployment (rewards and terminations: empty).
  TermDefinition definition;
  // Observations of size kFromParams: the size for the term's parameters and nj joints.
  std::function<int(const TermParams&, int nj)> sizeOf;
  // Optional: throws std::invalid_argument saying which parameter values the term cannot use
  // (the env adds the task file and the term's name).
  std::function<void(const TermParams&)> check;
};

// The number of values an observation term gives for a robot with nj joints and nfeet feet.
int observationSize(const TermDef& def, const TermParams& params, int nj, int nfeet);

const std::vector<TermDef>& termRegistry(TermKind kind);
const TermDef* findTerm(TermKind kind, const std::string& name);  // nullptr if unknown
const char* toString(TermKind kind);

// The actuator law of sim/actuator.cpp as torch ops (for torque penalties): PD, speed-torque
// envelope, effort clip.
torch::Tensor actuatorTorque(const sim::ActuatorOptions& a, const torch::Tensor& effort,
                             const torch::Tensor& qTarget, const torch::Tensor& q,
                             const torch::Tensor& qd);

}  // namespace diffloco::envs
