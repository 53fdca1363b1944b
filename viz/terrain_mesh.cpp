#include "viz/terrain_mesh.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace diffloco::viz {

namespace {

Rgb scaled(Rgb c, double f) {
  auto s = [f](std::uint8_t x) {
    return static_cast<std::uint8_t>(std::min(255.0, std::max(0.0, x * f)));
  };
  return {s(c.r), s(c.g), s(c.b)};
}

std::uint8_t mix(double a, std::uint8_t b, double t) {
  return static_cast<std::uint8_t>(std::lround(a + (b - a) * t));
}

}  // namespace

Vec3 TerrainMesh::vertex(int ix, int iy) const {
  const sim::HeightField& f = *field_;
  return Vec3(f.originX + ix * f.spacing, f.originY + iy * f.spacing, f.at(ix, iy));
}

TerrainMesh::TerrainMesh(std::shared_ptr<const sim::HeightField> field, const GroundStyle& style,
                         const Light& light)
    : field_(std::move(field)), style_(style) {
  if (!field_) throw std::invalid_argument("terrain mesh: no height field");
  sim::validateHeightField(*field_, "terrain mesh");
  const sim::HeightField& f = *field_;
  // Relative to flat ground, so that a flat field looks like the plane around it.
  const Vec3 up = Vec3::UnitZ();
  const double flat = lambert(up, up, light);
  colors_.reserve(2 * static_cast<size_t>(f.nx - 1) * (f.ny - 1));
  for (int iy = 0; iy + 1 < f.ny; ++iy)
    for (int ix = 0; ix + 1 < f.nx; ++ix) {
      const Vec3 v00 = vertex(ix, iy), v10 = vertex(ix + 1, iy), v01 = vertex(ix, iy + 1),
                 v11 = vertex(ix + 1, iy + 1);
      const long cx = static_cast<long>(std::floor((v00.x() + 0.5 * f.spacing) / style.tile));
      const long cy = static_cast<long>(std::floor((v00.y() + 0.5 * f.spacing) / style.tile));
      const Rgb tile = ((cx + cy) & 1) ? style.dark : style.light;
      // Both normals point up (z component spacing^2 > 0): no turning toward a viewer needed.
      const Vec3 n1 = (v10 - v00).cross(v11 - v00).normalized();
      const Vec3 n2 = (v11 - v00).cross(v01 - v00).normalized();
      colors_.push_back(scaled(tile, lambert(n1, up, light) / flat));
      colors_.push_back(scaled(tile, lambert(n2, up, light) / flat));
    }
  // Skirts along the four edges, where the field is not at the plane's height.
  auto edge = [&](int ix0, int iy0, int dx, int dy, int count, const Vec3& outward) {
    const Rgb color = scaled(style.dark, lambert(outward, outward, light) / flat);
    for (int k = 0; k + 1 < count; ++k) {
      const Vec3 a = vertex(ix0 + k * dx, iy0 + k * dy),
                 b = vertex(ix0 + (k + 1) * dx, iy0 + (k + 1) * dy);
      if (a.z() == 0 && b.z() == 0) continue;
      skirts_.push_back({{a, b}, {Vec3(a.x(), a.y(), 0), Vec3(b.x(), b.y(), 0)}, color});
    }
  };
  edge(0, 0, 1, 0, f.nx, -Vec3::UnitY());
  edge(0, f.ny - 1, 1, 0, f.nx, Vec3::UnitY());
  edge(0, 0, 0, 1, f.ny, -Vec3::UnitX());
  edge(f.nx - 1, 0, 0, 1, f.ny, Vec3::UnitX());
}

Rgb TerrainMesh::shaded(Rgb base, double shadow, double distance) const {
  const GroundStyle& s = style_;
  const double fog = std::clamp((distance - s.fogStart) / (s.fogEnd - s.fogStart), 0.0, 1.0);
  return {mix(base.r * shadow, s.sky.r, fog), mix(base.g * shadow, s.sky.g, fog),
          mix(base.b * shadow, s.sky.b, fog)};
}

