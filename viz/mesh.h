// Triangle meshes of the robot's shapes, built once in each body's frame and moved with the body
// every frame.
#pragma once

#include <vector>

#include "viz/robot_shapes.h"

namespace diffloco::viz {

struct Triangle {
  Vec3 a, b, c;
  Rgb color;
};

// The shape's surface in its body's frame. Spheres are UV spheres, capsules a cylinder with a
// sphere at each end; coarse (tens of triangles each) because they are a few pixels wide.
std::vector<Triangle> shapeTriangles(const Shape& shape);

// Per body, the triangles of every shape attached to it.
std::vector<std::vector<Triangle>> bodyMeshes(const std::vector<Shape>& shapes, int numBodies);

}  // namespace diffloco::viz
