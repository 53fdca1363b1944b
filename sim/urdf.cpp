#include "sim/urdf.h"

#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "io/excerpt.h"

namespace diffloco::sim {
namespace {

using tinyxml2::XMLElement;

// A number as a message shows it: "-1", "0.25", "1e-09" (std::to_string gives "-1.000000").
std::string str(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// Bounds on what a robot's file can mean: larger values are typing errors that would make the
// first step non-finite.
constexpr double kNoBound = std::numeric_limits<double>::infinity();
constexpr double kMaxLength = 1e3;    // [m] origins, sphere radii
constexpr double kMaxAngle = 1e3;     // [rad] origin angles
constexpr double kMaxInertial = 1e6;  // [kg], [kg m^2], [N m s / rad] masses, inertias, damping

struct Parser {
  std::string source;

  // "file:line: <element>: what", the form of every message.
  std::string where(const XMLElement* e, const std::string& what) const {
    std::ostringstream s;
    s << source;
    if (e) s << ":" << e->GetLineNum() << ": <" << e->Name() << ">";
    s << ": " << what;
    return s.str();
  }

  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const {
    throw ModelError(where(e, what));
  }

  std::string attr(const XMLElement* e, const char* name) const {
    const char* v = e->Attribute(name);
    if (!v) fail(e, std::string("missing attribute '") + name + "'");
    return v;
  }

  // Parses "a b c" (n numbers) from an attribute; a missing attribute gives `fallback`. A
  // number beyond +-bound is refused here: 1e308 parses, and fails the first step instead.
  Eigen::VectorXd numbers(const XMLElement* e, const char* name, int n,
                          const Eigen::VectorXd* fallback = nullptr,
                          double bound = kNoBound) const {
    const char* v = e->Attribute(name);
    if (!v) {
      if (fallback) return *fallback;
      fail(e, std::string("missing attribute '") + name + "'");
    }
    std::istringstream in(v);
    Eigen::VectorXd out(n);
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) ok = static_cast<bool>(in >> out[i]);
    std::string rest;
    if (!ok || in >> rest) {
      const std::string expected =
          n == 1 ? "a number" : std::to_string(n) + " space-separated numbers";
      fail(e, std::string("attribute '") + name + "' must be " + expected + ", got \"" +
                  io::excerpt(v) + "\"");
    }
    if (out.cwiseAbs().maxCoeff() > bound)
      fail(e, std::string("attribute '") + name + "' must be within +-" + str(bound) + ", got \"" +
                  io::excerpt(v) + "\"");
    return out;
  }

  double number(const XMLElement* e, const char* name, double fallback, bool required,
                double bound = kNoBound) const {
    if (!e->Attribute(name)) {
      if (required) fail(e, std::string("missing attribute '") + name + "'");
      return fallback;
    }
    return numbers(e, name, 1, nullptr, bound)[0];
  }

  // <origin xyz rpy> as a pose: rotation child->parent and translation.
  void origin(const XMLElement* parent, Mat3& R, Vec3& p) const {
    R.setIdentity();
    p.setZero();
    const XMLElement* o = parent->FirstChildElement("origin");
    if (!o) return;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(3);
    p = numbers(o, "xyz", 3, &zero, kMaxLength);
    R = rpyToMatrix(numbers(o, "rpy", 3, &zero, kMaxAngle));
  }
};

struct LinkData {
  const XMLElement* elem = nullptr;
  bool hasInertial = false;
  Inertia inertia;  // in the link frame
  struct Sphere {
    Vec3 centre;
    double radius;
  };
  std::vector<Sphere> spheres;
};

struct JointData {
  const XMLElement* elem = nullptr;
  std::string name, type, parent, child;
  Mat3 R;  // child frame -> parent frame at q = 0
  Vec3 p;  // child origin in parent
  Vec3 axis = Vec3::UnitX();
  JointInfo info;
};

// What the file says before the bodies are built: links by name (and in file order), joints,
// the collision shapes that are not spheres, and the root link.
struct UrdfTree {
  std::map<std::string, LinkData> links;
  std::vector<std::string> linkOrder;
  std::map<std::string, int> ignoredShapes;  // shape -> count
  std::vector<std::string> ignoredLinks;     // the links that carry them
  std::vector<JointData> joints;
  std::map<std::string, int> jointOfChild;  // child link -> index in joints
  std::string root;
};

// ---- <inertial>: mass, centre of mass, rotational inertia (repaired when not physical)
Inertia readInertial(const Parser& P, const XMLElement* in, const std::string& name,
                     const UrdfOptions& options, UrdfReport& out) {
  const XMLElement* me = in->FirstChildElement("mass");
  const XMLElement* ie = in->FirstChildElement("inertia");
  if (!me) P.fail(in, "link '" + name + "': <inertial> needs a <mass value=...>");
  if (!ie) P.fail(in, "link '" + name + "': <inertial> needs an <inertia ixx=... izz=...>");
  const double m = P.number(me, "value", 0, true, kMaxInertial);
  if (!(m >= 0)) P.fail(me, "link '" + name + "': mass must be >= 0, got " + str(m));
  Mat3 I;
  const double ixx = P.number(ie, "ixx", 0, true, kMaxInertial),
               iyy = P.number(ie, "iyy", 0, true, kMaxInertial),
               izz = P.number(ie, "izz", 0, true, kMaxInertial),
               ixy = P.number(ie, "ixy", 0, false, kMaxInertial),
               ixz = P.number(ie, "ixz", 0, false, kMaxInertial),
               iyz = P.number(ie, "iyz", 0, false, kMaxInertial);
  I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  const Vec3 eig = Eigen::SelfAdjointEigenSolver<Mat3>(I).eigenvalues();  // ascending
  // A negative principal moment also breaks the triangle inequality (e0 + e1 < e1 <= e2), so
  // one test covers both; the tolerances let the boundary (a rod, a plate) through.
  if (eig.minCoeff() < -1e-12 || eig[0] + eig[1] < eig[2] * (1 - 1e-9) - 1e-12) {
    const std::string moments =
        "principal moments " + str(eig[0]) + ", " + str(eig[1]) + ", " + str(eig[2]);
    const double mean = eig.sum() / 3;
    if (options.strict || !(mean > 0))
      P.fail(ie, "link '" + name +
                     "': rotational inertia must be positive semi-definite and satisfy the "
                     "triangle inequality (" +
                     moments + ")" +
                     (options.strict ? "; the robot file says strict: true"
                                     : "; cannot be repaired: their mean is not positive"));
    // MuJoCo's balanceinertia: every principal moment is set to their mean (trace / 3), so
    // the inertia about the centre of mass becomes mean * identity (the principal axes no
    // longer matter); mass and centre of mass are kept. CAD exports of small sensor links
    // miss the inequality by rounding; the repaired value keeps the trace.
    I = mean * Mat3::Identity();
    out.warnings.push_back(P.where(ie, "link '" + name + "': rotational inertia is not physical (" +
                                           moments +
                                           "): repaired as MuJoCo's balanceinertia does, every "
                                           "principal moment set to their mean " +
                                           str(mean)));
  }
  Mat3 R;
  Vec3 c;
  P.origin(in, R, c);
  return Inertia::fromCom(m, c, R * I * R.transpose());
}

// ---- links: inertia and sphere collisions
void readLinks(const Parser& P, const XMLElement* robot, const UrdfOptions& options,
               UrdfReport& out, UrdfTree& t) {
  auto& links = t.links;
  auto& ignoredShapes = t.ignoredShapes;
  auto& ignoredLinks = t.ignoredLinks;
  for (const XMLElement* l = robot->FirstChildElement("link"); l;
       l = l->NextSiblingElement("link")) {
    const std::string name = P.attr(l, "name");
    if (links.count(name)) P.fail(l, "duplicate link name '" + name + "'");
    LinkData d;
    d.elem = l;
    if (const XMLElement* in = l->FirstChildElement("inertial")) {
      d.hasInertial = true;
      d.inertia = readInertial(P, in, name, options, out);
    }
    for (const XMLElement* c = l->FirstChildElement("collision"); c;
         c = c->NextSiblingElement("collision")) {
      // A <collision> without <geometry> collides with nothing: ignored like a mesh.
      const XMLElement* g = c->FirstChildElement("geometry");
      if (const XMLElement* s = g ? g->FirstChildElement("sphere") : nullptr) {
        const double r = P.number(s, "radius", 0, true, kMaxLength);
        if (!(r > 0)) P.fail(s, "link '" + name + "': sphere radius must be > 0");
        Mat3 R;
        Vec3 p;
        P.origin(c, R, p);
        d.spheres.push_back({p, r});
      } else {
        // Only sphere feet touch the ground: a mesh, box or cylinder is counted for one note.
        const XMLElement* shape = g ? g->FirstChildElement() : nullptr;
        ++ignoredShapes[shape ? shape->Name()
                        : g   ? "empty geometry"
                              : "collision without geometry"];
        if (ignoredLinks.empty() || ignoredLinks.back() != name) ignoredLinks.push_back(name);
      }
    }
    links[name] = d;
    t.linkOrder.push_back(name);
  }
  if (links.empty()) P.fail(robot, "the robot has no <link>");
}

// ---- one <joint>: type, parent and child, origin, axis, limits, damping
JointData readJoint(const Parser& P, const XMLElement* j, const UrdfTree& t,
                    std::map<std::string, const XMLElement*>& jointNamed) {
  const auto& links = t.links;
  const auto& joints = t.joints;
  const auto& jointOfChild = t.jointOfChild;
  JointData d;
  d.elem = j;
  d.name = P.attr(j, "name");
  // Joints are looked up by name (a robot file's joint order, its default pose).
  if (!jointNamed.emplace(d.name, j).second)
    P.fail(j, "duplicate joint name '" + d.name + "' (first on line " +
                  std::to_string(jointNamed[d.name]->GetLineNum()) + ")");
  d.type = P.attr(j, "type");
  if (d.type != "revolute" && d.type != "continuous" && d.type != "fixed" && d.type != "floating")
    P.fail(j, "joint '" + d.name + "' has unsupported type '" + io::excerpt(d.type) +
                  "' (expected revolute, continuous, fixed, or floating from a dummy root)");
  const XMLElement* pe = j->FirstChildElement("parent");
  const XMLElement* ce = j->FirstChildElement("child");
  if (!pe) P.fail(j, "joint '" + d.name + "' needs a <parent link=...>");
  if (!ce) P.fail(j, "joint '" + d.name + "' needs a <child link=...>");
  d.parent = P.attr(pe, "link");
  d.child = P.attr(ce, "link");
  if (!links.count(d.parent)) P.fail(pe, "joint '" + d.name + "': unknown link '" + d.parent + "'");
  if (!links.count(d.child)) P.fail(ce, "joint '" + d.name + "': unknown link '" + d.child + "'");
  if (jointOfChild.count(d.child))
    P.fail(j, "link '" + d.child + "' is the child of two joints ('" +
                  joints[jointOfChild.at(d.child)].name + "' and '" + d.name +
                  "'): the model must be a tree");
  P.origin(j, d.R, d.p);
  const bool movable = d.type == "revolute" || d.type == "continuous";
  // URDF ignores the axis of fixed and floating joints (vendor files write "0 0 0" there).
  const XMLElement* a = movable ? j->FirstChildElement("axis") : nullptr;
  if (a) {
    d.axis = P.numbers(a, "xyz", 3);
    if (d.axis.norm() < 1e-9) P.fail(a, "joint '" + d.name + "': axis must be non-zero");
    d.axis.normalize();
  }
  d.info.name = d.name;
  // A fixed joint's <limit> means nothing (vendor files write effort="0" there).
  const XMLElement* lim = movable ? j->FirstChildElement("limit") : nullptr;
  if (lim) {
    d.info.effort = P.number(lim, "effort", d.info.effort, false);
    d.info.velocity = P.number(lim, "velocity", d.info.velocity, false);
    if (d.type == "revolute") {
      d.info.lower = P.number(lim, "lower", d.info.lower, false);
      d.info.upper = P.number(lim, "upper", d.info.upper, false);
    }
    if (!(d.info.effort > 0)) P.fail(lim, "joint '" + d.name + "': effort limit must be > 0");
    if (d.info.lower > d.info.upper)
      P.fail(lim, "joint '" + d.name + "': lower limit " + str(d.info.lower) +
                      " is above the upper limit " + str(d.info.upper));
  }
  const XMLElement* dyn = movable ? j->FirstChildElement("dynamics") : nullptr;
  if (dyn) {
    d.info.damping = P.number(dyn, "damping", 0, false, kMaxInertial);
    // Negative damping would feed energy into the joint.
    if (!(d.info.damping >= 0))
      P.fail(dyn, "joint '" + d.name + "': damping must be >= 0, got " + str(d.info.damping));
  }
  return d;
}

void readJoints(const Parser& P, const XMLElement* robot, UrdfTree& t) {
  std::map<std::string, const XMLElement*> jointNamed;
  for (const XMLElement* j = robot->FirstChildElement("joint"); j;
       j = j->NextSiblingElement("joint")) {
    const JointData d = readJoint(P, j, t, jointNamed);
    t.jointOfChild[d.child] = static_cast<int>(t.joints.size());
    t.joints.push_back(d);
  }
}

// ---- the root link, and a floating joint from a dummy root dropped
void findRoot(const Parser& P, const XMLElement* robot, UrdfTree& t, UrdfReport& out) {
  auto& links = t.links;
  auto& linkOrder = t.linkOrder;
  auto& joints = t.joints;
  auto& jointOfChild = t.jointOfChild;
  auto& root = t.root;
  // Root: the one link that is nobody's child.
  for (const auto& n : linkOrder)
    if (!jointOfChild.count(n)) {
      if (!root.empty())
        P.fail(links[n].elem, "two root links ('" + root + "' and '" + n +
                                  "'): the model must be one tree under the floating base");
      root = n;
    }
  if (root.empty()) P.fail(robot, "no root link: the joints form a cycle");

  // A floating joint may only join a massless dummy root (a "world" frame) to the real base: the
  // floating base is implicit, so that joint and its dummy parent are dropped.
  for (int i = 0; i < static_cast<int>(joints.size()); ++i) {
    const JointData& J = joints[i];
    if (J.type != "floating") continue;
    const LinkData& R = links[J.parent];
    int rootChildren = 0;
    for (const auto& K : joints) rootChildren += K.parent == root;
    if (J.parent != root || rootChildren != 1 || (R.hasInertial && R.inertia.m > 0) ||
        !R.spheres.empty())
      P.fail(J.elem, "joint '" + J.name +
                         "': a floating joint must be the only joint of a massless root link "
                         "without collision spheres (the floating base is implicit)");
    out.notes.push_back(P.where(J.elem, "floating joint '" + J.name + "' from the dummy root '" +
                                            root + "': '" + J.child + "' is the floating base"));
    links.erase(root);
    linkOrder.erase(std::find(linkOrder.begin(), linkOrder.end(), root));
    root = J.child;
    jointOfChild.erase(J.child);
    joints.erase(joints.begin() + i);
    for (auto& [child, k] : jointOfChild)
      if (k > i) --k;
    break;  // the root check above allows one floating joint at the root; others fail below
  }
  for (const auto& J : joints)
    if (J.type == "floating")
      P.fail(J.elem, "joint '" + J.name + "': only one floating joint, from the root, is allowed");
}

// ---- bodies: the movable joints' child links, with the links fixed to them merged in
void buildBodies(const Parser& P, UrdfTree& t, Model& model) {
  auto& links = t.links;
  const auto& joints = t.joints;
  const std::string& root = t.root;
  // Depth-first walk in pre-order (children in the file's order); fixed children are merged
  // into the movable ancestor `body` with the pose (R, p) of the link frame in that body's frame.
  // An explicit stack, not recursion: a chain of many thousand fixed links must not overflow
  // the call stack.
  std::map<std::string, std::vector<int>> childJoints;
  for (int i = 0; i < static_cast<int>(joints.size()); ++i)
    childJoints[joints[i].parent].push_back(i);

  struct Visit {
    std::string link;
    int body;  // the movable ancestor (the parent body when `joint` is movable)
    Mat3 R;
    Vec3 p;
    int joint;  // the joint that leads here, -1 at the root
  };
  std::map<std::string, bool> reached;
  Body base;
  base.name = root;
  model.bodies.push_back(base);
  std::vector<Visit> stack{{root, 0, Mat3::Identity(), Vec3::Zero(), -1}};
  while (!stack.empty()) {
    Visit v = std::move(stack.back());
    stack.pop_back();
    if (v.joint >= 0 && joints[v.joint].type != "fixed") {
      const JointData& J = joints[v.joint];
      Body b;
      b.name = J.child;
      b.parent = v.body;
      b.tree.E = v.R.transpose();
      b.tree.r = v.p;
      b.axis = J.axis;
      model.bodies.push_back(b);
      model.joints.push_back(J.info);
      v.body = model.nbodies() - 1;
      v.R = Mat3::Identity();
      v.p = Vec3::Zero();
    }
    reached[v.link] = true;
    const LinkData& L = links[v.link];
    Transform X;  // body frame -> link frame, as a child transform
    X.E = v.R.transpose();
    X.r = v.p;
    model.bodies[v.body].inertia += L.inertia.toParent(X);
    for (const auto& s : L.spheres)
      model.feet.push_back({v.link, v.body, v.R * s.centre + v.p, s.radius});
    const std::vector<int>& children = childJoints[v.link];
    for (auto it = children.rbegin(); it != children.rend(); ++it) {  // first child on top
      const JointData& J = joints[*it];
      stack.push_back({J.child, v.body, v.R * J.R, v.R * J.p + v.p, *it});
    }
  }
  // Every body needs mass, on its own link or on links fixed to it (merged by now).
  for (int i = 0; i < model.nbodies(); ++i)
    if (!(model.bodies[i].inertia.m > 0)) {
      const std::string& n = model.bodies[i].name;
      P.fail(links[n].elem,
             i == 0 ? "root link '" + n +
                          "' needs an <inertial> with mass > 0 (on itself or on "
                          "links fixed to it)"
                    : "link '" + n + "' is moved by joint '" + model.joints[i - 1].name +
                          "' and needs an <inertial> with mass > 0 (on itself or on links fixed "
                          "to it)");
    }
  // Every other link has a parent joint, so a link the walk missed hangs from a cycle of joints.
  for (const auto& n : t.linkOrder)
    if (!reached.count(n))
      P.fail(links[n].elem, "link '" + n + "' is not connected to the root link '" + root +
                                "': its joints form a cycle");
}

// One note for every collision shape that is not a sphere.
void noteIgnoredShapes(const std::string& sourceName, const UrdfTree& t, UrdfReport& out) {
  if (t.ignoredShapes.empty()) return;
  std::string shapes, names;
  int total = 0;
  for (const auto& [shape, n] : t.ignoredShapes) {
    shapes += (shapes.empty() ? "" : ", ") + std::to_string(n) + " " + shape;
    total += n;
  }
  for (const auto& n : t.ignoredLinks) names += (names.empty() ? "" : ", ") + n;
  out.notes.push_back(sourceName + ": ignored " + std::to_string(total) +
                      " non-sphere collision geometries (" + shapes + ") on links " + names +
                      ": only sphere feet touch the ground");
}

}  // namespace

Model parseUrdf(const std::string& xml, const std::string& sourceName, const UrdfOptions& options,
                UrdfReport* report) {
  Parser P{sourceName};
  UrdfReport local;
  UrdfReport& out = report ? *report : local;
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) {
    std::ostringstream s;
    s << sourceName;
    if (doc.ErrorLineNum() > 0) s << ":" << doc.ErrorLineNum();  // 0 for an empty document
    s << ": malformed XML: " << io::excerpt(doc.ErrorStr(), 2 * io::kMaxExcerpt);
    throw ModelError(s.str());
  }
  const XMLElement* robot = doc.FirstChildElement("robot");
  if (!robot) throw ModelError(sourceName + ": expected a <robot> root element");

