// `diffloco toy point-mass` and `diffloco toy robot-drop`: the adaptive integrator of the soft
// contact model (sim/adaptive.h) against fixed sub-stepping, after DiffMJX's Figures 4 and S6.
// Registered under `toy` by cmd_toy.cpp through addAdaptiveToyCommands.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/commands.h"
#include "experiments/toys/point_mass.h"
#include "experiments/toys/robot_drop.h"

namespace diffloco::cli {

namespace {

struct PointMassArgs {
  toys::PointMassOptions options;
  std::string out = "runs/toy_point_mass";
  bool noPlot = false;
};

int runPointMass(const PointMassArgs& a) {
  const auto& o = a.options;
  spdlog::info(
      "toy point-mass: m {} kg, k {} N/m, kd {}, g {}, v0 {} m/s, T {} s, env dt {} s, h0 in [{}, "
      "{}] m ({} points); fixed sub-steps {}, adaptive rtol {} atol {}, reference {} sub-steps",
      o.mass, o.kp, o.kd, o.gravity, o.v0, o.duration, o.dt, o.h0Min, o.h0Max, o.points,
      fmt::join(o.substeps, ", "), o.rtol, o.atol, o.refSubsteps);
  const toys::PointMassSweep s = toys::runPointMass(o);
  const toys::PointMassCurve* ref = s.find("reference");
  if (!s.exactDz.empty()) {
    double refExact = 0;
    for (size_t i = 0; i < s.exactDz.size(); ++i)
      refExact = std::max(refExact, std::abs(ref->dz[i] - s.exactDz[i]));
    spdlog::info("  reference vs closed form: max |dz/dh0 error| {:.2e}", refExact);
  }
  // Gradient errors against the closed form where there is one, else against the fine fixed step.
  const bool exact = !s.exactDz.empty();
  spdlog::info("  gradient errors against the {}:", exact ? "closed form" : "fine fixed step");
  spdlog::info("  {:<12} {:>16} {:>12} {:>14} {:>16}", "integrator", "max |dL/dh0 err|", "rms err",
               "evals/rollout", "ms/rollout+VJP");
  for (const auto& c : s.curves) {
    if (c.name == "reference" && !exact) continue;
    double mx = 0, ss = 0, ev = 0;
    for (size_t i = 0; i < s.h0.size(); ++i) {
      const double e = c.dz[i] - (exact ? s.exactDz[i] : ref->dz[i]);
      mx = std::max(mx, std::abs(e));
      ss += e * e;
      ev += c.evaluations[i];
    }
    const double n = static_cast<double>(s.h0.size());
    spdlog::info("  {:<12} {:>16.3e} {:>12.3e} {:>14.1f} {:>16.3f}", c.name, mx, std::sqrt(ss / n),
                 ev / n, 1e3 * c.seconds / n);
  }
  const std::string csv = toys::writePointMassCsv(s, a.out);
  spdlog::info("toy point-mass: wrote {}", csv);
  if (!a.noPlot) spdlog::info("toy point-mass: wrote {}", toys::plotPointMass(s, a.out));
  return 0;
}

}  // namespace

Runner addAdaptiveToyCommands(CLI::App& toy) {
  auto* pm = toy.add_subcommand(
      "point-mass",
      "DiffMJX Figure 4: a mass thrown onto a stiff penalty wall; final height and its gradient "
      "for fixed sub-steps, the adaptive integrator and a fine reference");
  auto p = std::make_shared<PointMassArgs>();
  auto& po = p->options;
  pm->add_option("--out", p->out, "output folder for point_mass.csv/.png/.gp")
      ->capture_default_str();
  // Ranges: a toy's scale; the library checks how the values relate (v0 towards the ground,
  // radius < h0-min < h0-max, ...).
  pm->add_option("--substeps", po.substeps, "fixed-step curves: sub-steps per env step")
      ->capture_default_str()
      ->expected(1, 8)
      ->check(CLI::Range(1, 100000));
  pm->add_option("--rtol", po.rtol, "adaptive: relative tolerance")
      ->capture_default_str()
      ->check(CLI::Range(1e-14, 1.0));
  pm->add_option("--atol", po.atol, "adaptive: absolute tolerance")
      ->capture_default_str()
      ->check(CLI::Range(1e-16, 1.0));
  pm->add_option("--ref-substeps", po.refSubsteps, "reference: sub-steps per env step")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000000));
  pm->add_option("--kp", po.kp, "penalty stiffness [N/m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e9));
  pm->add_option("--kd", po.kd, "penalty damping on approach [N s/m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  pm->add_option("--gravity", po.gravity, "gravity [m/s^2] (the paper's toy: 0)")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0));
  pm->add_option("--mass", po.mass, "[kg]")->capture_default_str()->check(CLI::Range(1e-6, 1e6));
  pm->add_option("--v0", po.v0, "initial vertical velocity [m/s]")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0));
  pm->add_option("--dt", po.dt, "env step [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-5, 1.0));
  pm->add_option("--duration", po.duration, "T [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-5, 10.0));
  pm->add_option("--h0-min", po.h0Min, "lowest initial height of the centre [m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  pm->add_option("--h0-max", po.h0Max, "highest initial height [m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  pm->add_option("--points", po.points, "number of initial heights")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  pm->add_flag("--no-plot", p->noPlot, "write the CSV only (no gnuplot)");

  auto* rd = toy.add_subcommand(
      "robot-drop",
      "DiffMJX Figure S6: a robot dropped on stiff soft contact; gradient error against a fine "
      "reference and runtime, fixed sub-steps vs the adaptive integrator (a table)");
  auto d = std::make_shared<toys::RobotDropOptions>();
  rd->add_option("--robot", d->robot, "anymal or quadruped")->capture_default_str();
  rd->add_option("--height", d->height, "drop height of the feet above the ground [m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  rd->add_option("--duration", d->duration, "rollout length [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 10.0));
  rd->add_option("--kp", d->kp, "penalty stiffness [N/m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e9));
  rd->add_option("--kd", d->kd, "penalty damping on approach [N s/m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  rd->add_option("--kf", d->kf, "tangential viscous friction [N s/m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  rd->add_option("--mu", d->mu, "friction coefficient")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  rd->add_option("--substeps", d->substeps, "fixed sub-steps per env step")
      ->capture_default_str()
      ->expected(1, 16)
      ->check(CLI::Range(1, 100000));
  rd->add_option("--rtol", d->rtols, "adaptive relative tolerances (atol = rtol / 100)")
      ->capture_default_str()
      ->expected(1, 16)
      ->check(CLI::Range(1e-14, 1.0));
  rd->add_option("--ref-substeps", d->refSubsteps, "fine fixed reference: sub-steps per env step")
      ->capture_default_str()
      ->check(CLI::Range(4, 1000000));
  rd->add_option("--ref-rtol", d->refRtol, "tight reference: the adaptive integrator's rtol")
      ->capture_default_str()
      ->check(CLI::Range(1e-14, 1.0));
  rd->add_option("--event-tol", d->eventTol,
                 "adaptive rows: contactEventTol [m] (< 0: the default)")
      ->capture_default_str()
      ->check(CLI::Range(-1.0, 1.0));
  rd->add_option("--repeats", d->repeats, "timing: best of this many runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  rd->add_option("--seed", d->seed, "initial-state and loss-weight seed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4294967295.0));
  rd->add_option("--csv", d->csv, "also write the table as CSV (atomically)");

  return [pm, p, rd, d]() -> int {
    if (pm->parsed()) return runPointMass(*p);
    if (rd->parsed()) {
      const toys::RobotDropReport r = toys::runRobotDrop(*d);
      toys::printRobotDrop(r);
      if (!d->csv.empty())
        spdlog::info("toy robot-drop: wrote {}", toys::writeRobotDropCsv(r, d->csv));
      return 0;
    }
    return -1;  // not ours
  };
}

}  // namespace diffloco::cli
