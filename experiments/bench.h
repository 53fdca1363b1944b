// `diffloco bench`: simulator, environment and training-iteration speed, with MuJoCo's step
// measured in the same process as the anchor that absolute times are compared against.
#pragma once

namespace diffloco::experiments {

// Runs every benchmark (each the best of repeats lasting >= `seconds` in all) and prints a table,
// or one JSON object when `json`. Returns the process exit code.
int runBench(bool json, double seconds);

}  // namespace diffloco::experiments
