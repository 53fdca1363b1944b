// `diffloco toy`: small experiments that illustrate the locomotion paper's arguments.
//   toy falling-mass   Figure 3: final height and velocity of a falling mass and their gradients
//                      with respect to the initial height under hard, smoothed and stochastic
//                      contact; writes falling_mass.csv and falling_mass.png.
//   toy billiard       DiffMJX Figure 8: loss and dL/dtheta of a billiard shot at angle theta under
//                      hard, smoothed and straight-through contact, and gradient descent on theta
//                      from a miss; writes billiard.csv, billiard_descent.csv, billiard.png.
//   toy grad-norm      Figure 5 (left): norm of d(return)/d(actions) against the horizon for both
//                      robots with a fixed random policy (cli/cmd_toy_grad_norm.cpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "cli/commands.h"
#include "experiments/toys/billiard.h"
#include "experiments/toys/falling_mass.h"

namespace diffloco::cli {

// `toy point-mass` and `toy robot-drop` (cli/cmd_toy_adaptive.cpp); the runner returns -1 when
// neither was parsed.
Runner addAdaptiveToyCommands(CLI::App& toy);
// `toy grad-norm` (cli/cmd_toy_grad_norm.cpp); the runner returns -1 when it was not parsed.
Runner addGradNormToyCommand(CLI::App& toy);

namespace {

struct FallingMassArgs {
  toys::FallingMassOptions options;
  std::string out = "runs/toy_falling_mass";
  bool noPlot = false;
};

int runFallingMass(const FallingMassArgs& a) {
  const auto& o = a.options;
  spdlog::info(
      "toy falling-mass: T {} s, dt {} s, h0 in [{}, {}] m ({} points), kappa {}, "
      "stochastic N {} sigma {} m",
      o.duration, o.dt, o.h0Min, o.h0Max, o.points, fmt::join(o.kappas, ", "), o.samples, o.sigma);
  const toys::FallingMassSweep s = toys::runFallingMass(o);
  const std::string csv = toys::writeFallingMassCsv(s, a.out);
  spdlog::info("toy falling-mass: hard-contact critical height {:.4f} m; wrote {}",
               s.criticalHeight, csv);
  // A few numbers for the log: each model's values just below and above the critical height.
  for (size_t m = 0; m < s.models.size(); ++m) {
    double gzMax = 0, gvMax = 0;
    for (const auto& r : s.results[m]) {
      gzMax = std::max(gzMax, std::abs(r.dz_dh0));
      gvMax = std::max(gvMax, std::abs(r.dvz_dh0));
    }
    spdlog::info("  {:<16} max |dz/dh0| {:8.3f}   max |dvz/dh0| {:8.3f} 1/s", s.models[m], gzMax,
                 gvMax);
  }
  if (!a.noPlot) {
    const std::string png = toys::plotFallingMass(s, a.out);
    spdlog::info("toy falling-mass: wrote {}", png);
  }
  return 0;
}

struct BilliardArgs {
  toys::BilliardOptions options;
  std::vector<double> target;  // x y, if given
  std::string out = "runs/toy_billiard";
  bool noPlot = false;
};

int runBilliardToy(BilliardArgs& a) {
  auto& o = a.options;
  if (!a.target.empty()) o.params.target = toys::Vec2(a.target[0], a.target[1]);
  const auto& P = o.params;
  spdlog::info(
      "toy billiard: impulse {} N s, object ball at ({}, 0), target ({}, {}), T {} s, dt {} s, "
      "kappa {} 1/m, theta in [{}, {}] rad ({} points)",
      P.impulse, P.distance, P.target.x(), P.target.y(), P.duration, P.dt, P.kappa, o.thetaMin,
      o.thetaMax, o.points);
  const toys::BilliardSweep s = toys::runBilliard(o);
  const std::string csv = toys::writeBilliardCsv(s, a.out);
  spdlog::info(
      "toy billiard: hard hits for theta in [{:.4f}, {:.4f}] rad, least hard loss {:.5f} "
      "m^2 at theta {:.4f}; wrote {}",
      s.hitMin, s.hitMax, s.lossStar, s.thetaStar, csv);
  for (size_t m = 0; m < s.descent.size(); ++m) {
    const auto& d = s.descent[m];
    spdlog::info(
        "  {:<16} at theta0 {:+.3f}: dL/dtheta {:+.3e}; after {} Adam steps theta {:+.4f}, "
        "real (hard) loss {:.5f} m^2",
        d.model, d.theta.front(), d.grad.front(), d.theta.size() - 1, d.theta.back(),
        d.loss.back());
  }
  if (!a.noPlot) spdlog::info("toy billiard: wrote {}", toys::plotBilliard(s, a.out));
  return 0;
}

}  // namespace

Runner addToyCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("toy", "Toy experiments of the locomotion paper");
  cmd->require_subcommand(1);

