#include "viz/rollout_record.h"

#include <Eigen/Geometry>
#include <cstdio>
#include <sstream>

#include "viz/robot_shapes.h"

namespace diffloco::viz {

namespace {

// JSON string with the characters JSON requires escaped, and '<' as \u003c so that the record
// can be inlined in an HTML <script> element.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '<' || static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Millimetre and 1e-4 precision: finer than any pixel, and it keeps a 10 s record of a
// 13-body robot near 0.6 MB per env.
void number(std::ostream& o, double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", x);
  // Trim trailing zeros: "0.5000" -> "0.5", "-0.0000" -> "0".
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  o << s;
}

void vec3(std::ostream& o, const Vec3& v) {
  o << '[';
  number(o, v.x());
  o << ',';
  number(o, v.y());
  o << ',';
  number(o, v.z());
  o << ']';
}

// Every digit: the window's origin and spacing are read back exactly.
std::string exact(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The ground's window (ground_window.h: heights already at 1e-4 m, which 4 decimals write
// exactly), one row of samples per line.
void terrain(std::ostream& o, const sim::HeightField& f) {
  o << "\"terrain\":{\"origin\":[" << exact(f.originX) << ',' << exact(f.originY)
    << "],\"spacing\":" << exact(f.spacing) << ",\"nx\":" << f.nx << ",\"ny\":" << f.ny
    << ",\"heights\":[";
  for (size_t i = 0; i < f.heights.size(); ++i) {
    if (i) o << (i % f.nx ? "," : ",\n");
    number(o, f.heights[i]);
  }
  o << "]},\n";
}

}  // namespace

std::string rolloutJson(const Rollout& r) {
  std::ostringstream o;
  o << "{\"format\":\"diffloco-rollout-2\",\"robot\":" << quoted(r.robot)
    << ",\"task\":" << quoted(r.task) << ",\"engine\":" << quoted(r.engine)
    << ",\"policy\":" << quoted(r.policy) << ",\"dt\":" << r.dt
    << ",\"has_commands\":" << (r.hasCommands ? "true" : "false") << ",\n\"bodies\":[";
  for (int b = 0; b < r.model.nbodies(); ++b) o << (b ? "," : "") << quoted(r.model.bodies[b].name);
  o << "],\n\"shapes\":[";
  const std::vector<Shape> shapes = robotShapes(r.model);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    o << (i ? ",\n" : "") << "{\"body\":" << s.body << ",\"kind\":\"" << toString(s.kind)
      << "\",\"a\":";
    vec3(o, s.a);
    o << ",\"b\":";
    vec3(o, s.b);
    o << ",\"radius\":";
    number(o, s.radius);
    o << ",\"color\":[" << int(s.color.r) << ',' << int(s.color.g) << ',' << int(s.color.b) << "]}";
  }
  o << "],\n";
  if (r.ground) terrain(o, *r.ground);
  o << "\"envs\":[";
  for (size_t e = 0; e < r.envs.size(); ++e) {
    const auto& frames = r.envs[e].frames;
    o << (e ? ",\n" : "") << "{\"frames\":" << frames.size() << ",\n\"time\":[";
    for (size_t k = 0; k < frames.size(); ++k) {
      if (k) o << ',';
      number(o, frames[k].time);
    }
    o << "],\n\"pose\":[";
    for (size_t k = 0; k < frames.size(); ++k) {
      const std::vector<BodyPose> poses = bodyPoses(r.model, frames[k].q);
      for (size_t b = 0; b < poses.size(); ++b) {
        const Eigen::Quaterniond quat(poses[b].rotation);
        const double x[7] = {poses[b].position.x(),
                             poses[b].position.y(),
                             poses[b].position.z(),
                             quat.w(),
                             quat.x(),
                             quat.y(),
                             quat.z()};
        for (int i = 0; i < 7; ++i) {
          if (k || b || i) o << ',';
          number(o, x[i]);
        }
      }
      o << '\n';
    }
    for (const char* field : {"command", "velocity"}) {
      o << "],\n\"" << field << "\":[";
      for (size_t k = 0; k < frames.size(); ++k) {
        const Vec3& v = field[0] == 'c' ? frames[k].command : frames[k].velocity;
        for (int i = 0; i < 3; ++i) {
          if (k || i) o << ',';
          number(o, v[i]);
        }
      }
    }
    o << "]}";
  }
  o << "]}\n";
  return o.str();
}

}  // namespace diffloco::viz
