// diffloco: one program, one subcommand per job; each cli/cmd_*.cpp registers its options, calls
// the layer that does the work and prints (cli/commands.h lists them).
#include <spdlog/spdlog.h>

#include <exception>
#include <iostream>
#include <map>

#include "cli/cmd_robot.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"diffloco: quadruped locomotion from a differentiable simulator"};
  app.require_subcommand(1);
  std::map<CLI::App*, diffloco::cli::Runner> runners;
  auto add = [&](diffloco::cli::Runner (*f)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    auto r = f(app);
    runners[app.get_subcommands({})[before]] = r;
  };
  add(diffloco::cli::addSimCommand);
  add(diffloco::cli::addBenchCommand);
  add(diffloco::cli::addToyCommand);
  add(diffloco::cli::addGradcheckCommand);
  add(diffloco::cli::addSysidCommand);
  add(diffloco::cli::addTrainCommand);
  add(diffloco::cli::addPlotCommand);
  add(diffloco::cli::addExportCommand);
  add(diffloco::cli::addFitActuatorCommand);
  add(diffloco::cli::addEvalCommand);
  add(diffloco::cli::addPlayCommand);
  add(diffloco::cli::addRobotCommand);
  CLI11_PARSE(app, argc, argv);
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
