// `diffloco bench`: speed of the simulator against anchors measured in the same run.
#include "cli/commands.h"
#include "experiments/bench.h"

namespace diffloco::cli {

Runner addBenchCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure simulator speed (and MuJoCo's, as an anchor)");
  auto json = std::make_shared<bool>(false);
  auto seconds = std::make_shared<double>(0.5);
  cmd->add_flag("--json", *json, "print one JSON object");
  auto roughFrom = std::make_shared<std::string>();
  cmd->add_option("--seconds", *seconds, "minimum time per measurement [s]")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  cmd->add_option("--rough-from", *roughFrom,
                  "a checkpoint (model_<iter>.pt) of configs/velocity_anymal_rough_shac.yaml: the "
                  "rough config's SHAC iterations start from its networks, a trained state, "
                  "instead of fresh ones")
      ->check(CLI::ExistingFile);
  return [json, seconds, roughFrom] { return experiments::runBench(*json, *seconds, *roughFrom); };
}

}  // namespace diffloco::cli
