#include "robots/mesh_feet.h"

#include <tinyxml2.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "io/excerpt.h"
#include "io/read_file.h"
#include "io/stl.h"

namespace diffloco {
namespace fs = std::filesystem;
using sim::Mat3;
using sim::Vec3;

namespace {

struct Doc {
  tinyxml2::XMLDocument xml;
  const tinyxml2::XMLElement* robot = nullptr;
};

void parse(const std::string& path, Doc& d) {
  const std::string text = io::readFile(path);
  if (d.xml.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS ||
      !(d.robot = d.xml.FirstChildElement("robot")))
    throw std::runtime_error(path + ": not a URDF (malformed XML or no <robot>)");
}

// "a b c" of an attribute (absent: `fallback`).
Vec3 triple(const std::string& path, const tinyxml2::XMLElement* e, const char* attr,
            const Vec3& fallback) {
  const char* s = e ? e->Attribute(attr) : nullptr;
  if (!s) return fallback;
  std::istringstream in(s);
  Vec3 v;
  std::string rest;
  if (!(in >> v[0] >> v[1] >> v[2]) || (in >> rest) || !v.allFinite())
    throw std::runtime_error(path + ":" + std::to_string(e->GetLineNum()) + ": " + attr +
                             " must be three finite numbers: '" + io::excerpt(s) + "'");
  return v;
}

Mat3 originRotation(const std::string& path, const tinyxml2::XMLElement* parent) {
  return sim::rpyToMatrix(triple(path, parent->FirstChildElement("origin"), "rpy", Vec3::Zero()));
}

std::string resolveMesh(const std::string& urdfPath, const std::string& link,
                        const std::string& name) {
  const fs::path dir = fs::absolute(urdfPath).parent_path();
  std::error_code ec;
  const std::string pkg = "package://", file = "file://";
  if (name.rfind(pkg, 0) == 0) {
    const std::string rest = name.substr(pkg.size());
    const std::string package = rest.substr(0, rest.find('/'));
    const std::string inside =
        rest.find('/') == std::string::npos ? "" : rest.substr(rest.find('/') + 1);
    std::vector<fs::path> roots;
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
      if (d.filename() == package) roots.push_back(d);
      roots.push_back(d / package);
      if (d == d.parent_path()) break;
    }
    if (const char* rpp = std::getenv("ROS_PACKAGE_PATH")) {
      std::istringstream in(rpp);
      for (std::string p; std::getline(in, p, ':');)
        if (!p.empty()) roots.push_back(fs::path(p) / package);
    }
    for (const auto& r : roots)
      if (fs::is_regular_file(r / inside, ec)) return (r / inside).string();
    throw std::runtime_error(urdfPath + ": link '" + link + "': mesh '" + io::excerpt(name) +
                             "' not found (looked for a folder '" + io::excerpt(package) +
                             "' above the URDF and on ROS_PACKAGE_PATH)");
  }
  const fs::path p = name.rfind(file, 0) == 0 ? fs::path(name.substr(file.size())) : dir / name;
  if (!fs::is_regular_file(p, ec))
    throw std::runtime_error(urdfPath + ": link '" + link + "': mesh '" + io::excerpt(name) +
                             "' not found");
  return p.string();
}

}  // namespace

