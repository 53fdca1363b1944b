// The immutable description of a floating-base robot: a tree of rigid bodies connected by revolute
// joints, hanging from a 6-DoF free base, with sphere feet and, optionally, more spheres on the
// legs (knees, shanks) that touch the ground too.
//
// State layout (frames are fixed here once for all of sim/):
//   q (nq = 7 + nj): base position in world [0:3], base orientation quaternion (w, x, y, z) [3:7]
//                    mapping base coordinates to world coordinates, joint angles [7:].
//   v (nv = 6 + nj): linear velocity of the base origin in WORLD coordinates [0:3], base angular
//                    velocity in BASE coordinates [3:6] (MuJoCo's free-joint convention), joint
//                    velocities [6:]. A world-frame linear velocity keeps translation free of the
//                    w x v term that a base-frame one picks up, which an explicit step integrates
//                    poorly when the body falls while spinning.
// Body 0 is the base; bodies are ordered so that a parent comes before its children, and body i > 0
// carries joint i - 1 whose velocity is v[5 + i].
#pragma once

#include <string>
#include <vector>

#include "sim/spatial.h"

namespace diffloco::sim {

struct Body {
  std::string name;
  int parent = -1;            // index of the parent body; -1 for the base
  Transform tree;             // parent frame -> joint frame at q = 0 (E, r)
  Vec3 axis = Vec3::UnitX();  // unit joint axis in the body frame
  Inertia inertia;            // body inertia in the body frame (fixed children merged in)
};

struct JointInfo {
  std::string name;
  double lower = -1e10, upper = 1e10;  // position limits [rad]
  double effort = 1e10;                // torque limit [N m]
  double velocity = 1e10;              // velocity limit [rad/s]
  double damping = 0;                  // passive viscous damping [N m s/rad]
  double armature = 0;                 // reflected rotor inertia added to H's diagonal [kg m^2]
};

// A collision sphere against the ground: a foot, or a sphere on a leg (Model::legSpheres).
struct Foot {
  std::string name;  // name of the URDF link carrying the sphere
  int body = 0;      // movable body the sphere is rigidly attached to
  Vec3 offset;       // sphere centre in that body's frame
  double radius = 0;
};

struct Model {
  std::string name;
  std::string source;  // file it was loaded from, for messages
  std::vector<Body> bodies;
  std::vector<JointInfo> joints;  // joints[i] belongs to bodies[i + 1]
  std::vector<Foot> feet;         // what rewards, observations and gaits call the feet
  // Spheres on the legs that are not feet (knees, shanks): they touch the ground in every contact
  // model, so that a leg cannot pass through a step edge, and nothing else reads them. The contact
  // stages see one list of spheres, the feet first: sphere(j), j < nspheres().
  std::vector<Foot> legSpheres;
  std::vector<int> dofParent;  // parent of each velocity dof in the tree (for the sparse factor)
  // Per sphere: the velocity dofs that move it, root first (base dofs, then the joints down to the
  // sphere's body); per pair of spheres the length of the common prefix of those lists.
  std::vector<std::vector<int>> footDofs;
  std::vector<std::vector<int>> footCommonDofs;
  Vec3 gravity{0, 0, -9.81};

  int nj() const { return static_cast<int>(joints.size()); }
  int nq() const { return 7 + nj(); }
  int nv() const { return 6 + nj(); }
  int nbodies() const { return static_cast<int>(bodies.size()); }
  int nfeet() const { return static_cast<int>(feet.size()); }
  int nspheres() const { return nfeet() + static_cast<int>(legSpheres.size()); }
  const Foot& sphere(int j) const { return j < nfeet() ? feet[j] : legSpheres[j - nfeet()]; }
  double totalMass() const;
  int jointIndex(const std::string& name) const;  // -1 if absent
  int footIndex(const std::string& name) const;   // -1 if absent

  // Fills dofParent from the body tree; called by the loaders after building bodies.
  void finalize();
};

// A state vector q at rest: origin, identity orientation, zero joint angles.
VecX neutralConfiguration(const Model& model);

}  // namespace diffloco::sim