void TerrainMesh::draw(Canvas& canvas, const Camera& camera,
                       const std::vector<BlobShadow>& shadows) const {
  const sim::HeightField& f = *field_;
  const int nx = f.nx, ny = f.ny, cellsX = nx - 1;
  // Every grid vertex projected once, shared by the (up to) six triangles around it.
  std::vector<Projected> p(static_cast<size_t>(nx) * ny);
  for (int iy = 0; iy < ny; ++iy)
    for (int ix = 0; ix < nx; ++ix)
      p[static_cast<size_t>(iy) * nx + ix] = camera.project(vertex(ix, iy));

  // Blob shadows per cell (the plane's fall-off: 0.55 at the centre to 1 at the radius).
  std::vector<float> shadow(static_cast<size_t>(cellsX) * (ny - 1), 1.0f);
  for (const BlobShadow& b : shadows) {
    const int x0 = std::max(0, static_cast<int>((b.centre.x() - b.radius - f.originX) / f.spacing));
    const int x1 =
        std::min(cellsX - 1, static_cast<int>((b.centre.x() + b.radius - f.originX) / f.spacing));
    const int y0 = std::max(0, static_cast<int>((b.centre.y() - b.radius - f.originY) / f.spacing));
    const int y1 =
        std::min(ny - 2, static_cast<int>((b.centre.y() + b.radius - f.originY) / f.spacing));
    for (int iy = y0; iy <= y1; ++iy)
      for (int ix = x0; ix <= x1; ++ix) {
        const double r = std::hypot(f.originX + (ix + 0.5) * f.spacing - b.centre.x(),
                                    f.originY + (iy + 0.5) * f.spacing - b.centre.y()) /
                         b.radius;
        if (r < 1)
          shadow[static_cast<size_t>(iy) * cellsX + ix] *= static_cast<float>(0.55 + 0.45 * r * r);
      }
  }

  const Vec3& eye = camera.eye();
  const double w = canvas.color.width, h = canvas.color.height;
  for (int iy = 0; iy + 1 < ny; ++iy)
    for (int ix = 0; ix < cellsX; ++ix) {
      const size_t i00 = static_cast<size_t>(iy) * nx + ix;
      const Projected &a = p[i00], &b = p[i00 + 1], &c = p[i00 + nx], &d = p[i00 + nx + 1];
      if (std::min({a.depth, b.depth, c.depth, d.depth}) < kNearDepth) continue;
      if (std::max({a.x, b.x, c.x, d.x}) < 0 || std::min({a.x, b.x, c.x, d.x}) > w ||
          std::max({a.y, b.y, c.y, d.y}) < 0 || std::min({a.y, b.y, c.y, d.y}) > h)
        continue;
      const Vec3 centre(f.originX + (ix + 0.5) * f.spacing, f.originY + (iy + 0.5) * f.spacing,
                        0.25 * (f.heights[i00] + f.heights[i00 + 1] + f.heights[i00 + nx] +
                                f.heights[i00 + nx + 1]));
      const double distance = (centre - eye).norm();
      if (distance >= style_.fogEnd) continue;  // faded into the sky, which is already there
      const size_t cell = static_cast<size_t>(iy) * cellsX + ix;
      const Projected t1[3] = {a, b, d}, t2[3] = {a, d, c};
      fillTriangle(canvas, t1, shaded(colors_[2 * cell], shadow[cell], distance));
      fillTriangle(canvas, t2, shaded(colors_[2 * cell + 1], shadow[cell], distance));
    }

  for (const Skirt& s : skirts_) {
    const Projected q[4] = {camera.project(s.top[0]), camera.project(s.top[1]),
                            camera.project(s.bottom[0]), camera.project(s.bottom[1])};
    if (std::min({q[0].depth, q[1].depth, q[2].depth, q[3].depth}) < kNearDepth) continue;
    const double distance = (0.5 * (s.top[0] + s.bottom[1]) - eye).norm();
    if (distance >= style_.fogEnd) continue;
    const Rgb color = shaded(s.color, 1, distance);
    const Projected t1[3] = {q[0], q[1], q[3]}, t2[3] = {q[0], q[3], q[2]};
    fillTriangle(canvas, t1, color);
    fillTriangle(canvas, t2, color);
  }
}

}  // namespace diffloco::viz
