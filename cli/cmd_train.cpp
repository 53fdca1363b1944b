// `diffloco train CONFIG.yaml [--set a.b.c=value ...] [--seed N] [--out DIR] [--resume RUN]
// [--nproc N] [--trace-iteration N]` and `diffloco plot RUN...`.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "distributed/launcher.h"
#include "runs/plot.h"
#include "train/trainer.h"

namespace diffloco::cli {

Runner addTrainCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a policy (SHAC or PPO) from a training config; writes a run folder with the resolved "
      "config, metrics.csv, TensorBoard events, checkpoints model_<iter>.pt and policy.pt");
  auto a = std::make_shared<train::TrainArgs>();
  auto seed = std::make_shared<std::int64_t>(-1);
  cmd->add_option("config", a->config,
                  "training config (configs/*.yaml); optional with --resume, where the run's own "
                  "config.yaml is used");
  cmd->add_option("--set", a->sets,
                  "override a setting: key.path=value, YAML value (repeatable), e.g. "
                  "--set shac.iterations=500 --set task.sim.contact=hard");
  cmd->add_option("--seed", *seed, "seed (overrides the config's)")
      ->check(CLI::Range(0.0, 9.2e18));  // on the text: an overflow is refused, not wrapped
  cmd->add_option("--out", a->out, "parent folder of the run folders")->capture_default_str();
  cmd->add_option("--resume", a->resume,
                  "run folder to continue from its last checkpoint (only iterations and run.* "
                  "settings may change)");
  cmd->add_flag("--verbose,-v", a->verbose, "print per-term rewards and losses every iteration");
  cmd->add_option("--trace-iteration", a->traceIteration,
                  "record iteration N's torch operations and autograd nodes to "
                  "<run>/trace_iteration_N.json (Chrome trace; tools/tables/trace_summary.py)")
      ->check(CLI::Range(1, 100000000));
  auto nproc = std::make_shared<int>(1);
  cmd->add_option("--nproc", *nproc,
                  "data-parallel training on this machine: N ranks (processes), each with the "
                  "config's num_envs environments; gradients are summed over the ranks "
                  "(torchrun's variables RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT do the same "
                  "across machines)")
      ->check(CLI::Range(1, 1024));
  return [a, seed, nproc] {
    if (*seed >= 0) a->seed = *seed;
    if (*nproc > 1) {
      if (std::getenv("RANK"))
        throw std::runtime_error("--nproc: this process is already a rank (RANK is set)");
      // The same command without --nproc, once per rank.
      std::vector<std::string> args{"train"};
      if (!a->config.empty()) args.push_back(a->config);
      for (const auto& s : a->sets) args.insert(args.end(), {"--set", s});
      if (a->seed) args.insert(args.end(), {"--seed", std::to_string(*a->seed)});
      args.insert(args.end(), {"--out", a->out});
      if (!a->resume.empty()) args.insert(args.end(), {"--resume", a->resume});
      if (a->verbose) args.push_back("--verbose");
      if (a->traceIteration > 0)
        args.insert(args.end(), {"--trace-iteration", std::to_string(a->traceIteration)});
      const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
      return distributed::launchLocalRanks(*nproc, self, args);
    }
    const train::TrainResult r = train::train(*a);
    if (!r.finished)
      spdlog::info("stopped at iteration {}; continue with: diffloco train --resume {}",
                   r.iteration, r.runDir);
    return 0;
  };
}

Runner addPlotCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "plot",
      "Learning curves (PNG, gnuplot) of one or more runs from their metrics.csv: mean "
      "training return against iterations and against environment samples");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto metric = std::make_shared<std::string>("Train/mean_reward");
  cmd->add_option("runs", *runs, "run folders (or metrics.csv files)")->required();
  cmd->add_option("-o,--output", *out,
                  "PNG to write (default: RUN/learning_curves.png for one run, "
                  "./learning_curves.png for several)");
  cmd->add_option("--metric", *metric, "metrics.csv column to plot")->capture_default_str();
  return [runs, out, metric] {
    const std::string png = runs::plotRuns(*runs, *out, *metric);
    spdlog::info("wrote {}", png);
    return 0;
  };
}

}  // namespace diffloco::cli
