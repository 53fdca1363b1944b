// Subcommands of the diffloco program. Each registers its options on the CLI11 app and returns the
// exit code when run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace diffloco::cli {

using Runner = std::function<int()>;

Runner addSimCommand(CLI::App& app);
Runner addBenchCommand(CLI::App& app);
Runner addToyCommand(CLI::App& app);
Runner addGradcheckCommand(CLI::App& app);
Runner addSysidCommand(CLI::App& app);
Runner addTrainCommand(CLI::App& app);
Runner addPlotCommand(CLI::App& app);
Runner addExportCommand(CLI::App& app);
Runner addFitActuatorCommand(CLI::App& app);
Runner addEvalCommand(CLI::App& app);
Runner addPlayCommand(CLI::App& app);

}  // namespace diffloco::cli
