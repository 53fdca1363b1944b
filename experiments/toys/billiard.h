// The billiard toy of DiffMJX's Figure 8 (hard-contacts-soft-gradients.md): an impulse of fixed
// magnitude at angle theta sets a cue ball rolling towards an object ball; the loss is the squared
// distance of the object ball's final position to a target. With hard contact the loss is flat and
// its gradient exactly zero wherever the cue ball misses; contacts from distance (CFD) through the
// straight-through trick keep the hard forward pass and give a gradient there.
//
// Our multibody Model holds one floating-base tree, so two free balls do not fit it: this is a
// small self-contained planar two-ball simulator with its own hand-written reverse pass, using the
// contact logic of sim/ on the one ball-ball contact:
//   - the step of sim::fixedStep: mid-step positions y = x + h/2 v for the geometry, free velocity
//     u = v - h b (b: table drag), impulse p along the normal n from the cue ball to the object
//     ball, v' = u + M^-1 J^T p, trapezoidal positions x' = x + h/2 (v + v');
//   - the normal impulse from the Delassus scalar G = J M^-1 J^T = 1/m1 + 1/m2 with
//     c = J u = n.(u2 - u1) through sim::gaussSeidelUpdate (for one frictionless contact the
//     Gauss-Seidel solve is exact: p = max(0, -(1 + e) c / G));
//   - hard: the contact enters only when the balls overlap at the mid-step (depth d >= 0);
//     smoothed: it enters while d >= -cutoff and its impulse is scaled by sigmoid(d kappa), so the
//     balls push each other apart before they touch (forces at a distance);
//     straight_through: the hard forward pass, and per step the derivative of the smoothed step
//     evaluated at the hard trajectory's state (as the stages' VJP does).
// Deviations from sim/, kept small on purpose: the contact is frictionless (no tangential impulse,
// the balls do not spin), restitution e (default 1, elastic, as billiard balls nearly are; e = 0 is
// sim/'s inelastic velocity-level contact) multiplies the approach velocity to cancel, and the
// table acts as a viscous drag b = damping v (explicit, like sim/'s joint damping) so the balls
// come to rest exponentially: after T = 4 s at 1.5 1/s their speed is 0.25 % of the initial one.
#pragma once

#include <Eigen/Core>
#include <limits>
#include <string>
#include <vector>

#include "sim/options.h"

