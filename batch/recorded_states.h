// Host-side: worlds from a recorded rollout (tools/record/rollout_states.py of `diffloco eval
// --record`), for gpu_check to step and time the states a policy visits rather than random ones.
// The record keeps body poses only: the joint angles are recovered from the bodies' rotations, the
// velocities are finite differences over the record's frame interval, the targets the next frame's
// angles.
#pragma once

#include <string>

#include "batch/world_set.h"
#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::batch {

struct RecordedStates {
  WorldSet worlds;
  sim::HeightField field;
  // The largest distance between a recorded body origin and the one forward kinematics puts at
  // the recovered configuration [m]: the record's rounding, or a mismatch of robot and record.
  double maxPositionError = 0;
};

// Reads PREFIX.poses.bin, PREFIX.bodies.txt and PREFIX.field.bin (tools/record/rollout_states.py)
// for `model` (its bodies matched by name); frameDt is the record's frame interval [s]. Throws
// std::runtime_error naming the file on bad or missing input.
RecordedStates loadRecordedStates(const sim::Model& model, const std::string& prefix,
                                  double frameDt);

}  // namespace diffloco::batch
