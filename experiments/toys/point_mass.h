// The point-mass toy of DiffMJX's Figure 4 ("Hard contacts with soft gradients", Sec. 3.1): a mass
// (a free body with one sphere foot at its origin, as the falling-mass toy builds it) starts at
// height h0 moving down at v0 towards the ground, which is a stiff penalty wall (the soft contact
// model, k >= 1e5; no damping and no gravity by default, as the paper's toy), bounces and flies
// for the rest of a fixed time T. The loss is the final height z_T; its gradient dz_T/dh0 comes
// from the hand-written VJP chained backwards over the env steps.
//
// Integrators: the soft model's fixed sub-stepping at several sub-step counts (step h = dt / n),
// the adaptive Dormand-Prince integrator (sim/adaptive.h, contact events located), and the
// reference asked for: the fixed sub-stepping at a very fine step, Richardson-extrapolated (the
// scheme is first order: 2 g(h) - g(2h)). With no gravity and no damping the exact solution is
// known (a half period pi / w of the spring w = sqrt(k / m), then flight at -v0: after the bounce
// dz_T/dh0 = -1 exactly), and errors are measured against it. The fine fixed step is then off by
// up to ~0.1 itself: its sub-step that straddles the touchdown differentiates the wrong branch of
// the k = 1e5 kink for part of the step, an error first order in h that Richardson does not remove.
//
// DiffMJX's point, which the figure shows: the fixed-step gradients are wrong near contact (they
// oscillate with the contact's phase against the step grid, with the wrong sign at many heights)
// while the adaptive integrator's track the closed form (to ~1e-5 at rtol 1e-6) at the cost of the
// h = 0.5 ms fixed step.
#pragma once

#include <string>
#include <vector>

#include "sim/options.h"

namespace diffloco::toys {

struct PointMassOptions {
  double mass = 1.0;       // [kg]
  double radius = 0.05;    // sphere radius [m]; the ground is touched at centre height = radius
  double kp = 1e5;         // penalty stiffness [N/m]
  double kd = 0.0;         // penalty damping on approach [N s/m] (0: continuous right-hand side)
  double gravity = 0.0;    // [m/s^2], downwards; DiffMJX's toy has none
  double v0 = -1.0;        // initial vertical velocity [m/s]
  double dt = 0.01;        // env step [s]
  double duration = 0.1;   // T [s]
  double h0Min = 0.06;     // initial heights of the sphere centre [m]
  double h0Max = 0.16;
  int points = 400;
  std::vector<int> substeps{2, 5, 20};  // fixed-step curves: h = dt / n
  double rtol = 1e-6, atol = 1e-8;      // adaptive
  int refSubsteps = 2000;               // reference: h = dt / refSubsteps (and twice that)
};

struct PointMassCurve {
  std::string name;                      // "fixed_n20", "adaptive", "reference"
  std::string label;                     // for the plot
  std::vector<double> z, dz;             // z_T and dz_T/dh0 per h0
  std::vector<double> evaluations;       // dynamics evaluations (sub-steps or RK stages) per rollout
  double seconds = 0;                    // forward + backward, all points
};

struct PointMassSweep {
  PointMassOptions options;
  std::vector<double> h0;
  std::vector<PointMassCurve> curves;  // fixed (per sub-step count), adaptive, reference
  std::vector<double> exactZ, exactDz;   // closed form; empty unless gravity = kd = 0
  const PointMassCurve* find(const std::string& name) const;
};

PointMassSweep runPointMass(const PointMassOptions& options);

// Closed-form final height and its derivative (gravity = 0, kd = 0).
void pointMassExact(const PointMassOptions& o, double h0, double& z, double& dz);

// Writes DIR/point_mass.csv (h0, then per curve <name>_z, <name>_dz, <name>_evals, then exact_z,
// exact_dz if known) through a .tmp file and a rename. Returns its path.
std::string writePointMassCsv(const PointMassSweep& sweep, const std::string& dir);

// Writes DIR/point_mass.gp and runs gnuplot on it (to a .tmp, renamed) to make DIR/point_mass.png:
// z_T, dz_T/dh0, the gradient error against the reference, and the cost per rollout. Throws
// std::runtime_error when gnuplot is missing or fails. Returns the PNG's path.
std::string plotPointMass(const PointMassSweep& sweep, const std::string& dir);

}  // namespace diffloco::toys
