// `diffloco train --nproc N`: N local ranks of one command, as torchrun runs them. The children
// get torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1,
// MASTER_PORT: a free port); the launcher waits for them, and when one fails it names that rank
// and stops the others (SIGTERM, then SIGKILL after `graceS`). Children die with the launcher.
// Torch-free (POSIX).
#pragma once

#include <string>
#include <vector>

namespace diffloco::distributed {

// Runs `program args...` nproc times; returns 0 when every rank exited 0, else the first failed
// rank's exit code (128 + signal for a signal). Throws when a child cannot be started.
int launchLocalRanks(int nproc, const std::string& program, const std::vector<std::string>& args,
                     double graceS = 10);

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice).
int freeLocalPort();

}  // namespace diffloco::distributed
