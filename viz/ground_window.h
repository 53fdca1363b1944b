// The part of a height field a rollout needs: the robots' bounding box over the whole rollout plus
// a margin. A generated field can be 1700 x 1700 samples; the record, the HTML page and the frames
// only carry and draw this window (outside it they draw the plane z = 0).
#pragma once

#include <memory>

#include "sim/terrain.h"
#include "viz/rollout.h"

namespace diffloco::viz {

// Heights are rounded to 1 / this [m] (0.1 mm, far below a pixel) as k / 1e4, the double nearest
// to what the record writes with 4 decimals: a record read back holds the very field the frames
// were drawn from.
constexpr double kGroundHeightSteps = 1e4;

// The samples of `field` inside [xMin, xMax] x [yMin, yMax] (widened to whole cells, clamped to
// the field, at least 2 x 2 samples), heights rounded to 1 / kGroundHeightSteps.
sim::HeightField cropHeightField(const sim::HeightField& field, double xMin, double yMin,
                                 double xMax, double yMax);

// The window of `field` around every recorded base position of `rollout`, `margin` [m] to each
// side. Null when `field` is null (the plane) or the rollout has no frames.
std::shared_ptr<const sim::HeightField> groundWindow(const sim::HeightField* field,
                                                     const Rollout& rollout, double margin = 3.0);

}  // namespace diffloco::viz
