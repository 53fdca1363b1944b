#include "viz/robot_shapes.h"

#include <algorithm>
#include <cmath>

#include "sim/data.h"
#include "sim/kinematics.h"

namespace diffloco::viz {

namespace {
// Thick enough to read at a few metres in a 640-pixel frame; thinner below the knee so the legs
// taper the way real ones do.
constexpr double kUpperLinkRadius = 0.04;
constexpr double kLowerLinkRadius = 0.028;
constexpr Rgb kLinkColor{70, 72, 82};
constexpr Rgb kFootColor{30, 30, 34};
}  // namespace

std::vector<Shape> robotShapes(const sim::Model& model) {
  std::vector<Shape> shapes;
  // Base: a box around the hip joints (the base's children), at least 10 cm in each direction.
  Vec3 lo = Vec3::Constant(-0.05), hi = Vec3::Constant(0.05);
  for (int i = 1; i < model.nbodies(); ++i)
    if (model.bodies[i].parent == 0) {
      lo = lo.cwiseMin(model.bodies[i].tree.r);
      hi = hi.cwiseMax(model.bodies[i].tree.r);
    }
  Shape base;
  base.kind = Shape::Kind::kBox;
  base.a = 0.5 * (lo + hi);
  base.b = 0.5 * (hi - lo) + Vec3(0.08, 0.02, 0.03);
  base.color = kBaseColor;
  shapes.push_back(base);

  // A body's children and feet, to know where its capsules end and how deep in the leg it is.
  std::vector<int> depth(model.nbodies(), 0);
  for (int i = 1; i < model.nbodies(); ++i) depth[i] = depth[model.bodies[i].parent] + 1;
  for (int i = 1; i < model.nbodies(); ++i) {
    const int parent = model.bodies[i].parent;
    if (parent == 0) continue;  // hips sit on the base box
    Shape link;
    link.kind = Shape::Kind::kCapsule;
    link.body = parent;
    link.b = model.bodies[i].tree.r;  // child's joint origin, parent frame
    link.radius = depth[parent] <= 2 ? kUpperLinkRadius : kLowerLinkRadius;
    link.color = kLinkColor;
    shapes.push_back(link);
  }
  for (const sim::Foot& f : model.feet) {
    Shape leg;
    leg.kind = Shape::Kind::kCapsule;
    leg.body = f.body;
    leg.b = f.offset;
    leg.radius = depth[f.body] <= 2 ? kUpperLinkRadius : kLowerLinkRadius;
    leg.color = kLinkColor;
    shapes.push_back(leg);
    Shape foot;
    foot.kind = Shape::Kind::kSphere;
    foot.body = f.body;
    foot.a = f.offset;
    foot.radius = std::max(f.radius, leg.radius);
    foot.color = kFootColor;
    shapes.push_back(foot);
  }
  return shapes;
}

const char* toString(Shape::Kind kind) {
  switch (kind) {
    case Shape::Kind::kBox:
      return "box";
    case Shape::Kind::kCapsule:
      return "capsule";
    default:
      return "sphere";
  }
}

std::vector<BodyPose> bodyPoses(const sim::Model& model, const sim::VecX& q) {
  sim::Data data(model);
  sim::forwardKinematics(model, data, q);
  std::vector<BodyPose> poses(model.nbodies());
  for (int i = 0; i < model.nbodies(); ++i) poses[i] = {data.R[i], data.p[i]};
  return poses;
}

}  // namespace diffloco::viz
