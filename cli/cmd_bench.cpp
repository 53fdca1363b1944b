// `diffloco bench`: speed of the simulator against anchors measured in the same run.
#include "cli/commands.h"
#include "experiments/bench.h"

namespace diffloco::cli {

Runner addBenchCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure simulator speed (and MuJoCo's, as an anchor)");
  auto json = std::make_shared<bool>(false);
  auto seconds = std::make_shared<double>(0.5);
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->add_option("--seconds", *seconds, "minimum time per measurement [s]")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  return [json, seconds] { return experiments::runBench(*json, *seconds); };
}

}  // namespace diffloco::cli
