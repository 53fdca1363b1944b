// `diffloco robot init|check` (cli/cmd_robot.cpp). Declared here rather than in cli/commands.h,
// which every command includes: a new command need not recompile the others.
#pragma once

#include "cli/commands.h"

namespace diffloco::cli {

Runner addRobotCommand(CLI::App& app);

}  // namespace diffloco::cli
