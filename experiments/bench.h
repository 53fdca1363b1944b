// `diffloco bench`: simulator, environment and training-iteration speed, with MuJoCo's step
// measured in the same process as the anchor that absolute times are compared against.
#pragma once

#include <string>

namespace diffloco::experiments {

// Runs every benchmark (each the best of repeats lasting >= `seconds` in all) and prints a table,
// or one JSON object when `json`. roughFrom: a checkpoint whose networks the rough config's SHAC
// iterations start from ("": fresh ones; benchTraining). Returns the process exit code.
int runBench(bool json, double seconds, const std::string& roughFrom = "");

}  // namespace diffloco::experiments
