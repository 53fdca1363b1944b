// Triangles into a colour image with a depth buffer: flat shading, one directional light
// (Lambert) plus ambient. Small on purpose: a robot is a few thousand triangles, and a renderer
// of our own runs headless with no GPU, display or GL library.
#pragma once

#include <vector>

#include "viz/camera.h"
#include "viz/image.h"

namespace diffloco::viz {

struct Canvas {
  Image color;
  std::vector<float> depth;  // per pixel; +inf where nothing is drawn yet

  Canvas(int width, int height);
};

struct Light {
  Vec3 towardLight = Vec3(0.4, -0.5, 0.8).normalized();  // unit vector from surface to light
  double ambient = 0.35;
};

// Draws the world-space triangle (a, b, c) in `color`, shaded by the angle between its normal
// (turned toward the camera, so winding does not matter) and the light. Triangles with a vertex
// behind the camera are skipped: the camera never gets close enough to the robot for that to cut
// away anything visible.
void drawTriangle(Canvas& canvas, const Camera& camera, const Vec3& a, const Vec3& b, const Vec3& c,
                  Rgb color, const Light& light = {});

// Lambert factor of a surface with unit normal n (either side: it is turned toward `viewer`).
double lambert(Vec3 n, const Vec3& viewer, const Light& light = {});

// Fills a triangle already projected by `camera` (every depth >= the near plane) with one colour,
// depth-tested: what drawTriangle and the terrain (which projects each grid vertex once per
// frame, shared by its triangles) both end in.
void fillTriangle(Canvas& canvas, const Projected (&p)[3], Rgb color);

// The near plane: triangles with a vertex closer than this are not drawn [m].
constexpr double kNearDepth = 0.05;

}  // namespace diffloco::viz