std::vector<MeshFootSphere> proposeMeshFootSpheres(const std::string& urdfPath) {
  Doc d;
  parse(urdfPath, d);
  // Joints by child link: parent link, whether it moves, its origin's rotation.
  struct Joint {
    std::string parent;
    bool moves = false;
    Mat3 R;
  };
  std::map<std::string, Joint> jointOfChild;
  std::set<std::string> parents;
  for (auto* j = d.robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const auto *pe = j->FirstChildElement("parent"), *ce = j->FirstChildElement("child");
    const char *p = pe ? pe->Attribute("link") : nullptr, *c = ce ? ce->Attribute("link") : nullptr;
    if (!p || !c) continue;  // the URDF reader names such a joint
    const char* type = j->Attribute("type");
    const std::string t = type ? type : "";
    jointOfChild[c] = {p, t != "fixed" && t != "floating", originRotation(urdfPath, j)};
    parents.insert(p);
  }
  std::vector<MeshFootSphere> feet;
  for (auto* l = d.robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const char* nameAttr = l->Attribute("name");
    if (!nameAttr || parents.count(nameAttr)) continue;
    const std::string name = nameAttr;
    const tinyxml2::XMLElement *mesh = nullptr, *meshCollision = nullptr;
    bool sphere = false;
    for (auto* c = l->FirstChildElement("collision"); c; c = c->NextSiblingElement("collision")) {
      const auto* g = c->FirstChildElement("geometry");
      if (!g) continue;
      if (g->FirstChildElement("sphere")) sphere = true;
      if (!mesh && (mesh = g->FirstChildElement("mesh"))) meshCollision = c;
    }
    if (sphere || !mesh) continue;
    // Movable joints above it, and its zero-pose rotation from the root (the base level).
    int moving = 0;
    Mat3 R = Mat3::Identity();
    std::string at = name;
    for (size_t guard = 0; jointOfChild.count(at) && guard <= jointOfChild.size(); ++guard) {
      const Joint& j = jointOfChild.at(at);
      moving += j.moves;
      R = j.R * R;
      at = j.parent;
    }
    if (moving < 2) continue;
    const char* file = mesh->Attribute("filename");
    if (!file)
      throw std::runtime_error(urdfPath + ":" + std::to_string(mesh->GetLineNum()) + ": link '" +
                               name + "': <mesh> needs a filename");
    const std::string path = resolveMesh(urdfPath, name, file);
    const std::string ext = fs::path(path).extension().string();
    if (ext != ".stl" && ext != ".STL")
      throw std::runtime_error(urdfPath + ": link '" + name + "': its foot mesh '" +
                               io::excerpt(path) +
                               "' is not STL, which robot init reads to fit a foot sphere: add "
                               "a <sphere> collision to each foot link");
    const Vec3 scale = triple(urdfPath, mesh, "scale", Vec3::Ones());
    const auto* origin = meshCollision->FirstChildElement("origin");
    const Mat3 Rc = originRotation(urdfPath, meshCollision);
    const Vec3 pc = triple(urdfPath, origin, "xyz", Vec3::Zero());
    std::vector<Vec3> v;
    for (const auto& x : io::readStlVertices(path))
      v.push_back(Rc * Vec3(x[0], x[1], x[2]).cwiseProduct(scale) + pc);
    Vec3 lo = v[0], hi = v[0];
    for (const auto& x : v) lo = lo.cwiseMin(x), hi = hi.cwiseMax(x);
    const Vec3 centre = 0.5 * (lo + hi);
    const Vec3 down = R.transpose() * -Vec3::UnitZ();  // world -z in the link frame
    double radius = 0;
    for (const auto& x : v) radius = std::max(radius, (x - centre).dot(down));
    if (!(radius > 0))
      throw std::runtime_error(urdfPath + ": link '" + name + "': its mesh '" + io::excerpt(path) +
                               "' has no extent below its centre: add a <sphere> collision");
    feet.push_back({name, path, centre, radius});
  }
  return feet;
}

std::string urdfWithFootSpheres(const std::string& urdfPath,
                                const std::vector<MeshFootSphere>& feet) {
  Doc d;
  parse(urdfPath, d);
  auto* robot = d.xml.FirstChildElement("robot");
  for (const auto& f : feet) {
    tinyxml2::XMLElement* link = robot->FirstChildElement("link");
    while (link && (!link->Attribute("name") || f.link != link->Attribute("name")))
      link = link->NextSiblingElement("link");
    if (!link) throw std::runtime_error(urdfPath + ": no link '" + f.link + "'");
    char xyz[96];
    std::snprintf(xyz, sizeof xyz, "%.6g %.6g %.6g", f.centre[0], f.centre[1], f.centre[2]);
    auto* c = d.xml.NewElement("collision");
    c->SetAttribute("name", "foot_sphere");
    auto* o = d.xml.NewElement("origin");
    o->SetAttribute("xyz", xyz);
    o->SetAttribute("rpy", "0 0 0");
    auto* g = d.xml.NewElement("geometry");
    auto* s = d.xml.NewElement("sphere");
    char r[32];
    std::snprintf(r, sizeof r, "%.6g", f.radius);
    s->SetAttribute("radius", r);
    g->InsertEndChild(s);
    c->InsertEndChild(o);
    c->InsertEndChild(g);
    link->InsertEndChild(c);
  }
  tinyxml2::XMLPrinter printer;
  d.xml.Print(&printer);
  return printer.CStr();
}

}  // namespace diffloco
