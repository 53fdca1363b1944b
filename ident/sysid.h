// System identification (`diffloco sysid`): simulator parameters fitted to recorded trajectories
// by gradient descent through multi-step predictions, with the gradient from the hand-written VJP
// (sim::stageRolloutVjp) on the size class the model fits (sim/stage_rollout.h: Quadruped for the
// robots, SingleBody for the cube; a model of neither is an error). DiffMJX
// (papers/hard-contacts-soft-gradients.md, Sec. 5.1 and Appendix C.2) fits a tossed cube's side length this way; we do the same on a free cube with corner contacts
// and on the robots (masses, friction, PD gains, the soft model's penalty coefficients).
//
// Loss. Every recorded state s_t of a trajectory (every `stride`-th) starts a segment: the
// simulator runs `horizon` = k steps from s_t with the recorded joint targets, and each predicted
// state s^_{t+j} (j = 1..k) is compared with the recorded s_{t+j}:
//   l_j = w_pos |p^ - p|^2 + w_rot |e_rot|^2 + w_joint |qj^ - qj|^2
//       + w_vel |v^ - v|^2 + w_angvel |w^ - w|^2 + w_jointvel |qdj^ - qdj|^2,
// e_rot = 2 sign(r_w) vec(r), r = conj(quat) (x) quat^: the rotation vector (for small angles) of
// the predicted orientation relative to the recorded one, in the recorded body frame; no
// representation singularity and no sign ambiguity of the quaternion. The loss is the mean of l_j
// over all segments and j. Multi-step rather than one-step predictions (DiffMJX: "they capture the
// cumulative effects of prediction errors"): a cube whose side is too small still reaches the
// ground within k steps of a recorded touchdown.
//
// Parameters are optimised unconstrained (DiffMJX C.2: softplus): p = p0 softplus(theta) with p0
// the initial guess and theta0 = log(e - 1), so that p starts at p0, stays positive, behaves like
// a log-parameterisation for small p (softplus(x) ~ e^x) and like a linear one for large p, and one
// unit of theta is the same relative change for every parameter (Adam's steps are relative, so
// kp = 85 and a side of 0.1 m move at the same pace).
//
// Optimiser: Adam (DiffMJX's b1 = 0.5, b2 = 0.9), full batch (every segment, every iteration: the
// loss is deterministic), with a cosine-decaying step size from `lr` to `lrFinal`. No backtracking:
// with straight_through contact the gradient is the smoothed model's, not the derivative of the
// (hard) loss being minimised, so a line search that asks for a decrease along it stalls exactly
// where the hard loss is flat (before contact) or jumps (a contact switch); the decaying fixed
// schedule settles Adam's final oscillation instead.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "robots/robot.h"
#include "sim/options.h"

