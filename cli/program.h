// The diffloco program as a function: parses `args` (without the program name) into one
// subcommand and runs it. What `main` does, and what the Python package's `diffloco.cli` calls.
#pragma once

#include <string>
#include <vector>

namespace diffloco::cli {

// Returns the exit code: 0 on success, 1 with the error logged (spdlog) when the subcommand
// throws, CLI11's code on a bad command line (its message printed, as the program does).
int runProgram(const std::vector<std::string>& args);

}  // namespace diffloco::cli
