// The background of every frame: a checkered ground plane (z = 0) so that motion is visible
// against it, blob shadows under the robots so that height is, and sky above the horizon. Drawn
// per pixel by intersecting the pixel's ray with the plane, which also fills the depth buffer.
// With a height field (terrain_mesh.h) the plane is drawn only outside the field's window.
#pragma once

#include <vector>

#include "sim/terrain.h"
#include "viz/rasterizer.h"

namespace diffloco::viz {

struct GroundStyle {
  double tile = 0.5;    // checker square side [m]
  double fogStart = 8;  // distance where the ground starts fading into the sky [m]
  double fogEnd = 30;   // ... and where it has faded completely [m]
  Rgb light{205, 205, 200}, dark{160, 160, 158}, sky{190, 215, 240};
};

// A soft dark disc on the ground under a body.
struct BlobShadow {
  Vec3 centre;  // on the ground under the body (the plane ignores z)
  double radius = 0.4;
};

// `window`: where the ray meets the plane inside the field's (x, y) rectangle, the pixel gets
// the sky and no depth: the terrain mesh draws there.
void drawGround(Canvas& canvas, const Camera& camera, const std::vector<BlobShadow>& shadows,
                const GroundStyle& style = {}, const sim::HeightField* window = nullptr);

}  // namespace diffloco::viz
