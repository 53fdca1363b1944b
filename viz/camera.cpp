#include "viz/camera.h"

#include <cmath>

namespace diffloco::viz {

Camera::Camera(const Vec3& eye, const Vec3& target, int width, int height, double fovYDeg)
    : eye_(eye), width_(width), height_(height) {
  forward_ = (target - eye).normalized();
  // Looking straight down leaves "right" undefined; any horizontal axis will do then.
  Vec3 right = forward_.cross(Vec3::UnitZ());
  right_ = right.norm() > 1e-9 ? right.normalized() : Vec3::UnitX();
  up_ = right_.cross(forward_);
  focal_ = 0.5 * height / std::tan(0.5 * fovYDeg * M_PI / 180.0);
}

Projected Camera::project(const Vec3& world) const {
  const Vec3 d = world - eye_;
  Projected p;
  p.depth = d.dot(forward_);
  if (p.depth <= 0) return p;
  p.x = 0.5 * width_ + focal_ * d.dot(right_) / p.depth;
  p.y = 0.5 * height_ - focal_ * d.dot(up_) / p.depth;
  return p;
}

Vec3 Camera::ray(double x, double y) const {
  return forward_ + ((x - 0.5 * width_) / focal_) * right_ - ((y - 0.5 * height_) / focal_) * up_;
}

}  // namespace diffloco::viz
