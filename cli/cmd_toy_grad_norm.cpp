// `diffloco toy grad-norm`: Figure 5 (left) of the locomotion paper, the norm of the gradient of
// the return with respect to the actions against the horizon for both robots with a fixed random
// policy (experiments/grad_norm.h defines the quantity). Registered under `toy` by cmd_toy.cpp; the
// computation (LibTorch) lives in diffloco_train, this file is torch-free.
#include <spdlog/spdlog.h>

#include <memory>

#include "cli/commands.h"
#include "experiments/grad_norm.h"

namespace diffloco::cli {

namespace {

struct GradNormArgs {
  experiments::GradNormOptions options;
  std::string out = "runs/toy_grad_norm";
  bool noPlot = false;
};

int runGradNormToy(const GradNormArgs& a) {
  const auto& o = a.options;
  spdlog::info("toy grad-norm: horizons {}, {} envs x {} windows per point, seed {}",
               fmt::join(o.horizons, ", "), o.envs, o.windows, o.seed);
  const experiments::GradNormResult r = experiments::runGradNorm(o);
  spdlog::info("toy grad-norm: wrote {}", experiments::writeGradNormCsv(r, a.out));
  if (!a.noPlot) spdlog::info("toy grad-norm: wrote {}", experiments::plotGradNorm(r, a.out));
  return 0;
}

}  // namespace

Runner addGradNormToyCommand(CLI::App& toy) {
  auto* cmd = toy.add_subcommand(
      "grad-norm",
      "Figure 5 (left): norm of d(return)/d(actions) against the horizon for both robots (walk "
      "task on quadruped, velocity task on anymal) with a fixed random policy");
  auto a = std::make_shared<GradNormArgs>();
  auto& o = a->options;
  cmd->add_option("--out", a->out, "output folder for grad_norm.csv/.png/.gp")
      ->capture_default_str();
  cmd->add_option("--horizons", o.horizons, "window lengths H [env steps]")
      ->capture_default_str()
      ->expected(1, 16)
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--envs", o.envs, "parallel envs per robot")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--windows", o.windows, "consecutive windows per horizon")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  // The range is checked on the text: CLI11 wraps an out-of-range unsigned value silently.
  cmd->add_option("--seed", o.seed, "seed of the policy initialisation and of the envs")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 9.2e18));
  cmd->add_option("--threads", o.threads, "simulator threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--no-plot", a->noPlot, "write the CSV only (no gnuplot)");
  return [cmd, a]() -> int { return cmd->parsed() ? runGradNormToy(*a) : -1; };
}

}  // namespace diffloco::cli
