// diffloco: one program, one subcommand per job; each cli/cmd_*.cpp registers its options, calls
// the layer that does the work and prints (cli/commands.h lists them, cli/program.cpp runs them).
#include <string>
#include <vector>

#include "cli/program.h"

int main(int argc, char** argv) {
  return diffloco::cli::runProgram(std::vector<std::string>(argv + 1, argv + argc));
}
