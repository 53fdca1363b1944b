// sim/urdf.cpp: every rejected input is a ModelError naming the file, the line, the element and
// what was expected; fixed joints merge inertia and re-attach sphere feet by hand-computed poses.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/urdf.h"

using namespace diffloco::sim;

namespace {

// The message of the ModelError that parsing `xml` (as "bad.urdf") throws; "" (and a test failure)
// when it throws nothing or something else.
std::string errorOf(const std::string& xml) {
  try {
    parseUrdf(xml, "bad.urdf");
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ModelError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a ModelError, parsing succeeded";
  return "";
}

// Every check of an error message: `where` is "bad.urdf:<line>: <element>", `what` the explanation.
#define EXPECT_ERROR(xml, where, what)                      \
  do {                                                      \
    const std::string msg_ = errorOf(xml);                  \
    EXPECT_NE(msg_.find(where), std::string::npos) << msg_; \
    EXPECT_NE(msg_.find(what), std::string::npos) << msg_;  \
  } while (0)

// Builders of small URDFs, one element per line: robot() puts <robot> on line 1, so the k-th
// element given to it is on line k + 1.
const char* kLink =
    R"(<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>)";

std::string robot(const std::string& body) {
  return "<robot name=\"r\">\n" + body + "</robot>\n";
}

std::string link(const std::string& name) {
  return "<link name=\"" + name + "\">" + kLink + "</link>\n";
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child) {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent +
         "\"/><child link=\"" + child + "\"/><axis xyz=\"0 1 0\"/></joint>\n";
}

}  // namespace

TEST(UrdfErrors, MissingFileNamesThePath) {
  const std::string path = "/nonexistent-diffloco-dir/robot.urdf";
  try {
    loadUrdf(path);
    FAIL() << "loading a missing file succeeded";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  }
  // A folder opens as a stream on Linux; it must give the same error, not an empty document.
  EXPECT_THROW(loadUrdf("/tmp"), ModelError);
}

TEST(UrdfErrors, MalformedXmlNamesTheLine) {
  // <link> opened on line 2 is never closed: tinyxml2 names the element and its line.
  EXPECT_ERROR("<robot name=\"r\">\n<link name=\"base\">\n\n</robot>\n",
               "bad.urdf:2:", "malformed XML");
  EXPECT_ERROR("<robot name=\"r\">\n<link name=\"base\">\n\n</robot>\n",
               "bad.urdf:2:", "name=link");
  EXPECT_ERROR("<robot name=\"r\">\n<link name=\"base\" mass=>\n</robot>\n",
               "bad.urdf:2:", "malformed XML");
  EXPECT_ERROR("", "bad.urdf: malformed XML", "EMPTY_DOCUMENT");
  EXPECT_ERROR("<?xml version=\"1.0\"?>\n<sdf/>\n", "bad.urdf", "expected a <robot> root element");
}

TEST(UrdfErrors, UnsupportedJointTypes) {
  for (const std::string type : {"prismatic", "planar"})
    EXPECT_ERROR(robot(link("base") + link("a") + joint("slide", type, "base", "a")),
                 "bad.urdf:4: <joint>",
                 "joint 'slide' has unsupported type '" + type +
                     "' (expected revolute, continuous, fixed, or floating from a dummy root)");
  // A floating joint is only the link from a massless dummy root to the base.
  EXPECT_ERROR(robot(link("base") + link("a") + joint("slide", "floating", "base", "a")),
               "bad.urdf:4: <joint>",
               "joint 'slide': a floating joint must be the only joint of a massless root link");
}

TEST(UrdfErrors, MovableLinkWithoutInertial) {
  EXPECT_ERROR(robot(link("base") + "<link name=\"a\"/>\n" + joint("j", "revolute", "base", "a")),
               "bad.urdf:3: <link>", "link 'a' is moved by joint 'j' and needs an <inertial>");
  // A massless root has nothing to move.
  EXPECT_ERROR(robot("<link name=\"base\"/>\n" + link("a") + joint("j", "revolute", "base", "a")),
               "bad.urdf:2: <link>", "root link 'base' needs an <inertial> with mass > 0");
}

// The common layout of a massless root link with its mass on a link fixed to it loads.
TEST(Urdf, MassMayComeFromAFixedChild) {
  const Model m =
      parseUrdf(robot("<link name=\"base\"/>\n" + link("base_inertia") +
                      joint("fix", "fixed", "base", "base_inertia") + "<link name=\"a\"/>\n" +
                      link("a_mass") + joint("j", "revolute", "base", "a") +
                      joint("fix2", "fixed", "a", "a_mass")),
                "ok.urdf");
  EXPECT_EQ(m.nbodies(), 2);
  EXPECT_GT(m.bodies[0].inertia.m, 0);
  EXPECT_GT(m.bodies[1].inertia.m, 0);
  // An <inertial> without <mass>.
  EXPECT_ERROR(robot("<link name=\"base\">\n<inertial>\n<inertia ixx=\"1\" iyy=\"1\" "
                     "izz=\"1\"/></inertial></link>\n"),
               "bad.urdf:3: <inertial>", "link 'base': <inertial> needs a <mass");
}

TEST(UrdfErrors, NegativeMass) {
  EXPECT_ERROR(robot("<link name=\"base\"><inertial>\n<mass value=\"-1.5\"/>\n<inertia ixx=\"1\" "
                     "iyy=\"1\" izz=\"1\"/></inertial></link>\n"),
               "bad.urdf:3: <mass>", "link 'base': mass must be >= 0, got -1.5");
}

std::string strictErrorOf(const std::string& xml) {
  UrdfOptions strict;
  strict.strict = true;
  try {
    parseUrdf(xml, "bad.urdf", strict);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(UrdfErrors, InertiaNotPhysical) {
  auto withInertia = [](const std::string& attrs) {
    return robot("<link name=\"base\"><inertial><mass value=\"1\"/>\n\n<inertia " + attrs +
                 "/></inertial></link>\n");
  };
  const std::string what = "link 'base': rotational inertia must be positive semi-definite";
  // With strict: true, a negative moment, an indefinite matrix (eigenvalues -1, 1, 3) and a
  // triangle violation are errors naming the link.
  for (const char* attrs :
       {"ixx=\"1\" iyy=\"1\" izz=\"-1\"", "ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"2\"",
        "ixx=\"1\" iyy=\"1\" izz=\"3\""}) {
    const std::string e = strictErrorOf(withInertia(attrs));
    EXPECT_NE(e.find("bad.urdf:4: <inertia>"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
    EXPECT_NE(e.find("the robot file says strict: true"), std::string::npos) << e;
  }
  EXPECT_NE(
      strictErrorOf(withInertia("ixx=\"1\" iyy=\"1\" izz=\"3\"")).find("principal moments 1, 1, 3"),
      std::string::npos);
  // Without strict, only an inertia whose moments do not have a positive mean is an error.
  EXPECT_ERROR(withInertia("ixx=\"-1\" iyy=\"-1\" izz=\"1\""), "bad.urdf:4: <inertia>",
               "cannot be repaired: their mean is not positive");
  // The boundary of the triangle inequality (a thin rod / flat plate) is physical, even strict.
  EXPECT_EQ(strictErrorOf(withInertia("ixx=\"1\" iyy=\"1\" izz=\"2\"")), "");
  EXPECT_EQ(strictErrorOf(withInertia("ixx=\"0\" iyy=\"1\" izz=\"1\"")), "");
}

// A camera link as CAD exports it: principal moments (1e-5, 1e-5, 2.1e-5) miss the triangle
// inequality by 5 %, and the inertial frame is rotated. MuJoCo's balanceinertia sets every
// principal moment to their mean: the inertia about the COM becomes (4.1e-5 / 3) * identity,
// whatever the rotation; mass and COM stay. The warning names file, line, element and link.
TEST(Urdf, NonPhysicalInertiaIsRepairedWithAWarning) {
  const std::string xml = robot(
      "<link name=\"base\"><inertial><mass value=\"0.2\"/>\n"
      "<origin xyz=\"0.01 0.02 0.03\" rpy=\"0.3 -0.2 0.1\"/>\n"
      "<inertia ixx=\"1e-5\" iyy=\"1e-5\" izz=\"2.1e-5\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
      "</inertial></link>\n");
  UrdfReport report;
  const Model m = parseUrdf(xml, "cam.urdf", {}, &report);
  ASSERT_EQ(report.warnings.size(), 1u);
  const std::string& w = report.warnings[0];
  EXPECT_NE(w.find("cam.urdf:4: <inertia>: link 'base': rotational inertia is not physical"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("balanceinertia"), std::string::npos) << w;
  const Inertia& I = m.bodies[0].inertia;
  EXPECT_DOUBLE_EQ(I.m, 0.2);
  EXPECT_LT((I.com() - Vec3(0.01, 0.02, 0.03)).norm(), 1e-15);
  const Vec3 c = I.com();
  const Mat3 Icom = I.Io - 0.2 * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  EXPECT_LT((Icom - (4.1e-5 / 3) * Mat3::Identity()).norm(), 1e-18) << Icom;
  // strict: the same file is refused.
  EXPECT_NE(strictErrorOf(xml).find("link 'base'"), std::string::npos);
}

// What vendor files carry besides dynamics: visual meshes on package:// paths (never opened),
// transmissions (with a nested <joint>), gazebo and sensor blocks, materials, a dummy root link
// without inertia, effort="0" on a fixed joint, a mesh and a box collision on the body: all load,
// one note sums up the ignored collision geometry, no warning.
TEST(Urdf, VendorElementsAreIgnored) {
  const std::string xml = R"(<?xml version="1.0"?>
<robot name="vendor" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="base"/>
  <joint name="base_to_trunk" type="fixed"><parent link="base"/><child link="trunk"/>
    <limit effort="0" velocity="0" lower="0" upper="0"/></joint>
  <link name="trunk">
    <visual><geometry><mesh filename="package://vendor_description/meshes/trunk.dae" scale="1 1 1"/></geometry><material name="grey"/></visual>
    <collision><geometry><mesh filename="package://vendor_description/meshes/trunk.stl"/></geometry></collision>
    <collision><geometry><box size="0.3 0.2 0.1"/></geometry></collision>
    <inertial><mass value="5"/><inertia ixx="0.02" iyy="0.05" izz="0.06"/></inertial>
    <sensor name="imu" type="imu"><always_on>1</always_on></sensor>
  </link>
  <joint name="hip" type="revolute"><parent link="trunk"/><child link="thigh"/><axis xyz="0 1 0"/>
    <limit effort="33.5" velocity="21" lower="-1.5" upper="3.4"/><dynamics damping="0.01" friction="0.2"/>
    <safety_controller k_velocity="10"/><calibration rising="0"/></joint>
  <link name="thigh">
    <visual><geometry><mesh filename="package://vendor_description/meshes/thigh.dae"/></geometry></visual>
    <collision><geometry><cylinder length="0.2" radius="0.02"/></geometry></collision>
    <collision><origin xyz="0 0 -0.2"/><geometry><sphere radius="0.02"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.001" iyy="0.001" izz="0.0005"/></inertial>
  </link>
  <transmission name="hip_tran"><type>transmission_interface/SimpleTransmission</type>
    <joint name="hip"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
    <actuator name="hip_motor"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
  <gazebo reference="trunk"><material>Gazebo/Grey</material></gazebo>
  <gazebo><plugin name="gazebo_ros_control" filename="libgazebo_ros_control.so"/></gazebo>
</robot>)";
  UrdfReport report;
  const Model m = parseUrdf(xml, "vendor.urdf", {}, &report);
  EXPECT_TRUE(report.warnings.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(
      report.notes[0].find("ignored 3 non-sphere collision geometries (1 box, 1 cylinder, 1 mesh) "
                           "on links trunk, thigh"),
      std::string::npos)
      << report.notes[0];
  EXPECT_EQ(m.bodies[0].name, "base");  // the dummy root is the base; the trunk's mass is on it
  EXPECT_DOUBLE_EQ(m.totalMass(), 6.0);
  ASSERT_EQ(m.nj(), 1);
  EXPECT_EQ(m.joints[0].effort, 33.5);
  EXPECT_EQ(m.joints[0].velocity, 21);
  EXPECT_EQ(m.joints[0].lower, -1.5);
  EXPECT_EQ(m.joints[0].upper, 3.4);
  EXPECT_EQ(m.joints[0].damping, 0.01);
  ASSERT_EQ(m.nfeet(), 1);
  EXPECT_EQ(m.feet[0].name, "thigh");
}

// A corpus of vendor-style quirks, each in a small robot (lines: <robot> 1, base 2, a 3, the joint
// 4). What the URDF spec allows, or what only concerns elements the simulator does not use, loads
// as MuJoCo and Pinocchio load it: the axis of a fixed or floating joint (ignored, even "0 0 0"),
// missing optional elements (<limit> on a continuous joint, <dynamics>, <origin> meaning identity,
// <axis> meaning x), empty names, a <collision> without geometry, children the simulator ignores.
// What is physically impossible is refused naming the file and line.
TEST(Urdf, VendorQuirkCorpus) {
  struct Loads {
    std::string name, xml;
    int joints;  // movable joints of the model
  };
  struct Refused {
    std::string name, xml, where, what;
  };
  const std::string base = link("base"), a = link("a");
  auto j = [](const std::string& type, const std::string& inner) {
    return "<joint name=\"j\" type=\"" + type + "\"><parent link=\"base\"/><child link=\"a\"/>" +
           inner + "</joint>\n";
  };
  const std::string axis = "<axis xyz=\"0 1 0\"/>";
  const std::string floating =
      "<link name=\"world\"/>\n<joint name=\"free\" type=\"floating\">"
      "<parent link=\"world\"/><child link=\"base\"/>"
      "<axis xyz=\"0 0 0\"/></joint>\n";
  const std::vector<Loads> loads = {
      {"fixed joint with a zero axis", robot(base + a + j("fixed", "<axis xyz=\"0 0 0\"/>")), 0},
      {"fixed joint with an unreadable axis", robot(base + a + j("fixed", "<axis xyz=\"\"/>")), 0},
      {"floating joint with a zero axis", robot(floating + base + a + j("revolute", axis)), 1},
      {"continuous joint without <limit>", robot(base + a + j("continuous", axis)), 1},
      {"continuous joint with lower = upper = 0 (ignored)",
       robot(
           base + a +
           j("continuous", axis + "<limit effort=\"5\" velocity=\"9\" lower=\"0\" upper=\"0\"/>")),
       1},
      {"revolute joint without <axis>, <origin>, <limit> or <dynamics>",
       robot(base + a + j("revolute", "")), 1},
      {"revolute joint locked by lower = upper",
       robot(base + a +
             j("revolute",
               axis + "<limit effort=\"5\" velocity=\"9\" lower=\"0.5\" upper=\"0.5\"/>")),
       1},
      {"<dynamics> with friction only",
       robot(base + a + j("revolute", axis + "<dynamics friction=\"0.2\"/>")), 1},
      {"empty <origin/>", robot(base + a + j("revolute", "<origin/>" + axis)), 1},
      {"<origin> with rpy only",
       robot(base + a + j("revolute", "<origin rpy=\"0 0 1.5708\"/>" + axis)), 1},
      {"<mimic>, <calibration>, <safety_controller>",
       robot(base + a +
             j("revolute",
               axis + "<mimic joint=\"other\" multiplier=\"1\"/><calibration rising=\"0\"/>"
                      "<safety_controller k_velocity=\"10\"/>")),
       1},
      {"empty collision and visual names, a <collision> without <geometry>",
       robot(base + "<link name=\"a\"><collision name=\"\"/><visual name=\"\">" +
             "<geometry><box size=\"1 1 1\"/></geometry></visual><collision name=\"\">" +
             "<geometry><sphere radius=\"0.02\"/></geometry></collision>" + kLink + "</link>\n" +
             j("revolute", axis)),
       1},
      {"diagonal inertia only, no inertial <origin>",
       robot(base +
             "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1e-2\" iyy=\"+1E-2\" "
             "izz=\"0.01\"/></inertial></link>\n" +
             j("revolute", axis)),
       1},
      {"spaces, tabs and newlines in numbers; an axis that is not unit length",
       robot(base + a + j("revolute", "<origin xyz=\" 0\t0  0.1 \"/><axis xyz=\"0\n0 2\"/>")), 1},
      {"joints before links", robot(j("revolute", axis) + base + a), 1},
      {"BOM, XML declaration, DOCTYPE and comments",
       "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE robot>\n" +
           std::string("<!-- exported -->\n") +
           robot(base + "<!-- a link -->\n" + a + j("revolute", axis)),
       1},
  };
  // Refused: physically impossible.
  const std::vector<Refused> refused = {
      {"revolute joint with a zero axis", robot(base + a + j("revolute", "<axis xyz=\"0 0 0\"/>")),
       "bad.urdf:4: <axis>", "joint 'j': axis must be non-zero"},
      {"continuous joint with a zero axis",
       robot(base + a + j("continuous", "<axis xyz=\"0 0 0\"/>")), "bad.urdf:4: <axis>",
       "joint 'j': axis must be non-zero"},
      {"negative damping", robot(base + a + j("revolute", axis + "<dynamics damping=\"-0.1\"/>")),
       "bad.urdf:4: <dynamics>", "joint 'j': damping must be >= 0, got -0.1"},
      // 1e308 parses as a number; before this bound the first step became non-finite.
      {"an absurd damping", robot(base + a + j("revolute", axis + "<dynamics damping=\"1e308\"/>")),
       "bad.urdf:4: <dynamics>", "attribute 'damping' must be within +-1e+06, got \"1e308\""},
      {"an absurd origin", robot(base + a + j("revolute", axis + "<origin xyz=\"0 1e308 0\"/>")),
       "bad.urdf:4: <origin>", "attribute 'xyz' must be within +-1000, got \"0 1e308 0\""},
      {"lower limit above the upper",
       robot(base + a +
             j("revolute", axis + "<limit effort=\"5\" velocity=\"9\" lower=\"1\" upper=\"-1\"/>")),
       "bad.urdf:4: <limit>", "joint 'j': lower limit 1 is above the upper limit -1"},
      {"non-positive effort limit",
       robot(base + a + j("revolute", axis + "<limit effort=\"-5\" velocity=\"9\"/>")),
       "bad.urdf:4: <limit>", "joint 'j': effort limit must be > 0"},
      {"two joints of one name",
       robot(base + a + link("b") + j("revolute", axis) + joint("j", "revolute", "a", "b")),
       "bad.urdf:6: <joint>", "duplicate joint name 'j' (first on line 5)"},
      {"negative mass",
       robot(base +
             "<link name=\"a\"><inertial><mass value=\"-1\"/><inertia ixx=\"1\" iyy=\"1\" "
             "izz=\"1\"/></inertial></link>\n" +
             j("revolute", axis)),
       "bad.urdf:3: <mass>", "link 'a': mass must be >= 0, got -1"},
      {"a moving link without mass", robot(base + "<link name=\"a\"/>\n" + j("revolute", axis)),
       "bad.urdf:3: <link>", "link 'a' is moved by joint 'j' and needs an <inertial>"},
      {"a zero sphere radius",
       robot(base +
             "<link name=\"a\"><collision><geometry><sphere radius=\"0\"/></geometry>"
             "</collision>" +
             kLink + "</link>\n" + j("revolute", axis)),
       "bad.urdf:3: <sphere>", "link 'a': sphere radius must be > 0"},
      {"a cycle of joints",
       robot(base + a + link("b") + joint("j1", "revolute", "a", "b") +
             joint("j2", "revolute", "b", "a")),
       "bad.urdf:3: <link>", "link 'a' is not connected to the root link 'base'"},
  };
  for (const Loads& q : loads) {
    SCOPED_TRACE(q.name);
    try {
      UrdfReport report;
      EXPECT_EQ(parseUrdf(q.xml, "quirk.urdf", {}, &report).nj(), q.joints);
      EXPECT_TRUE(report.warnings.empty());
    } catch (const ModelError& e) {
      ADD_FAILURE() << "refused: " << e.what();
    }
  }
  for (const Refused& q : refused) {
    SCOPED_TRACE(q.name);
    EXPECT_ERROR(q.xml, q.where, q.what);
  }
}

// What the quirks above give the model: an ignored fixed axis, the defaults of missing elements.
TEST(Urdf, QuirksGiveTheDocumentedDefaults) {
  const Model m = parseUrdf(
      robot(
          link("base") + link("a") + link("b") + link("c") +
          "<joint name=\"fix\" type=\"fixed\"><parent link=\"base\"/><child link=\"a\"/>"
          "<origin xyz=\"0 0 1\"/><axis xyz=\"0 0 0\"/></joint>\n"
          "<joint name=\"bare\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
          "<joint name=\"wheel\" type=\"continuous\"><parent link=\"b\"/><child link=\"c\"/>"
          "<axis xyz=\"0 0 3\"/></joint>\n"),
      "defaults.urdf");
  ASSERT_EQ(m.nj(), 2);
  EXPECT_DOUBLE_EQ(m.bodies[0].inertia.m, 2.0);                   // base and the link fixed to it
  EXPECT_LT((m.bodies[1].axis - Vec3::UnitX()).norm(), 1e-15);    // no <axis>: x
  EXPECT_LT((m.bodies[1].tree.r - Vec3(0, 0, 1)).norm(), 1e-15);  // through the fixed joint
  EXPECT_LT((m.bodies[2].axis - Vec3::UnitZ()).norm(), 1e-15);
  for (const JointInfo& jt : m.joints) {
    EXPECT_EQ(jt.lower, -1e10);
    EXPECT_EQ(jt.upper, 1e10);
    EXPECT_EQ(jt.effort, 1e10);
    EXPECT_EQ(jt.damping, 0);
  }
}

// A bad value is quoted by its first 80 characters: a line of 100 000 brackets gives a message of
// one short line.
TEST(UrdfErrors, LongValuesAreQuotedShort) {
  const std::string brackets(100000, '[');
  const std::string msg =
      errorOf(robot(link("base") + link("a") +
                    "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/>"
                    "<child link=\"a\"/>\n<origin xyz=\"" +
                    brackets + "\"/></joint>\n"));
  EXPECT_NE(msg.find("bad.urdf:5: <origin>: attribute 'xyz' must be 3 space-separated numbers, "
                     "got \"" +
                     brackets.substr(0, 80) + "...\""),
            std::string::npos)
      << msg.substr(0, 300);
  EXPECT_LT(msg.size(), 300u);
  const std::string type =
      errorOf(robot(link("base") + link("a") + joint("j", brackets, "base", "a")));
  EXPECT_NE(type.find("unsupported type '" + brackets.substr(0, 80) + "...'"), std::string::npos);
  EXPECT_LT(type.size(), 300u);
}

// A "world" link joined to the base by a floating joint (some exporters write the free base so):
// the dummy root and the joint go, the child is the base.
TEST(Urdf, FloatingJointFromADummyRoot) {
  UrdfReport report;
  const Model m =
      parseUrdf(robot("<link name=\"world\"/>\n" + joint("free", "floating", "world", "base") +
                      link("base") + link("a") + joint("j", "revolute", "base", "a")),
                "float.urdf", {}, &report);
  EXPECT_EQ(m.bodies[0].name, "base");
  EXPECT_EQ(m.nj(), 1);
  EXPECT_DOUBLE_EQ(m.totalMass(), 2.0);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("float.urdf:3: <joint>: floating joint 'free'"), std::string::npos)
      << report.notes[0];
  // The dummy root must be massless.
  EXPECT_ERROR(robot(link("world") + joint("free", "floating", "world", "base") + link("base")),
               "bad.urdf:3: <joint>", "a floating joint must be the only joint of a massless root");
}

TEST(UrdfErrors, JointNamingUnknownLink) {
  EXPECT_ERROR(robot(link("base") + link("a") +
                     "<joint name=\"j\" type=\"revolute\">\n<parent link=\"base\"/>\n"
                     "<child link=\"nosuch\"/></joint>\n"),
               "bad.urdf:6: <child>", "joint 'j': unknown link 'nosuch'");
  EXPECT_ERROR(robot(link("base") + link("a") +
                     "<joint name=\"j\" type=\"revolute\">\n<parent link=\"nosuch\"/>\n"
                     "<child link=\"a\"/></joint>\n"),
               "bad.urdf:5: <parent>", "joint 'j': unknown link 'nosuch'");
}

TEST(UrdfErrors, TwoRootLinks) {
  EXPECT_ERROR(
      robot(link("base") + link("a") + link("other") + joint("j", "revolute", "base", "a")),
      "bad.urdf:4: <link>", "two root links ('base' and 'other')");
}

TEST(UrdfErrors, LinkChildOfTwoJoints) {
  EXPECT_ERROR(robot(link("base") + link("a") + link("b") + joint("j1", "revolute", "base", "a") +
                     joint("j2", "revolute", "b", "a") + joint("j3", "revolute", "base", "b")),
               "bad.urdf:6: <joint>", "link 'a' is the child of two joints ('j1' and 'j2')");
}

TEST(UrdfErrors, JointCycleAwayFromTheRoot) {
  // 'a' and 'b' each have one parent joint, so the root is unique, but they hang from each other.
  EXPECT_ERROR(robot(link("base") + link("a") + link("b") + joint("j1", "revolute", "a", "b") +
                     joint("j2", "revolute", "b", "a")),
               "bad.urdf:3: <link>", "link 'a' is not connected to the root link 'base'");
  EXPECT_ERROR(robot(link("base") + link("a") + joint("self", "revolute", "a", "a")),
               "bad.urdf:3: <link>", "link 'a' is not connected to the root link 'base'");
}

TEST(UrdfErrors, BadNumberAttributes) {
  auto withOrigin = [](const std::string& xyz) {
    return robot(link("base") + link("a") +
                 "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"a\"/>\n"
                 "<origin xyz=\"" +
                 xyz + "\"/></joint>\n");
  };
  EXPECT_ERROR(withOrigin("1 2"), "bad.urdf:5: <origin>",
               "attribute 'xyz' must be 3 space-separated numbers, got \"1 2\"");
  EXPECT_ERROR(withOrigin("1 2 3 4"), "bad.urdf:5: <origin>", "got \"1 2 3 4\"");
  EXPECT_ERROR(withOrigin("1,2,3"), "bad.urdf:5: <origin>", "got \"1,2,3\"");
  EXPECT_ERROR(withOrigin("0 0 x"), "bad.urdf:5: <origin>", "got \"0 0 x\"");
  EXPECT_ERROR(robot("<link name=\"base\"><inertial>\n<mass value=\"heavy\"/><inertia ixx=\"1\" "
                     "iyy=\"1\" izz=\"1\"/></inertial></link>\n"),
               "bad.urdf:3: <mass>", "attribute 'value' must be a number, got \"heavy\"");
  EXPECT_ERROR(robot(link("base") + link("a") +
                     "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child "
                     "link=\"a\"/>\n<axis xyz=\"0 0 0\"/></joint>\n"),
               "bad.urdf:5: <axis>", "joint 'j': axis must be non-zero");
}

// A base (4 kg, COM off the origin) with a 2 kg payload on a fixed joint turned 90 deg about z.
// The model has one body whose inertia is the composite, computed here by the parallel-axis rule.
TEST(Urdf, FixedJointMergesMassAndInertia) {
  const Model m = parseUrdf(R"(<robot name="r">
    <link name="base">
      <inertial><origin xyz="0.1 0 0"/><mass value="4"/>
        <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial>
    </link>
    <joint name="mount" type="fixed">
      <parent link="base"/><child link="payload"/>
      <origin xyz="0.2 0.1 -0.05" rpy="0 0 1.5707963267948966"/>
    </joint>
    <link name="payload">
      <inertial><origin xyz="0.1 0 0"/><mass value="2"/>
        <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0.005" ixz="0" iyz="0"/></inertial>
    </link>
  </robot>)",
                            "merge.urdf");
  ASSERT_EQ(m.nbodies(), 1);
  EXPECT_EQ(m.nj(), 0);
  EXPECT_DOUBLE_EQ(m.totalMass(), 6.0);

  // Payload COM in the base: (0.2, 0.1, -0.05) + Rz(90) (0.1, 0, 0) = (0.2, 0.2, -0.05). Its
  // inertia in base axes: Rz(90) [a d 0; d b 0; 0 0 c] Rz(90)^T = [b -d 0; -d a 0; 0 0 c].
  const Vec3 c1(0.1, 0, 0), c2(0.2, 0.2, -0.05);
  Mat3 I1 = Vec3(0.1, 0.2, 0.3).asDiagonal(), I2;
  I2 << 0.02, -0.005, 0, -0.005, 0.01, 0, 0, 0, 0.03;
  const Vec3 com = (4 * c1 + 2 * c2) / 6;  // (0.8, 0.4, -0.1) / 6
  EXPECT_LT((com - Vec3(0.8 / 6, 0.4 / 6, -0.1 / 6)).norm(), 1e-15);
  auto shifted = [](double mass, const Vec3& d) {
    return Mat3(mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose()));
  };
  const Mat3 Icom = I1 + shifted(4, c1 - com) + I2 + shifted(2, c2 - com);

  const Inertia& I = m.bodies[0].inertia;
  EXPECT_DOUBLE_EQ(I.m, 6.0);
  EXPECT_LT((I.com() - com).norm(), 1e-14) << I.com().transpose();
  // Io is about the base origin; move it to the COM.
  const Mat3 IcomModel = I.Io - shifted(6, I.com());
  EXPECT_LT((IcomModel - Icom).norm(), 1e-14) << "\n" << IcomModel << "\n\n" << Icom;
  // Spot check of one entry by hand: Ixy about the COM is
  // -0.005 - 4 (0.1 - 0.8/6)(0 - 0.4/6) - 2 (0.2 - 0.8/6)(0.2 - 0.4/6) = -0.02833...
  EXPECT_NEAR(IcomModel(0, 1),
              -0.005 - 4 * (0.1 - 0.8 / 6) * (-0.4 / 6) - 2 * (0.2 - 0.8 / 6) * (0.2 - 0.4 / 6),
              1e-15);
}

// Fixed children merge into the movable body they hang from, not into the base: a leg with a
// fixed massive knee cap and a foot two fixed joints (both rotated) below the shank.
TEST(Urdf, SphereFeetAndMassesThroughRotatedFixedJoints) {
  const Model m = parseUrdf(R"(<robot name="leg">
    <link name="base">
      <inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial>
      <collision><origin xyz="0.3 0 -0.1"/><geometry><sphere radius="0.05"/></geometry></collision>
      <collision><geometry><box size="1 1 1"/></geometry></collision>
    </link>
    <joint name="mount" type="fixed">
      <parent link="base"/><child link="bracket"/>
      <origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/>
    </joint>
    <link name="bracket"/>
    <joint name="hip" type="revolute">
      <parent link="bracket"/><child link="shank"/>
      <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>
      <limit lower="-1" upper="2" effort="40" velocity="8"/>
    </joint>
    <link name="shank">
      <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>
    </link>
    <joint name="cap" type="fixed">
      <parent link="shank"/><child link="kneecap"/><origin xyz="0 0 -0.1"/>
    </joint>
    <link name="kneecap">
      <inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001"/></inertial>
    </link>
    <joint name="ankle" type="fixed">
      <parent link="shank"/><child link="ankle_link"/>
      <origin xyz="0 0 -0.3" rpy="0 1.5707963267948966 0"/>
    </joint>
    <link name="ankle_link"/>
    <joint name="sole" type="fixed">
      <parent link="ankle_link"/><child link="foot"/>
      <origin xyz="0.05 0 0" rpy="0 0 1.5707963267948966"/>
    </joint>
    <link name="foot">
      <collision><origin xyz="0.1 0 0" rpy="1 2 3"/><geometry><sphere radius="0.02"/></geometry></collision>
    </link>
  </robot>)",
                            "leg.urdf");
  ASSERT_EQ(m.nbodies(), 2);
  ASSERT_EQ(m.nj(), 1);
  EXPECT_EQ(m.bodies[1].name, "shank");
  EXPECT_EQ(m.bodies[1].parent, 0);
  EXPECT_DOUBLE_EQ(m.totalMass(), 6.5);
  EXPECT_DOUBLE_EQ(m.bodies[0].inertia.m, 5.0);
  EXPECT_DOUBLE_EQ(m.bodies[1].inertia.m, 1.5);  // the kneecap is on the shank
  EXPECT_LT((m.bodies[1].inertia.com() - Vec3(0, 0, -0.5 * 0.1 / 1.5)).norm(), 1e-15);

  // The hip sits at (0.1, 0, 0) + Rz(90) (0.2, 0, 0) = (0.1, 0.2, 0), turned by Rz(90).
  EXPECT_LT((m.bodies[1].tree.r - Vec3(0.1, 0.2, 0)).norm(), 1e-15);
  Mat3 Rz;
  Rz << 0, -1, 0, 1, 0, 0, 0, 0, 1;
  EXPECT_LT((m.bodies[1].tree.E - Rz.transpose()).norm(), 1e-15);

  ASSERT_EQ(m.nfeet(), 2);  // the box collision is ignored
  EXPECT_EQ(m.feet[0].name, "base");
  EXPECT_EQ(m.feet[0].body, 0);
  EXPECT_LT((m.feet[0].offset - Vec3(0.3, 0, -0.1)).norm(), 1e-15);
  EXPECT_DOUBLE_EQ(m.feet[0].radius, 0.05);
  // Foot in the shank: ankle at (0, 0, -0.3) turned Ry(90); sole (0.05, 0, 0) further turned
  // Rz(90): p = (0, 0, -0.3) + Ry(90) (0.05, 0, 0) = (0, 0, -0.35); the sphere centre (0.1, 0, 0)
  // maps to p + Ry(90) Rz(90) (0.1, 0, 0) = p + Ry(90) (0, 0.1, 0) = (0, 0.1, -0.35). Its rpy is
  // irrelevant.
  EXPECT_EQ(m.feet[1].name, "foot");
  EXPECT_EQ(m.footIndex("foot"), 1);
  EXPECT_EQ(m.feet[1].body, 1);
  EXPECT_LT((m.feet[1].offset - Vec3(0, 0.1, -0.35)).norm(), 1e-15) << m.feet[1].offset.transpose();
  EXPECT_DOUBLE_EQ(m.feet[1].radius, 0.02);

  const JointInfo& j = m.joints[0];
  EXPECT_EQ(j.name, "hip");
  EXPECT_DOUBLE_EQ(j.lower, -1);
  EXPECT_DOUBLE_EQ(j.upper, 2);
  EXPECT_DOUBLE_EQ(j.effort, 40);
  EXPECT_DOUBLE_EQ(j.velocity, 8);
}

// Continuous joints are unlimited in position (their <limit> lower/upper are ignored) but keep the
// effort limit; axes are normalised; bodies come parent first.
TEST(Urdf, ContinuousJointsLoad) {
  const Model m = parseUrdf(R"(<robot name="wheels">
    <link name="base"><inertial><mass value="3"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial></link>
    <joint name="wheel" type="continuous">
      <parent link="base"/><child link="w"/><axis xyz="0 0 2"/>
      <limit lower="-1" upper="1" effort="7" velocity="30"/><dynamics damping="0.3"/>
    </joint>
    <link name="w"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.02"/></inertial></link>
    <joint name="spinner" type="continuous">
      <parent link="w"/><child link="s"/><origin xyz="0 0 0.1"/><axis xyz="1 1 0"/>
    </joint>
    <link name="s"><inertial><mass value="0.25"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial></link>
  </robot>)",
                            "wheels.urdf");
  EXPECT_EQ(m.name, "wheels");
  EXPECT_EQ(m.source, "wheels.urdf");
  ASSERT_EQ(m.nj(), 2);
  EXPECT_EQ(m.nq(), 9);
  EXPECT_EQ(m.nv(), 8);
  EXPECT_EQ(m.jointIndex("wheel"), 0);
  EXPECT_EQ(m.jointIndex("spinner"), 1);
  EXPECT_EQ(m.bodies[2].parent, 1);
  EXPECT_LT((m.bodies[1].axis - Vec3::UnitZ()).norm(), 1e-15);
  EXPECT_LT((m.bodies[2].axis - Vec3(1, 1, 0) / std::sqrt(2.0)).norm(), 1e-15);
  EXPECT_EQ(m.joints[0].lower, -1e10);
  EXPECT_EQ(m.joints[0].upper, 1e10);
  EXPECT_DOUBLE_EQ(m.joints[0].effort, 7);
  EXPECT_DOUBLE_EQ(m.joints[0].damping, 0.3);
  EXPECT_EQ(m.joints[1].effort, 1e10);
  EXPECT_DOUBLE_EQ(m.totalMass(), 3.75);
  // The sparse factor's dof tree: base chain, then wheel under the base, spinner under wheel.
  ASSERT_EQ(m.dofParent.size(), 8u);
  EXPECT_EQ(m.dofParent[6], 5);
  EXPECT_EQ(m.dofParent[7], 6);
}

// Input size: a chain of 200 000 fixed links (deep enough to overflow a recursive walk) loads
// with their masses merged; more movable joints than the dynamics are meant for are refused.
TEST(Urdf, DeepFixedChainsLoadWithoutRecursion) {
  const int n = 200000;
  std::string body = link("base") + link("a");
  body += joint("hinge", "revolute", "base", "a");
  for (int i = 0; i < n; ++i) {
    body += link("f" + std::to_string(i));
    body += joint("fix" + std::to_string(i), "fixed", i == 0 ? "a" : "f" + std::to_string(i - 1),
                  "f" + std::to_string(i));
  }
  const Model m = parseUrdf(robot(body), "deep.urdf");
  EXPECT_EQ(m.nj(), 1);
  EXPECT_NEAR(m.bodies[1].inertia.m, n + 1.0, 1e-6);
}

TEST(UrdfErrors, TooManyMovableJoints) {
  std::string body = link("base");
  for (int i = 0; i <= kMaxMovableJoints; ++i) {
    body += link("l" + std::to_string(i));
    body += joint("j" + std::to_string(i), "revolute",
                  i == 0 ? "base" : "l" + std::to_string(i - 1), "l" + std::to_string(i));
  }
  EXPECT_ERROR(robot(body), "bad.urdf:1: <robot>",
               std::to_string(kMaxMovableJoints + 1) + " movable joints: at most " +
                   std::to_string(kMaxMovableJoints) + " are supported");
}
