// What a robot looks like, from its parsed URDF: our URDFs carry inertias and foot spheres but no
// visual geometry, so the robot is drawn as its kinematic skeleton: a box for the base spanning
// the hips, a capsule from each body's joint to each of its children's joints (or to its foot),
// and the foot spheres at their collision radius. The C++ renderer and the HTML viewer draw the
// same shapes (the viewer reads them from the rollout record).
#pragma once

#include <string>
#include <vector>

#include "sim/model.h"
#include "viz/image.h"

namespace diffloco::viz {

using sim::Mat3;
using sim::Vec3;

struct Shape {
  enum class Kind { kBox, kCapsule, kSphere };
  Kind kind = Kind::kSphere;
  int body = 0;           // the body whose frame a and b are in
  Vec3 a = Vec3::Zero();  // box: centre; capsule: one end; sphere: centre
  Vec3 b = Vec3::Zero();  // box: half extents (body axes); capsule: other end
  double radius = 0;      // capsule and sphere
  Rgb color;
};

// The base's colour: the tests find the robot in a frame by it.
inline constexpr Rgb kBaseColor{235, 120, 30};

std::vector<Shape> robotShapes(const sim::Model& model);

const char* toString(Shape::Kind kind);

struct BodyPose {
  Mat3 rotation = Mat3::Identity();  // body -> world
  Vec3 position = Vec3::Zero();      // body origin, world
};

// Every body's pose at configuration q (forward kinematics).
std::vector<BodyPose> bodyPoses(const sim::Model& model, const sim::VecX& q);

}  // namespace diffloco::viz
