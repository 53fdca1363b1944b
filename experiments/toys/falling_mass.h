// The falling-mass toy of the locomotion paper's Figure 3: a point-like mass (a free body with one
// sphere foot at its origin) falls under gravity for a fixed time from an initial height h0 and may
// hit the ground. Per contact model it reports the final height z_T, the final vertical velocity
// vz_T and their first-order gradients dz_T/dh0, dvz_T/dh0 from the hand-written VJP of the step
// chained backwards over the rollout.
//
// Models:
//   hard        Gauss-Seidel on the contacts with penetration >= 0 at the mid-step.
//   smoothed    Algorithm 1 with sigmoid(d kappa), for each kappa asked for.
//   stochastic  the hard model averaged over N samples of Gaussian noise w_n on the initial height:
//               value = mean_n f(h0 + w_n), gradient = mean_n f'(h0 + w_n) (eq. 3 and 4). The noise
//               samples (antithetic pairs +-w) are drawn once and shared by every h0 (common
//               random numbers), so the mean is a deterministic function of h0. Near a
//               discontinuity this gradient is biased: it misses the jumps that the mean of the
//               values smooths into slopes (DESIGN.md).
//
// Heights are those of the sphere centre (the body origin); the sphere touches the ground at
// z = radius. The mass is inelastic: the Gauss-Seidel solve makes the normal velocity zero.
#pragma once

#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/options.h"

namespace diffloco::toys {

// A free body of the given mass (solid-sphere inertia) with one sphere foot at its origin:
// nj = 0, nq = 7, nv = 6. Built from an inline URDF with sim::parseUrdf.
sim::Model fallingMassModel(double mass = 1.0, double radius = 0.05);

// Final state and its gradients with respect to the initial height.
struct FallResult {
  double z = 0, vz = 0;            // final height of the centre [m], final vertical velocity [m/s]
  double dz_dh0 = 0, dvz_dh0 = 0;  // first-order gradients (VJP chained over the steps)
};

// One deterministic fall from rest at height h0 for `steps` steps of opt.dt.
// withGradient = false skips the two backward passes.
FallResult fall(const sim::Model& model, const sim::SimOptions& opt, double h0, int steps,
                bool withGradient = true);

struct FallingMassOptions {
  // The defaults put the hard model's critical height near the middle of the h0 range (the mass
  // lands left of it), make the impact speed (<= 2 m/s, i.e. <= 2 cm per step) comparable to the
  // sigmoid's width at kappa = 300 so that smoothing acts on the sawtooth, and give the noise a
  // sigma that smooths the velocity jump about as much as kappa = 300 does.
  double dt = 0.01;       // time step [s] (the paper's)
  double duration = 0.2;  // fall time T [s]
  double mass = 1.0;      // [kg]
  double radius = 0.05;   // sphere radius [m]
  double h0Min = 0.14;    // initial heights of the sphere centre [m]
  double h0Max = 0.34;
  int points = 400;
  std::vector<double> kappas{300.0, 100.0};  // one smoothed curve per kappa [1/m]
  int samples = 64;     // noise samples of the stochastic model (antithetic pairs)
  double sigma = 0.01;  // standard deviation of the noise on h0 [m]
  unsigned seed = 1;
  int iterations = 10;  // Gauss-Seidel sweeps
};

// All curves on the h0 grid. models[m] names curve m ("hard", "smoothed_k300", "stochastic");
// results[m][i] is its value at h0[i]. stochasticExact* is the exact derivative of the hard model's
// expected value under the noise (quadrature over a fine grid of hard rollouts): the gradient that
// the averaged per-sample gradient of the stochastic model should, but does not, estimate.
struct FallingMassSweep {
  FallingMassOptions options;
  std::vector<double> h0;
  std::vector<std::string> models;
  std::vector<std::vector<FallResult>> results;
  std::vector<double> stochasticExactZ, stochasticExactVz;  // d E[z_T] / dh0, d E[vz_T] / dh0
  double criticalHeight = 0;  // hard model: largest h0 at which the mass reaches the ground
  int index(const std::string& name) const;  // -1 if absent
};

FallingMassSweep runFallingMass(const FallingMassOptions& options);

// Writes DIR/falling_mass.csv (columns h0, then per model <model>_z, _vz, _dz_dh0, _dvz_dh0, then
// stochastic_exact_dz_dh0, stochastic_exact_dvz_dh0) through a .tmp file and a rename.
std::string writeFallingMassCsv(const FallingMassSweep& sweep, const std::string& dir);

// Writes DIR/falling_mass.gp and runs gnuplot on it to make DIR/falling_mass.png (4 panels).
// Throws std::runtime_error when gnuplot is missing or fails. Returns the PNG's path.
std::string plotFallingMass(const FallingMassSweep& sweep, const std::string& dir);

}  // namespace diffloco::toys