namespace diffloco::sysid {

using sim::VecX;

// --- The cube ----------------------------------------------------------------------------------
// A free body: a uniform cube of side s and mass m (inertia m s^2 / 6 about its centre, the body
// origin) with eight sphere feet of radius r at the corners, centred at (+-1, +-1, +-1)(s/2 - r) so
// that a cube resting on a face has its centre at height s/2. Foot k has the signs of bits
// (k & 1, k & 2, k & 4) on (x, y, z) (set = +). Built from an inline URDF with sim::parseUrdf.
sim::Model cubeModel(double side, double mass, double cornerRadius = 1e-3);
// Sets the corner offsets and the inertia of a cube model built by cubeModel.
void setCubeShape(sim::Model& model, double side, double mass, double cornerRadius);
// Sign (+-1) of foot k's offset along axis a.
inline double cubeCornerSign(int k, int a) { return (k >> a) & 1 ? 1.0 : -1.0; }

// --- Trajectories and their CSV format ---------------------------------------------------------
// One file per trajectory, or several in one file told apart by an optional `traj` column (rows of
// a trajectory contiguous). Lines starting with '#' and blank lines are skipped. The first other
// line is the header; columns are found by name (any order; unknown columns are ignored):
//   t                                  time [s], strictly increasing, uniform step (within 1 %)
//   x, y, z                            base position, world [m]
//   qw, qx, qy, qz                     base orientation (body -> world), normalised on reading
//   q_<joint>                          joint angles [rad] (robots; model joint order)
//   vx, vy, vz                         base linear velocity, WORLD frame [m/s]
//   wx, wy, wz                         base angular velocity, BODY frame [rad/s]
//   v_<joint>                          joint velocities [rad/s]
//   target_<joint>                     the PD position targets applied from this row to the next
// (sim/model.h's state conventions: q = (x y z qw qx qy qz q_...), v = (vx vy vz wx wy wz v_...).)
// The time step of the data is the simulator's time step.
struct Trajectory {
  std::string source;  // "file" or "file (traj ID)", for messages
  std::string file;    // the file read ("" when built in memory)
  std::vector<int> lines;  // the file's line of each row (empty when built in memory)
  double dt = 0;
  std::vector<double> t;
  std::vector<VecX> q, v, targets;  // targets: nj entries per row (empty vectors for nj = 0)
  int rows() const { return static_cast<int>(t.size()); }
};

// Bad input: the message names the file, the line and the column.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> csvColumns(const sim::Model& model);
// Reads one file; throws DataError on missing columns, bad or non-finite numbers, non-increasing
// or non-uniform time, wrong field counts, quaternions far from unit norm.
std::vector<Trajectory> readTrajectories(const std::string& path, const sim::Model& model);
// Reads several files; also checks that they share one time step.
std::vector<Trajectory> readTrajectories(const std::vector<std::string>& paths,
                                         const sim::Model& model);
// Writes one trajectory (through a .tmp file and a rename).
void writeTrajectory(const std::string& path, const sim::Model& model, const Trajectory& tr);

// --- The system and its parameters -------------------------------------------------------------
// Identifiable parameters, by name:
//   side            the cube's side length [m] (corner offsets and inertia m s^2 / 6 follow it)
//   mass:<body>     a body's mass [kg]; its inertia scales with it (for the cube: m s^2 / 6).
//                   "mass" names every body's mass.
//   mu              friction coefficient
//   kp, kd          PD gains (robots)
//   kappa           sigmoid stiffness of the smoothed model [1/m]
//   soft_kp, soft_kd, soft_kf   the soft model's normal stiffness, damping and tangential friction
// Note: under hard (and straight_through, smoothed) contact the motion of a free body does not
// depend on its mass (impulses scale with it), and a robot's only through kp / m and kd / m: such
// parameters are not identifiable alone (their gradient is ~0 or they trade off).
struct System {
  std::string name;          // "cube" or the robot's name
  bool cube = false;
  double cornerRadius = 1e-3;
  sim::Model model;          // at the nominal parameter values
  sim::SimOptions opt;
  std::vector<sim::Inertia> nominalInertia;  // per body, at `model`
  VecX defaultTargets;                       // robots: the default joint pose
  VecX standing;                             // robots: the standing configuration
  std::vector<std::string> names;            // every identifiable parameter
  std::vector<double> values;                // its current value

