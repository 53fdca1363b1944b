// Loading a Model from a URDF file.
//
// Supported: one root link (the floating base), revolute and continuous joints, fixed joints (the
// child link is merged into its parent: inertia summed, sphere collisions re-attached). Each sphere
// collision becomes a Foot. Other collision and all visual geometry are ignored. Errors are thrown as
// ModelError naming the file, the line, the element and what was expected. Any number of fixed
// links is merged (no recursion); at most kMaxMovableJoints movable joints are accepted.
#pragma once

#include <stdexcept>
#include <string>

#include "sim/model.h"

namespace diffloco::sim {

struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The dynamics are O(n^2) in the movable joints (H is n x n); a legged robot has tens.
inline constexpr int kMaxMovableJoints = 256;

Model loadUrdf(const std::string& path);
Model parseUrdf(const std::string& xml, const std::string& sourceName);

}  // namespace diffloco::sim
