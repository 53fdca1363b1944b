#include "viz/terrain_mesh.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
  // Height range of each block of kBlock x kBlock cells (their box culls them).
  blocksX_ = (f.nx - 1 + kBlock - 1) / kBlock;
  blocksY_ = (f.ny - 1 + kBlock - 1) / kBlock;
  blockMin_.assign(static_cast<size_t>(blocksX_) * blocksY_,
                   std::numeric_limits<double>::infinity());
  blockMax_.assign(blockMin_.size(), -std::numeric_limits<double>::infinity());
  for (int iy = 0; iy < f.ny; ++iy)
    for (int ix = 0; ix < f.nx; ++ix)
      // A vertex on a block's upper edge belongs to the next block too.
      for (int by = std::max(0, (iy - 1) / kBlock); by <= std::min(blocksY_ - 1, iy / kBlock); ++by)
        for (int bx = std::max(0, (ix - 1) / kBlock); bx <= std::min(blocksX_ - 1, ix / kBlock);
             ++bx) {
          const size_t b = static_cast<size_t>(by) * blocksX_ + bx;
          blockMin_[b] = std::min(blockMin_[b], f.at(ix, iy));
          blockMax_[b] = std::max(blockMax_[b], f.at(ix, iy));
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

bool TerrainMesh::blockVisible(const Camera& camera, int bx, int by, double w, double h) const {
  const sim::HeightField& f = *field_;
  const double x0 = f.originX + bx * kBlock * f.spacing, y0 = f.originY + by * kBlock * f.spacing;
  const double x1 = std::min(x0 + kBlock * f.spacing, f.originX + f.sizeX());
  const double y1 = std::min(y0 + kBlock * f.spacing, f.originY + f.sizeY());
  const Vec3& eye = camera.eye();
  const double dx = std::max({0.0, x0 - eye.x(), eye.x() - x1});
  const double dy = std::max({0.0, y0 - eye.y(), eye.y() - y1});
  if (std::hypot(dx, dy) >= style_.fogEnd) return false;  // faded into the sky entirely
  // Off screen when the corners of its box are all on the far side of one screen edge (a corner
  // behind the camera projects nowhere: then the block is drawn, cell by cell).
  const size_t b = static_cast<size_t>(by) * blocksX_ + bx;
  int left = 0, right = 0, above = 0, below = 0;
  for (int k = 0; k < 8; ++k) {
    const Projected q =
        camera.project(Vec3(k & 1 ? x1 : x0, k & 2 ? y1 : y0, k & 4 ? blockMax_[b] : blockMin_[b]));
    if (q.depth < kNearDepth) return true;
    left += q.x<0, right += q.x> w, above += q.y<0, below += q.y> h;
  }
  return left < 8 && right < 8 && above < 8 && below < 8;
}

double TerrainMesh::shadowAt(double x, double y, const std::vector<BlobShadow>& shadows) {
  // The plane's fall-off: 0.55 at the centre to 1 at the radius.
  double shade = 1;
  for (const BlobShadow& b : shadows) {
    const double r2 =
        ((x - b.centre.x()) * (x - b.centre.x()) + (y - b.centre.y()) * (y - b.centre.y())) /
        (b.radius * b.radius);
    if (r2 < 1) shade *= 0.55 + 0.45 * r2;
  }
  return shade;
}

void TerrainMesh::drawBlock(Canvas& canvas, const Camera& camera,
                            const std::vector<BlobShadow>& shadows, int bx, int by,
                            std::vector<Projected>& p) const {
  const sim::HeightField& f = *field_;
  const int ix0 = bx * kBlock, iy0 = by * kBlock;
  const int ix1 = std::min(ix0 + kBlock, f.nx - 1), iy1 = std::min(iy0 + kBlock, f.ny - 1);
  const int n = ix1 - ix0 + 1;  // vertices per row of the block
  // Each vertex projected once, shared by the (up to) six triangles around it.
  p.resize(static_cast<size_t>(n) * (iy1 - iy0 + 1));
  for (int iy = iy0; iy <= iy1; ++iy)
    for (int ix = ix0; ix <= ix1; ++ix)
      p[static_cast<size_t>(iy - iy0) * n + (ix - ix0)] = camera.project(vertex(ix, iy));

  const Vec3& eye = camera.eye();
  const double w = canvas.color.width, h = canvas.color.height;
  for (int iy = iy0; iy < iy1; ++iy)
    for (int ix = ix0; ix < ix1; ++ix) {
      const size_t i00 = static_cast<size_t>(iy - iy0) * n + (ix - ix0);
      const Projected &a = p[i00], &b = p[i00 + 1], &c = p[i00 + n], &d = p[i00 + n + 1];
      if (std::min({a.depth, b.depth, c.depth, d.depth}) < kNearDepth) continue;
      if (std::max({a.x, b.x, c.x, d.x}) < 0 || std::min({a.x, b.x, c.x, d.x}) > w ||
          std::max({a.y, b.y, c.y, d.y}) < 0 || std::min({a.y, b.y, c.y, d.y}) > h)
        continue;
      const size_t k = static_cast<size_t>(iy) * f.nx + ix;
      const Vec3 centre(
          f.originX + (ix + 0.5) * f.spacing, f.originY + (iy + 0.5) * f.spacing,
          0.25 * (f.heights[k] + f.heights[k + 1] + f.heights[k + f.nx] + f.heights[k + f.nx + 1]));
      const double distance = (centre - eye).norm();
      if (distance >= style_.fogEnd) continue;  // faded into the sky, which is already there
      const double shadow = shadowAt(centre.x(), centre.y(), shadows);
      const size_t cell = static_cast<size_t>(iy) * (f.nx - 1) + ix;
      const Projected t1[3] = {a, b, d}, t2[3] = {a, d, c};
      fillTriangle(canvas, t1, shaded(colors_[2 * cell], shadow, distance));
      fillTriangle(canvas, t2, shaded(colors_[2 * cell + 1], shadow, distance));
    }
}

void TerrainMesh::draw(Canvas& canvas, const Camera& camera,
                       const std::vector<BlobShadow>& shadows) const {
  // Block by block, so that a frame costs what it sees: a window of several tiles (envs spread
  // over a curriculum) is mostly behind the camera, off screen or in the fog.
  std::vector<Projected> p;
  const double w = canvas.color.width, h = canvas.color.height;
  for (int by = 0; by < blocksY_; ++by)
    for (int bx = 0; bx < blocksX_; ++bx)
      if (blockVisible(camera, bx, by, w, h)) drawBlock(canvas, camera, shadows, bx, by, p);

  const Vec3& eye = camera.eye();
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
