#include "cli/program.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <map>

#include "cli/cmd_robot.h"
#include "cli/commands.h"

namespace diffloco::cli {

int runProgram(const std::vector<std::string>& args) {
  CLI::App app{"diffloco: quadruped locomotion from a differentiable simulator"};
  app.name("diffloco");
  app.require_subcommand(1);
  std::map<CLI::App*, Runner> runners;
  auto add = [&](Runner (*f)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    auto r = f(app);
    runners[app.get_subcommands({})[before]] = r;
  };
  add(addSimCommand);
  add(addBenchCommand);
  add(addToyCommand);
  add(addGradcheckCommand);
  add(addSysidCommand);
  add(addTrainCommand);
  add(addPlotCommand);
  add(addExportCommand);
  add(addFitActuatorCommand);
  add(addEvalCommand);
  add(addPlayCommand);
  add(addRobotCommand);
  try {
    // CLI11 takes the arguments last first
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}

}  // namespace diffloco::cli
