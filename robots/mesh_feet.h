// Sphere feet for a URDF whose legs end in mesh collisions (Unitree Go2, Solo12 as published):
// the simulator's feet are collision spheres (sim/urdf.h), so `robot init` proposes one sphere per
// foot from its mesh and writes the vendor file with those spheres added beside the robot YAML
// (the vendor file itself is left untouched).
#pragma once

#include <string>
#include <vector>

#include "sim/spatial.h"

namespace diffloco {

struct MeshFootSphere {
  std::string link;   // the foot link
  std::string mesh;   // the STL file it was fitted to (resolved path)
  sim::Vec3 centre;   // in the link's frame [m]
  double radius = 0;  // [m]
};

// The leg ends: links no joint carries that hang from at least two movable joints and have a
// <mesh> collision and no <sphere> one. Each gets the sphere centred on its mesh's bounding box (in
// the link frame, the collision's <origin> and <mesh scale> applied) whose radius reaches the
// mesh's lowest point in the zero pose (down = world -z through the chain's joint origins): it
// touches the ground where the mesh does. Mesh paths: package://NAME/... is found in a folder
// NAME above the URDF (or on ROS_PACKAGE_PATH), file:// and relative paths from the URDF's folder.
// Empty when no link qualifies; throws std::runtime_error naming the URDF and the link for a mesh
// that cannot be found or read (STL only: io/stl.h).
std::vector<MeshFootSphere> proposeMeshFootSpheres(const std::string& urdfPath);

// The URDF text with a <collision name="foot_sphere"> (origin, sphere) added to each foot link.
std::string urdfWithFootSpheres(const std::string& urdfPath,
                                const std::vector<MeshFootSphere>& feet);

}  // namespace diffloco
