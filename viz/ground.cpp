#include "viz/ground.h"

#include <algorithm>
#include <cmath>

namespace diffloco::viz {

namespace {
std::uint8_t mix(std::uint8_t a, std::uint8_t b, double t) {
  return static_cast<std::uint8_t>(std::lround(a + (b - a) * t));
}
}  // namespace

void drawGround(Canvas& canvas, const Camera& camera, const std::vector<BlobShadow>& shadows,
                const GroundStyle& s, const sim::HeightField* window) {
  const Vec3& eye = camera.eye();
  const int w = canvas.color.width, h = canvas.color.height;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* out = canvas.color.at(x, y);
      const Vec3 ray = camera.ray(x + 0.5, y + 0.5);
      const double t = -eye.z() / ray.z();  // ray parameter = depth (camera.ray's scaling)
      const Vec3 hit = eye + t * ray;
      if (ray.z() >= 0 || eye.z() <= 0 ||
          (window && hit.x() >= window->originX && hit.y() >= window->originY &&
           hit.x() <= window->originX + window->sizeX() &&
           hit.y() <= window->originY + window->sizeY())) {
        out[0] = s.sky.r, out[1] = s.sky.g, out[2] = s.sky.b;
        continue;
      }
      const long cx = static_cast<long>(std::floor(hit.x() / s.tile));
      const long cy = static_cast<long>(std::floor(hit.y() / s.tile));
      const Rgb tile = ((cx + cy) & 1) ? s.dark : s.light;
      double shade = 1;
      for (const BlobShadow& b : shadows) {
        const double r = std::hypot(hit.x() - b.centre.x(), hit.y() - b.centre.y()) / b.radius;
        if (r < 1) shade *= 0.55 + 0.45 * r * r;
      }
      const double distance = (hit - eye).norm();
      const double fog = std::clamp((distance - s.fogStart) / (s.fogEnd - s.fogStart), 0.0, 1.0);
      out[0] = mix(static_cast<std::uint8_t>(tile.r * shade), s.sky.r, fog);
      out[1] = mix(static_cast<std::uint8_t>(tile.g * shade), s.sky.g, fog);
      out[2] = mix(static_cast<std::uint8_t>(tile.b * shade), s.sky.b, fog);
      canvas.depth[static_cast<size_t>(y) * w + x] = static_cast<float>(t);
    }
}

}  // namespace diffloco::viz