  UrdfTree t;
  readLinks(P, robot, options, out, t);
  readJoints(P, robot, t);
  findRoot(P, robot, t, out);

  Model model;
  model.name = P.attr(robot, "name");
  model.source = sourceName;

  // The dynamics cost O(n^2) in the movable joints (H is n x n): a legged robot has tens; a
  // file with thousands is refused here rather than left to take minutes and gigabytes later.
  int movable = 0;
  for (const auto& J : t.joints) movable += J.type != "fixed";
  if (movable > kMaxMovableJoints)
    P.fail(robot, std::to_string(movable) + " movable joints: at most " +
                      std::to_string(kMaxMovableJoints) + " are supported");

  buildBodies(P, t, model);
  model.finalize();
  noteIgnoredShapes(sourceName, t, out);
  if (!report) {
    for (const auto& w : out.warnings) std::cerr << "warning: " << w << "\n";
    for (const auto& n : out.notes) std::cerr << "note: " << n << "\n";
  }
  return model;
}

Model loadUrdf(const std::string& path, const UrdfOptions& options, UrdfReport* report) {
  std::ifstream in(path);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec))  // a folder opens as a stream on Linux
    throw ModelError(path + ": cannot open URDF file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parseUrdf(buf.str(), path, options, report);
}

}  // namespace diffloco::sim
