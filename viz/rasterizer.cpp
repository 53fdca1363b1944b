#include "viz/rasterizer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace diffloco::viz {

Canvas::Canvas(int width, int height)
    : color(width, height),
      depth(static_cast<size_t>(width) * height, std::numeric_limits<float>::infinity()) {}

double lambert(Vec3 n, const Vec3& viewer, const Light& light) {
  if (n.dot(viewer) < 0) n = -n;
  return std::min(1.0,
                  light.ambient + (1 - light.ambient) * std::max(0.0, n.dot(light.towardLight)));
}

void drawTriangle(Canvas& canvas, const Camera& camera, const Vec3& a, const Vec3& b, const Vec3& c,
                  Rgb color, const Light& light) {
  const Projected p[3] = {camera.project(a), camera.project(b), camera.project(c)};
  for (const auto& q : p)
    if (q.depth < kNearDepth) return;

  Vec3 n = (b - a).cross(c - a);
  if (n.squaredNorm() == 0) return;
  const double shade = lambert(n.normalized(), camera.eye() - a, light);
  fillTriangle(
      canvas, p,
      {static_cast<std::uint8_t>(color.r * shade), static_cast<std::uint8_t>(color.g * shade),
       static_cast<std::uint8_t>(color.b * shade)});
}

void fillTriangle(Canvas& canvas, const Projected (&p)[3], Rgb color) {
  const std::uint8_t rgb[3] = {color.r, color.g, color.b};
  // Edge functions over the pixel centres of the bounding box; 1/depth is linear in screen space,
  // so it is what gets interpolated.
  const double area = (p[1].x - p[0].x) * (p[2].y - p[0].y) - (p[2].x - p[0].x) * (p[1].y - p[0].y);
  if (std::abs(area) < 1e-12) return;
  const int w = canvas.color.width, h = canvas.color.height;
  const int x0 = std::max(0, static_cast<int>(std::floor(std::min({p[0].x, p[1].x, p[2].x}))));
  const int x1 = std::min(w - 1, static_cast<int>(std::ceil(std::max({p[0].x, p[1].x, p[2].x}))));
  const int y0 = std::max(0, static_cast<int>(std::floor(std::min({p[0].y, p[1].y, p[2].y}))));
  const int y1 = std::min(h - 1, static_cast<int>(std::ceil(std::max({p[0].y, p[1].y, p[2].y}))));
  const double inv[3] = {1 / p[0].depth, 1 / p[1].depth, 1 / p[2].depth};
  for (int y = y0; y <= y1; ++y) {
    const double py = y + 0.5;
    for (int x = x0; x <= x1; ++x) {
      const double px = x + 0.5;
      const double w0 = ((p[1].x - px) * (p[2].y - py) - (p[2].x - px) * (p[1].y - py)) / area;
      const double w1 = ((p[2].x - px) * (p[0].y - py) - (p[0].x - px) * (p[2].y - py)) / area;
      const double w2 = 1 - w0 - w1;
      if (w0 < 0 || w1 < 0 || w2 < 0) continue;
      const float z = static_cast<float>(1 / (w0 * inv[0] + w1 * inv[1] + w2 * inv[2]));
      float& d = canvas.depth[static_cast<size_t>(y) * w + x];
      if (z >= d) continue;
      d = z;
      std::uint8_t* out = canvas.color.at(x, y);
      out[0] = rgb[0], out[1] = rgb[1], out[2] = rgb[2];
    }
  }
}

}  // namespace diffloco::viz