  auto* fm = cmd->add_subcommand(
      "falling-mass",
      "Figure 3: a mass falls for a fixed time from a range of heights; final height, velocity and "
      "their gradients under hard, smoothed and stochastic contact");
  auto a = std::make_shared<FallingMassArgs>();
  auto& o = a->options;
  fm->add_option("--out", a->out, "output folder for falling_mass.csv/.png/.gp")
      ->capture_default_str();
  // Ranges: a toy's scale (a 1 kg sphere, centimetres, a fraction of a second); the library
  // checks how the values relate (--h0-max above --h0-min, ...).
  fm->add_option("--dt", o.dt, "time step [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-5, 0.1));
  fm->add_option("--duration", o.duration, "fall time T [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-5, 10.0));
  fm->add_option(
        "--kappa", o.kappas,
        "sigmoid stiffness of the smoothed model [1/m]; one curve per value (the paper: 300)")
      ->capture_default_str()
      ->expected(1, 8)
      ->check(CLI::Range(1e-3, 1e6));
  fm->add_option("--samples", o.samples, "noise samples N of the stochastic model")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  fm->add_option("--sigma", o.sigma, "standard deviation of the noise on h0 [m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 10.0));
  fm->add_option("--seed", o.seed, "seed of the noise samples")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4294967295.0));
  fm->add_option("--points", o.points, "number of initial heights")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  fm->add_option("--h0-min", o.h0Min, "lowest initial height of the sphere centre [m]")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0));
  fm->add_option("--h0-max", o.h0Max, "highest initial height [m]")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0));
  fm->add_option("--radius", o.radius, "sphere radius [m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-4, 10.0));
  fm->add_option("--iterations", o.iterations, "Gauss-Seidel iterations")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  fm->add_flag("--no-plot", a->noPlot, "write the CSV only (no gnuplot)");

  auto* bl = cmd->add_subcommand(
      "billiard",
      "DiffMJX Figure 8: a cue ball shot at angle theta should send an object ball to a target; "
      "loss and gradient under hard, smoothed and straight-through contact, gradient descent");
  auto ba = std::make_shared<BilliardArgs>();
  {
    auto& bo = ba->options;
    auto& bp = bo.params;
    bl->add_option("--out", ba->out, "output folder for billiard*.csv/.png/.gp")
        ->capture_default_str();
    // Ranges: a pool table's scale; the library checks how the values relate.
    bl->add_option("--points", bo.points, "number of shot angles")
        ->capture_default_str()
        ->check(CLI::Range(2, 100000));
    bl->add_option("--theta-min", bo.thetaMin, "smallest shot angle [rad]")
        ->capture_default_str()
        ->check(CLI::Range(-3.15, 3.15));
    bl->add_option("--theta-max", bo.thetaMax, "largest shot angle [rad]")
        ->capture_default_str()
        ->check(CLI::Range(-3.15, 3.15));
    bl->add_option("--kappa", bp.kappa, "sigmoid stiffness of the smoothed model [1/m]")
        ->capture_default_str()
        ->check(CLI::Range(1e-3, 1e6));
    bl->add_option("--cutoff", bp.cutoff, "smoothed contact only within this gap [m] (inf: all)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, std::numeric_limits<double>::infinity()));
    bl->add_option("--restitution", bp.restitution, "ball-ball restitution e in [0, 1]")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    bl->add_option("--dt", bp.dt, "time step [s]")
        ->capture_default_str()
        ->check(CLI::Range(1e-5, 0.1));
    bl->add_option("--duration", bp.duration, "simulated time T [s]")
        ->capture_default_str()
        ->check(CLI::Range(1e-5, 60.0));
    bl->add_option("--damping", bp.damping, "table drag [1/s]")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e4));
    bl->add_option("--impulse", bp.impulse, "impulse on the cue ball [N s]")
        ->capture_default_str()
        ->check(CLI::Range(1e-6, 100.0));
    bl->add_option("--distance", bp.distance, "object ball at (distance, 0) [m]")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 100.0));
    bl->add_option("--target", ba->target, "target x y [m] (default 1.2 0.3)")
        ->expected(2)
        ->check(CLI::Range(-100.0, 100.0));
    bl->add_option("--descent-start", bo.descentStart, "initial theta of the descent [rad]")
        ->capture_default_str()
        ->check(CLI::Range(-3.15, 3.15));
    bl->add_option("--descent-steps", bo.descentSteps, "Adam iterations (0: no descent)")
        ->capture_default_str()
        ->check(CLI::Range(0, 100000));
    bl->add_option("--lr", bo.learningRate, "Adam step size [rad]")
        ->capture_default_str()
        ->check(CLI::Range(1e-9, 10.0));
    bl->add_flag("--no-plot", ba->noPlot, "write the CSVs only (no gnuplot)");
  }

  Runner adaptiveToys = addAdaptiveToyCommands(*cmd);
  Runner gradNormToy = addGradNormToyCommand(*cmd);

  return [cmd, fm, a, bl, ba, adaptiveToys, gradNormToy]() -> int {
    if (const int rc = adaptiveToys(); rc >= 0) return rc;
    if (const int rc = gradNormToy(); rc >= 0) return rc;
    if (fm->parsed()) return runFallingMass(*a);
    if (bl->parsed()) return runBilliardToy(*ba);
    return 1;  // unreachable: require_subcommand(1)
  };
}

}  // namespace diffloco::cli
