// The rollout record (`diffloco eval --record traj.json`, `diffloco play -o traj.json`): compact
// JSON with everything a viewer needs and nothing of the simulator: the robot's shapes (per body,
// in the body's frame), and per env and frame the pose of every body, the command and the
// measured velocity, and the ground's window when the rollout ran on a height field. Format
// "diffloco-rollout-2":
//   {"format", "robot", "task", "engine", "policy", "dt", "has_commands",
//    "bodies": [names], "shapes": [{"body", "kind": box|capsule|sphere, "a", "b", "radius",
//    "color"}],
//    "terrain": {"origin": [x, y], "spacing", "nx", "ny", "heights": [ny x nx, x fastest]},
//    "envs": [{"frames": N, "time": [N], "pose": [N x bodies x (x y z qw qx qy qz)],
//    "command": [N x 3], "velocity": [N x 3]}]}
// "terrain" is absent on the plane z = 0; "diffloco-rollout-1" is the same format without it.
// Positions in metres (world), quaternions body -> world, velocities in base axes.
#pragma once

#include <string>

#include "viz/rollout.h"

namespace diffloco::viz {

std::string rolloutJson(const Rollout& rollout);

}  // namespace diffloco::viz
