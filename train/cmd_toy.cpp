// `diffloco toy`: small experiments that illustrate the locomotion paper's arguments.
//   toy falling-mass   Figure 3: final height and velocity of a falling mass and their gradients
//                      with respect to the initial height under hard, smoothed and stochastic
//                      contact; writes falling_mass.csv and falling_mass.png.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "train/commands.h"
#include "train/toys/falling_mass.h"

namespace diffloco::cli {

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
  fm->add_option("--dt", o.dt, "time step [s]")->capture_default_str();
  fm->add_option("--duration", o.duration, "fall time T [s]")->capture_default_str();
  fm->add_option(
        "--kappa", o.kappas,
        "sigmoid stiffness of the smoothed model [1/m]; one curve per value (the paper: 300)")
      ->capture_default_str()
      ->expected(1, 8);
  fm->add_option("--samples", o.samples, "noise samples N of the stochastic model")
      ->capture_default_str();
  fm->add_option("--sigma", o.sigma, "standard deviation of the noise on h0 [m]")
      ->capture_default_str();
  fm->add_option("--seed", o.seed, "seed of the noise samples")->capture_default_str();
  fm->add_option("--points", o.points, "number of initial heights")->capture_default_str();
  fm->add_option("--h0-min", o.h0Min, "lowest initial height of the sphere centre [m]")
      ->capture_default_str();
  fm->add_option("--h0-max", o.h0Max, "highest initial height [m]")->capture_default_str();
  fm->add_option("--radius", o.radius, "sphere radius [m]")->capture_default_str();
  fm->add_option("--iterations", o.iterations, "Gauss-Seidel iterations")->capture_default_str();
  fm->add_flag("--no-plot", a->noPlot, "write the CSV only (no gnuplot)");

  return [cmd, fm, a]() -> int {
    if (fm->parsed()) return runFallingMass(*a);
    return 1;  // unreachable: require_subcommand(1)
  };
}

}  // namespace diffloco::cli
