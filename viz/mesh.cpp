#include "viz/mesh.h"

#include <cmath>

namespace diffloco::viz {

namespace {

constexpr int kSegments = 12;  // around a sphere or cylinder
constexpr int kRings = 6;      // pole to pole

void addQuad(std::vector<Triangle>& out, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d,
             Rgb color) {
  out.push_back({a, b, c, color});
  out.push_back({a, c, d, color});
}

void addSphere(std::vector<Triangle>& out, const Vec3& centre, double r, Rgb color) {
  auto point = [&](int ring, int seg) {
    const double theta = M_PI * ring / kRings, phi = 2 * M_PI * seg / kSegments;
    return Vec3(centre + r * Vec3(std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi),
                                  std::cos(theta)));
  };
  for (int i = 0; i < kRings; ++i)
    for (int j = 0; j < kSegments; ++j)
      addQuad(out, point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1), color);
}

void addCylinder(std::vector<Triangle>& out, const Vec3& from, const Vec3& to, double r,
                 Rgb color) {
  const Vec3 axis = to - from;
  if (axis.norm() < 1e-9) return;
  const Vec3 u = axis.unitOrthogonal(), v = axis.normalized().cross(u);
  auto rim = [&](int seg) {
    const double phi = 2 * M_PI * seg / kSegments;
    return Vec3(r * (std::cos(phi) * u + std::sin(phi) * v));
  };
  for (int j = 0; j < kSegments; ++j)
    addQuad(out, from + rim(j), to + rim(j), to + rim(j + 1), from + rim(j + 1), color);
}

void addBox(std::vector<Triangle>& out, const Vec3& c, const Vec3& h, Rgb color) {
  auto corner = [&](int sx, int sy, int sz) {
    return Vec3(c + Vec3(sx * h.x(), sy * h.y(), sz * h.z()));
  };
  for (int s : {-1, 1}) {
    addQuad(out, corner(s, -1, -1), corner(s, 1, -1), corner(s, 1, 1), corner(s, -1, 1), color);
    addQuad(out, corner(-1, s, -1), corner(1, s, -1), corner(1, s, 1), corner(-1, s, 1), color);
    addQuad(out, corner(-1, -1, s), corner(1, -1, s), corner(1, 1, s), corner(-1, 1, s), color);
  }
}

}  // namespace

std::vector<Triangle> shapeTriangles(const Shape& s) {
  std::vector<Triangle> out;
  switch (s.kind) {
    case Shape::Kind::kBox:
      addBox(out, s.a, s.b, s.color);
      break;
    case Shape::Kind::kCapsule:
      addCylinder(out, s.a, s.b, s.radius, s.color);
      addSphere(out, s.a, s.radius, s.color);
      addSphere(out, s.b, s.radius, s.color);
      break;
    case Shape::Kind::kSphere:
      addSphere(out, s.a, s.radius, s.color);
      break;
  }
  return out;
}

std::vector<std::vector<Triangle>> bodyMeshes(const std::vector<Shape>& shapes, int numBodies) {
  std::vector<std::vector<Triangle>> meshes(numBodies);
  for (const Shape& s : shapes) {
    const std::vector<Triangle> t = shapeTriangles(s);
    meshes.at(s.body).insert(meshes.at(s.body).end(), t.begin(), t.end());
  }
  return meshes;
}

}  // namespace diffloco::viz