  int index(const std::string& name) const;  // -1 if absent
  double get(const std::string& name) const;  // throws std::invalid_argument
  void set(const std::string& name, double value);
  // Expands "mass" and checks names; throws std::invalid_argument listing the valid names.
  std::vector<std::string> expand(const std::vector<std::string>& names) const;
  // The model and options at the current values.
  sim::Model currentModel() const;
  sim::SimOptions currentOptions() const;
};

System cubeSystem(double side = 0.1, double mass = 0.37, double mu = 0.3,
                  double cornerRadius = 1e-3);
System robotSystem(const Robot& robot);
// "cube" or a robot name / YAML path.
System makeSystem(const std::string& name);

// "name=value,name=value" or several such arguments -> (name, value) pairs; throws
// std::invalid_argument naming the bad item.
std::vector<std::pair<std::string, double>> parseAssignments(const std::vector<std::string>& items);
// truth.txt / params.txt: one "name value" per line ('#' comments).
void writeParams(const std::string& path, const System& sys, const std::string& comment = "");
std::vector<std::pair<std::string, double>> readParams(const std::string& path);

// --- Synthetic data ----------------------------------------------------------------------------
struct GenerateOptions {
  int count = 8;          // trajectories
  double duration = 1.0;  // [s]
  double dt = 0.005;      // recording and simulation step [s]
  std::string contact = "hard";
  unsigned seed = 1;
  // Cube tosses: centre height, horizontal speed, vertical speed, spin (uniform ranges), random
  // orientation.
  double heightMin = 0.15, heightMax = 0.35;  // [m]
  double speedMax = 1.5;                      // [m/s]
  double vzMin = -1.0, vzMax = 1.0;           // [m/s]
  double spinMax = 8.0;                       // [rad/s] per axis
  // Robots: dropped from `dropHeight` above the standing pose, joint targets = default pose + sum
  // of two sines per joint of amplitude `targetAmplitude`.
  double dropHeight = 0.03, targetAmplitude = 0.3;
  // Measurement noise (Gaussian standard deviations) added to the written states; the simulation
  // itself runs clean. Scaled together by noiseScale.
  double noisePosition = 2e-4;         // [m]
  double noiseOrientation = 2e-3;      // [rad], a random small rotation
  double noiseVelocity = 5e-3;         // [m/s]
  double noiseAngularVelocity = 2e-2;  // [rad/s]
  double noiseJoint = 1e-3, noiseJointVelocity = 2e-2;
  double noiseScale = 1.0;
};

// Simulates sys at its current values (on the stages of its size class, as evaluate's
// predictions); returns the noisy recorded trajectories.
std::vector<Trajectory> generate(const System& sys, const GenerateOptions& o);

// --- Fitting -----------------------------------------------------------------------------------
struct LossWeights {
  // Units: 1/m^2, 1/rad^2, s^2/m^2, s^2/rad^2. The defaults weigh a 1 mm position error like a
  // 0.03 rad orientation error, a 1 cm/s velocity error and a 0.1 rad/s spin error.
  double position = 1.0, orientation = 1e-3, velocity = 1e-2, angularVelocity = 1e-4;
  double joint = 1e-3, jointVelocity = 1e-5;
};

struct FitOptions {
  int horizon = 4;  // k: steps predicted from each recorded state
  int stride = 1;   // a segment starts at every stride-th recorded state
  int iterations = 100;
  double lr = 0.05, lrFinal = 0.005;  // Adam step on theta, cosine decay
  // Adam's epsilon sits far below the gradients: the loss is in physical units (a 1 mm error
  // costs 1e-6), so gradients with respect to theta are small in absolute terms.
  double beta1 = 0.5, beta2 = 0.9, epsilon = 1e-14;
  LossWeights weights;
  int threads = 1;
};

struct Evaluation {
  double loss = 0;
  std::vector<double> grad;  // dL/dp per parameter asked for
  int segments = 0;
  // Where the loss or a gradient first became non-finite, in data order: the row ("file:line") and
  // what became non-finite there, naming the row the prediction started from; "" when all are
  // finite.
  std::string nonFiniteAt, nonFinite;
};

// The loss at the system's current values and, if `names` is not empty, its gradient with
// respect to those parameters (names must be expanded: System::expand).
Evaluation evaluate(const System& sys, const std::vector<Trajectory>& data,
                    const std::vector<std::string>& names, const FitOptions& o);

struct FitStep {
  int iteration = 0;  // 0-based; the values are those the loss and gradient were evaluated at
  double loss = 0, lr = 0, seconds = 0;  // seconds: this iteration's gradient evaluation
  std::vector<double> values, grads;
};

struct FitResult {
  std::vector<std::string> names;
  std::vector<double> initial, final;
  double finalLoss = 0;
  std::vector<FitStep> history;
  double secondsPerStep = 0;  // mean wall time of a gradient evaluation
  double cpuSecondsPerStep = 0;  // the same in process CPU time (all threads; on a shared
                                 // machine closer to the cost than the wall time)
  int segments = 0;
};

// Fits `names` (expanded here) starting from the system's current values; leaves the fitted
// values in sys. log(step) is called after every iteration. A non-finite loss or gradient is a
// std::runtime_error naming the iteration, the parameter values and Evaluation::nonFinite's row.
FitResult fit(System& sys, const std::vector<Trajectory>& data,
              const std::vector<std::string>& names, const FitOptions& o,
              const std::function<void(const FitStep&)>& log = {});

// Writes the per-iteration log (iteration, loss, lr, seconds, then per parameter its value and
// gradient) through a .tmp file and a rename.
void writeFitLog(const std::string& path, const FitResult& r);

}  // namespace diffloco::sysid
