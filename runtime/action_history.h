// The action_history observation's depth, one check for the training term (envs/terms.cpp) and
// the robot side (runtime/controller.h): the last `steps` decisions' actions, 1 to 16.
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace diffloco::deploy {

inline constexpr int kMaxActionHistory = 16;

// Throws std::invalid_argument unless steps is an integer in [1, kMaxActionHistory].
inline int actionHistorySteps(double steps) {
  if (!(steps >= 1 && steps <= kMaxActionHistory && steps == std::floor(steps))) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", steps);
    throw std::invalid_argument("observations.action_history.steps must be an integer in [1, " +
                                std::to_string(kMaxActionHistory) + "], not " + value);
  }
  return static_cast<int>(steps);
}

}  // namespace diffloco::deploy
