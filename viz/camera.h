// A pinhole camera looking from `eye` at `target` with z up: projects world points to pixels and
// gives each pixel's viewing ray (the ground is drawn per pixel by intersecting that ray).
#pragma once

#include "sim/spatial.h"

namespace diffloco::viz {

using sim::Vec3;

struct Projected {
  double x = 0, y = 0;  // pixel coordinates (x right, y down)
  double depth = 0;     // distance along the viewing direction; <= 0 behind the camera
};

class Camera {
 public:
  Camera(const Vec3& eye, const Vec3& target, int width, int height, double fovYDeg = 40);

  Projected project(const Vec3& world) const;
  // Direction (not normalised) of the ray through the centre of pixel (x, y); its component
  // along forward() is 1, so a hit at ray parameter s has depth s.
  Vec3 ray(double x, double y) const;

  const Vec3& eye() const { return eye_; }
  const Vec3& forward() const { return forward_; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  Vec3 eye_, forward_, right_, up_;
  int width_, height_;
  double focal_;  // pixels per unit of tangent
};

}  // namespace diffloco::viz
