// Loading a Model from a URDF file.
//
// Supported: one root link (the floating base), revolute and continuous joints, fixed joints (the
// child link is merged into its parent: inertia summed, sphere collisions re-attached). Each sphere
// collision becomes a Foot. Other collision and all visual geometry are ignored. Errors are thrown
// as ModelError naming the file, the line, the element and what was expected. Any number of fixed
// links is merged (no recursion); at most kMaxMovableJoints movable joints are accepted.
//
// Vendor files load as they are: visual geometry and meshes are never opened (package:// paths are
// not resolved), elements other than <link> and <joint> under <robot> (transmission, gazebo,
// material, sensor, ...) and unknown children of those are ignored, massless links fixed to others
// are merged, a massless dummy root is allowed when mass is fixed to it, and one <joint
// type="floating"> from a massless dummy root makes its child the base. As in the URDF spec, the
// <axis>, <limit> and <dynamics> of fixed and floating joints are ignored (an axis "0 0 0" there
// loads); optional elements may be missing: <origin> is the identity, <axis> is x, without <limit>
// a joint is unlimited, without <dynamics> undamped; a continuous joint's lower and upper limits
// are ignored. A non-physical inertia is repaired with a warning (see UrdfOptions::strict);
// non-sphere collision geometry (a <collision> without <geometry> too) is ignored with one summary
// note. Refused as impossible: a negative mass, a movable link without mass, a zero axis, an
// effort limit <= 0, a lower limit above the upper, negative damping, two links or two joints of
// one name, a link with two parents, joints that form a cycle.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model.h"

namespace diffloco::sim {

struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The dynamics are O(n^2) in the movable joints (H is n x n); a legged robot has tens.
inline constexpr int kMaxMovableJoints = 256;

struct UrdfOptions {
  // false: a link inertia that violates the triangle inequality of its principal moments (which
  // covers a slightly indefinite one) is repaired as MuJoCo's compiler option balanceinertia does
  // and reported as a warning; true: it is an error naming the link.
  bool strict = false;
};

// What a loader says besides the model: warnings (a repaired input) and notes (ignored parts), each
// a full sentence starting with "file:line: " where a line applies.
struct UrdfReport {
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Without a report, warnings and notes are printed to stderr.
Model loadUrdf(const std::string& path, const UrdfOptions& options = {},
               UrdfReport* report = nullptr);
Model parseUrdf(const std::string& xml, const std::string& sourceName,
                const UrdfOptions& options = {}, UrdfReport* report = nullptr);

}  // namespace diffloco::sim
