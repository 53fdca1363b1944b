// robots/mesh_feet.cpp: a vendor-style URDF whose feet are meshes (mini_like with each foot sphere
// replaced by an STL octahedron reached through package://) gets back the spheres it had: the
// fitted centre and radius, the YAML robot init proposes with the URDF it writes, standing as
// the sphere-footed file does. Missing and non-STL meshes are errors naming the link.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "io/read_file.h"
#include "robots/mesh_feet.h"
#include "robots/robot_tools.h"
#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using namespace diffloco;

namespace {

// A binary STL of the octahedron with vertices at +-a along each axis, centred at c.
void writeOctahedron(const fs::path& p, double a, const sim::Vec3& c) {
  std::ofstream f(p, std::ios::binary);
  const std::string header(80, ' ');
  f.write(header.data(), 80);
  const std::uint32_t n = 8;
  f.write(reinterpret_cast<const char*>(&n), 4);
  for (double sx : {-a, a})
    for (double sy : {-a, a})
      for (double sz : {-a, a}) {
        const float v[12] = {0,
                             0,
                             0,
                             float(c.x() + sx),
                             float(c.y()),
                             float(c.z()),
                             float(c.x()),
                             float(c.y() + sy),
                             float(c.z()),
                             float(c.x()),
                             float(c.y()),
                             float(c.z() + sz)};
        f.write(reinterpret_cast<const char*>(v), 48);
        const std::uint16_t attr = 0;
        f.write(reinterpret_cast<const char*>(&attr), 2);
      }
}

// mini_like.urdf with each foot's <sphere radius="0.02"/> (at z -0.195 of the lower leg) made a
// mesh: `mesh` as the filename, scaled by 0.5.
std::string meshFooted(const std::string& mesh) {
  const std::string urdf = io::readFile(std::string(DIFFLOCO_TEST_DATA) + "/mini_like.urdf");
  return std::regex_replace(urdf, std::regex("<sphere radius=\"0.02\"/>"),
                            "<mesh filename=\"" + mesh + "\" scale=\"0.5 0.5 0.5\"/>");
}

struct Fixture {
  diffloco::testing::ScratchDir scratch{"diffloco_mesh_feet"};
  fs::path dir = scratch.path();
  fs::path urdf = dir / "mini_like_description" / "urdf" / "mini.urdf";
  explicit Fixture(const std::string& mesh) {
    fs::create_directories(urdf.parent_path());
    fs::create_directories(dir / "mini_like_description" / "meshes");
    // An octahedron of half-size 0.04 around (0, 0, 0.01): scaled by 0.5 it is 0.02 around
    // (0, 0, 0.005), which the collision's origin moves to (0, 0, -0.19).
    writeOctahedron(dir / "mini_like_description" / "meshes" / "foot.stl", 0.04,
                    sim::Vec3(0, 0, 0.01));
    std::ofstream(urdf) << meshFooted(mesh);
  }
};

std::string errorOf(const std::string& urdf) {
  try {
    proposeMeshFootSpheres(urdf);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MeshFeet, SpheresFittedToTheMeshes) {
  Fixture fx("package://mini_like_description/meshes/foot.stl");
  const auto feet = proposeMeshFootSpheres(fx.urdf.string());
  ASSERT_EQ(feet.size(), 4u);
  for (const auto& f : feet) {
    EXPECT_NE(f.link.find("_lower"), std::string::npos) << f.link;
    EXPECT_NEAR(f.radius, 0.02, 1e-7);
    EXPECT_NEAR((f.centre - sim::Vec3(0, 0, -0.19)).norm(), 0, 1e-7);
  }
}

// The collision's <origin rpy> turns the mesh before the fit: pitched by +90 degrees, the
// octahedron's offset (0, 0, 0.005) becomes (0.005, 0, 0) in the link frame.
TEST(MeshFeet, CollisionOriginTurnsTheMesh) {
  Fixture fx("package://mini_like_description/meshes/foot.stl");
  const std::string urdf = io::readFile(fx.urdf.string());
  const std::string pitched =
      std::regex_replace(urdf, std::regex("rpy=\"0 0 0\" xyz=\"0 0 -0.195\""),
                         "rpy=\"0 1.5707963267948966 0\" xyz=\"0 0 -0.195\"");
  ASSERT_NE(pitched, urdf);
  std::ofstream(fx.urdf) << pitched;
  const auto feet = proposeMeshFootSpheres(fx.urdf.string());
  ASSERT_EQ(feet.size(), 4u);
  for (const auto& f : feet) {
    EXPECT_NEAR(f.radius, 0.02, 1e-7);
    EXPECT_NEAR((f.centre - sim::Vec3(0.005, 0, -0.195)).norm(), 0, 1e-7) << f.centre.transpose();
  }
}

// "Down" is world -z carried through the joints' origins: with every knee's origin pitched by 45
// degrees the octahedron (0.02 along each of its own axes) reaches 0.02 cos 45 down, not 0.02;
// its centre in the link frame stays where it was.
TEST(MeshFeet, JointOriginsTurnDown) {
  Fixture fx("package://mini_like_description/meshes/foot.stl");
  const std::string urdf = io::readFile(fx.urdf.string());
  const std::string pitched = std::regex_replace(
      urdf, std::regex("(<joint name=\"\\w+_knee\" type=\"revolute\">\\s*<origin) rpy=\"0 0 0\""),
      "$1 rpy=\"0 0.7853981633974483 0\"");
  ASSERT_EQ(pitched.size(), urdf.size() + 4 * std::string("0.7853981633974483").size() - 4);
  std::ofstream(fx.urdf) << pitched;
  const auto feet = proposeMeshFootSpheres(fx.urdf.string());
  ASSERT_EQ(feet.size(), 4u);
  for (const auto& f : feet) {
    EXPECT_NEAR(f.radius, 0.02 * std::sqrt(0.5), 1e-7) << f.link;
    EXPECT_NEAR((f.centre - sim::Vec3(0, 0, -0.19)).norm(), 0, 1e-7) << f.centre.transpose();
  }
}

TEST(MeshFeet, ProposedYamlStandsAsTheSphereFootedOne) {
  Fixture fx("package://mini_like_description/meshes/foot.stl");
  const std::string yaml = (fx.dir / "mini.yaml").string();
  std::string sphereFeet;
  std::vector<std::string> log;
  const std::string proposed = proposeRobotYaml(fx.urdf.string(), yaml, &log, {}, &sphereFeet);
  ASSERT_FALSE(sphereFeet.empty());
  EXPECT_NE(proposed.find("urdf: mini_sphere_feet.urdf\n"), std::string::npos) << proposed;
  std::ofstream(sphereFeetUrdfPath(yaml)) << sphereFeet;
  std::ofstream(yaml) << proposed;
  const Robot r = loadRobot(yaml);
  ASSERT_EQ(r.model.nfeet(), 4);
  for (const auto& f : r.model.feet) EXPECT_NEAR(f.radius, 0.02, 1e-7);
  EXPECT_TRUE(standingTest(r).stood);
  // The fitted spheres sit 5 mm above mini_like's own (centred at -0.19 against -0.195 on the
  // lower leg, the same radius), in the same stance.
  const std::string ref = (fx.dir / "ref.yaml").string();
  std::ofstream(ref) << proposeRobotYaml(std::string(DIFFLOCO_TEST_DATA) + "/mini_like.urdf", ref);
  const Robot spheres = loadRobot(ref);
  EXPECT_EQ(r.defaultJointPos, spheres.defaultJointPos);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(r.model.feet[f].name, spheres.model.feet[f].name);
    EXPECT_NEAR(
        (r.model.feet[f].offset - spheres.model.feet[f].offset - sim::Vec3(0, 0, 0.005)).norm(), 0,
        1e-7);
  }
  // Without somewhere to put the URDF with the spheres, mesh feet are an error.
  EXPECT_THROW(proposeRobotYaml(fx.urdf.string(), yaml), std::runtime_error);
}

TEST(MeshFeet, MissingOrNonStlMeshesNameTheLink) {
  {
    Fixture fx("package://elsewhere/foot.stl");
    const std::string e = errorOf(fx.urdf.string());
    EXPECT_NE(e.find("link 'front_left_lower': mesh 'package://elsewhere/foot.stl' not found"),
              std::string::npos)
        << e;
  }
  {
    Fixture fx("../meshes/foot.dae");
    std::ofstream(fx.dir / "mini_like_description" / "meshes" / "foot.dae") << "<COLLADA/>";
    const std::string e = errorOf(fx.urdf.string());
    EXPECT_NE(e.find("link 'front_left_lower': its foot mesh"), std::string::npos) << e;
    EXPECT_NE(e.find("is not STL"), std::string::npos) << e;
  }
  {
    Fixture fx("../meshes/foot.stl");  // relative to the URDF's folder
    EXPECT_EQ(proposeMeshFootSpheres(fx.urdf.string()).size(), 4u);
  }
}