namespace diffloco::toys {

using Vec2 = Eigen::Vector2d;

struct BilliardParams {
  double radius = 0.0286;    // ball radius [m] (a 57.2 mm pool ball)
  double mass = 0.17;        // each ball [kg]
  double dt = 0.002;         // time step [s]
  double duration = 4.0;     // simulated time T [s]
  double damping = 1.5;      // table drag b = damping v [1/s]
  double impulse = 0.34;     // magnitude of the impulse on the cue ball [N s] (2 m/s)
  double distance = 0.5;     // object ball at (distance, 0); the cue ball starts at the origin [m]
  Vec2 target{1.2, 0.3};     // [m]
  double restitution = 1.0;  // e: 1 elastic, 0 inelastic (sim/'s contact)
  double kappa = 100.0;      // sigmoid stiffness [1/m] (smoothed, straight_through's backward)
  double cutoff =
      std::numeric_limits<double>::infinity();  // smoothed contact only for d >= -cutoff
};

// x1, v1: cue ball; x2, v2: object ball. Also the adjoint of a state.
struct BallState {
  Vec2 x1 = Vec2::Zero(), v1 = Vec2::Zero(), x2 = Vec2::Zero(), v2 = Vec2::Zero();
};

// What one step did: mid-step depth, whether the contact was in the problem, its impulse.
struct BilliardStepInfo {
  double depth = 0;     // 2 r - |y2 - y1| at the mid-step (negative when apart) [m]
  bool active = false;  // in the contact problem (hard: depth >= 0; smoothed: depth >= -cutoff)
  double impulse = 0;   // normal impulse applied (after the sigmoid scaling) [N s]
};

// The initial state for a shot at angle theta [rad] (0: straight at the object ball's centre).
BallState billiardInitial(const BilliardParams& p, double theta);

// One step. model: hard, smoothed or straight_through (whose forward pass is hard's).
BallState billiardStep(const BilliardParams& p, sim::ContactModel model, const BallState& s,
                       BilliardStepInfo* info = nullptr);

// Reverse of billiardStep at state s: the adjoint of s given the adjoint of the next state.
// straight_through differentiates the smoothed step at s; soft is not supported.
BallState billiardStepVjp(const BilliardParams& p, sim::ContactModel model, const BallState& s,
                          const BallState& gNext);

struct ShotResult {
  double loss = 0;          // |x2(T) - target|^2 [m^2]
  double dloss_dtheta = 0;  // from the reverse pass [m^2/rad]
  BallState final;
  int contactSteps = 0;   // steps with a non-zero impulse
  int firstContact = -1;  // the first of them (-1: none)
  double minGap = 0;      // smallest mid-step gap -depth over the rollout [m]
};

// The rollout over round(duration / dt) steps from billiardInitial(theta) and, if withGradient,
// the reverse pass chained back to theta.
ShotResult billiardShot(const BilliardParams& p, sim::ContactModel model, double theta,
                        bool withGradient = true);

// Central difference of the loss in theta (eps in rad).
double billiardLossFd(const BilliardParams& p, sim::ContactModel model, double theta, double eps);

struct BilliardOptions {
  BilliardParams params;
  double thetaMin = -0.3, thetaMax = 0.3;  // sweep [rad]
  int points = 400;
  // Gradient descent (Adam) on theta from a start where the cue ball misses.
  double descentStart = -0.2;  // [rad]
  int descentSteps = 150;
  double learningRate = 0.01;  // Adam step [rad]
};

struct DescentTrace {
  std::string model;
  std::vector<double> theta, loss, grad;  // per iteration, before its update; loss: hard's
};

// The states 0..steps of one rollout (forward pass of `model`).
std::vector<BallState> billiardPath(const BilliardParams& p, sim::ContactModel model, double theta);

// A rollout drawn on the table panel.
struct BilliardPathSet {
  std::string name;  // column prefix in billiard_paths.csv
  std::string title;
  double theta = 0;
  std::vector<BallState> states;
};

struct BilliardSweep {
  BilliardOptions options;
  std::vector<std::string> models;  // "hard", "smoothed", "straight_through"
  std::vector<double> theta;
  std::vector<std::vector<ShotResult>> results;  // [model][theta]
  double hitMin = 0, hitMax = 0;                 // the hard model's hit interval on the grid [rad]
  double thetaStar = 0;                          // grid point of least hard loss
  double lossStar = 0;                           // that loss [m^2]
  std::vector<DescentTrace> descent;
  // With the descent: hard and smoothed at its start; the hard rollouts at smoothed's and
  // straight_through's end points.
  std::vector<BilliardPathSet> paths;
};

BilliardSweep runBilliard(const BilliardOptions& options);

// Adam on theta for `model` (the loss recorded is the hard, i.e. real, loss at each iterate).
DescentTrace billiardDescent(const BilliardParams& p, sim::ContactModel model, double theta0,
                             int steps, double learningRate);

// DIR/billiard.csv: theta, then per model <model>_loss, <model>_dloss_dtheta, then hard_hit (1 if
// the hard cue ball touches the object ball). DIR/billiard_descent.csv: iteration, then per model
// <model>_theta, <model>_loss (hard loss at the iterate). DIR/billiard_paths.csv: step, then per
// path <name>_x1, _y1, _x2, _y2 every 10 steps. All through a .tmp file and a rename.
std::string writeBilliardCsv(const BilliardSweep& sweep, const std::string& dir);

// DIR/billiard.gp run by gnuplot into DIR/billiard.png (written as .tmp, then renamed). Throws
// std::runtime_error when gnuplot is missing or fails. Returns the PNG's path.
std::string plotBilliard(const BilliardSweep& sweep, const std::string& dir);

}  // namespace diffloco::toys
