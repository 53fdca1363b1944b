#include "viz/rollout_record.h"

#include <Eigen/Geometry>
#include <cmath>

#include "io/json.h"
#include "viz/robot_shapes.h"

namespace diffloco::viz {

namespace {

using Json = nlohmann::ordered_json;

// Millimetre and 1e-4 precision: finer than any pixel, and it keeps a 10 s record of a
// 13-body robot near 0.6 MB per env (the shortest decimal of k / 1e4 has at most 4 decimals).
Json number(double x) {
  return io::jsonNumber(std::round(x * 1e4) / 1e4);
}

Json vec3(const Vec3& v) {
  return Json::array({number(v.x()), number(v.y()), number(v.z())});
}

// The ground's window (ground_window.h: heights already at 1e-4 m, which 4 decimals write
// exactly); the origin and spacing with every digit, read back exactly.
Json terrain(const sim::HeightField& f) {
  Json heights = Json::array();
  for (double h : f.heights) heights.push_back(number(h));
  return Json{{"origin", {f.originX, f.originY}},
              {"spacing", f.spacing},
              {"nx", f.nx},
              {"ny", f.ny},
              {"heights", std::move(heights)}};
}

Json shapes(const sim::Model& model) {
  Json out = Json::array();
  for (const Shape& s : robotShapes(model))
    out.push_back({{"body", s.body},
                   {"kind", toString(s.kind)},
                   {"a", vec3(s.a)},
                   {"b", vec3(s.b)},
                   {"radius", number(s.radius)},
                   {"color", {int(s.color.r), int(s.color.g), int(s.color.b)}}});
  return out;
}

// One env's frames: times, every body's position and quaternion (w x y z) per frame, and the
// command and base velocity overlays.
Json env(const sim::Model& model, const std::vector<RolloutFrame>& frames) {
  Json time = Json::array(), pose = Json::array(), command = Json::array(),
       velocity = Json::array();
  for (const RolloutFrame& f : frames) {
    time.push_back(number(f.time));
    for (const BodyPose& p : bodyPoses(model, f.q)) {
      const Eigen::Quaterniond quat(p.rotation);
      for (double x : {p.position.x(), p.position.y(), p.position.z(), quat.w(), quat.x(),
                       quat.y(), quat.z()})
        pose.push_back(number(x));
    }
    for (int i = 0; i < 3; ++i) {
      command.push_back(number(f.command[i]));
      velocity.push_back(number(f.velocity[i]));
    }
  }
  return Json{{"frames", frames.size()},
              {"time", std::move(time)},
              {"pose", std::move(pose)},
              {"command", std::move(command)},
              {"velocity", std::move(velocity)}};
}

}  // namespace

std::string rolloutJson(const Rollout& r) {
  Json j{{"format", "diffloco-rollout-2"}, {"robot", r.robot},   {"task", r.task},
         {"engine", r.engine},             {"policy", r.policy}, {"dt", r.dt},
         {"has_commands", r.hasCommands}};
  Json bodies = Json::array();
  for (int b = 0; b < r.model.nbodies(); ++b) bodies.push_back(r.model.bodies[b].name);
  j["bodies"] = std::move(bodies);
  j["shapes"] = shapes(r.model);
  if (r.ground) j["terrain"] = terrain(*r.ground);
  Json envs = Json::array();
  for (const auto& e : r.envs) envs.push_back(env(r.model, e.frames));
  j["envs"] = std::move(envs);
  // '<' only occurs inside strings; as \u003c the record can be inlined in an HTML <script>.
  std::string out = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string safe;
  safe.reserve(out.size() + 1);
  for (char c : out) {
    if (c == '<')
      safe += "\\u003c";
    else
      safe += c;
  }
  return safe + "\n";
}

}  // namespace diffloco::viz
