#include "deploy/policy_metadata.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

namespace diffloco::deploy {

namespace {

// Every field of format 2 once: section, key, value. The writers, the reader and the comparison
// are visitors, so a field added here is written, read and compared.
template <class V, class M>
void visitMetadata(M& m, V& v) {
  v.section("format", "");
  v("format", m.format);
  v("task", m.task);
  v.section("robot",
            "the robot trained on: URDF text (sha256 of its bytes), free-floating base link, the "
            "links carrying the foot spheres (the only colliding bodies: spheres against the "
            "ground plane z = 0, no self-collision), gravity [m/s^2] in world axes (z up); a link "
            "without <inertial> is massless");
  v("name", m.robot);
  v("base_link", m.baseLink);
  v("feet", m.feet);
  v("foot_radius", m.footRadius);
  v("gravity", m.gravity);
  v("urdf_sha256", m.urdfSha256);
  v("urdf", m.urdf);
  v.section("joints",
            "joints in the policy's action and observation order; lower/upper: the URDF's limits "
            "(not enforced by the training simulator)");
  v("names", m.jointNames);
  v("default_pos", m.defaultJointPos);
  v("lower", m.jointLower);
  v("upper", m.jointUpper);
  v("default_base_height", m.defaultBaseHeight);
  v.section("action",
            "q* = offset + scale * clip(a, -clip, clip), offset = joints.default_pos; forward() "
            "returns a (squash applied)");
  v("scale", m.actionScale);
  v("clip", m.actionClip);
  v("offset", m.defaultJointPos);
  v("squash", m.squash);
  v.section("observation",
            "terms in order, each multiplied by its scale, with its definition (formula, frame, "
            "units, conventions); noise: training only, when noise_enabled");
  v.terms("terms", m.observations);
  v("size", m.numObs);
  v("noise_enabled", m.observationNoise);
  v.section("timing", "control_dt: policy period, sim_dt: simulator step [s]");
  v("control_dt", m.controlDt);
  v("sim_dt", m.simDt);
  v("decimation", m.decimation);
  v("episode_length_s", m.episodeLengthS);
  v.section(
      "actuator",
      "at every simulator step (sim_dt), q* held over control_dt: tau = clip(kp (q* - q) - kd "
      "qd, max(saturation (-1 - qd / velocity_limit), -effort), min(saturation (1 - qd / "
      "velocity_limit), effort)); saturation, velocity_limit null: tau = clip(kp (q* - q) - "
      "kd qd, -effort, effort); armature [kg m^2] added to every joint's inertia");
  v("kp", m.kp);
  v("kd", m.kd);
  v("effort", m.effort);
  v("saturation", m.saturation);
  v("velocity_limit", m.velocityLimit);
  v("armature", m.armature);
  v("source", m.actuatorSource);
  v.section("commands", "uniform ranges trained with, base frame [m/s, m/s, rad/s]");
  v("enabled", m.commandsEnabled);
  v("lin_vel_x", m.linVelX);
  v("lin_vel_y", m.linVelY);
  v("ang_vel_z", m.angVelZ);
  v("resample_s", m.commandResampleS);
  v.section("simulation",
            "contact model trained with (docs/simulator.md): friction of feet and ground, "
            "Gauss-Seidel iterations, smoothed model's kappa [1/m] and cutoff [m] (null: none), "
            "soft model's penalty contact");
  v("contact", m.contactModel);
  v("kappa", m.kappa);
  v("friction", m.friction);
  v("solver_iterations", m.solverIterations);
  v("cutoff", m.contactCutoff);
  v("soft_kp", m.softKp);
  v("soft_kd", m.softKd);
  v("soft_kf", m.softKf);
  v("soft_substeps", m.softSubsteps);
  v("soft_integrator", m.softIntegrator);
  v.section(
      "reset",
      "each episode: default pose at default_base_height, level; joints + U(-joint_pos_noise, "
      "+), base x, y + U(-base_pos_noise, +), yaw U(-random_yaw, +) then a tilt "
      "U(-base_rot_noise, +) about a random horizontal axis, velocities + U(-x, +) per "
      "component (linear: world axes, angular: base axes); then the base height is set so "
      "that the lowest foot sphere is foot_clearance above z = 0");
  v("joint_pos_noise", m.resetJointPosNoise);
  v("joint_vel_noise", m.resetJointVelNoise);
  v("base_pos_noise", m.resetBasePosNoise);
  v("base_rot_noise", m.resetBaseRotNoise);
  v("random_yaw", m.resetRandomYaw);
  v("base_lin_vel_noise", m.resetBaseLinVelNoise);
  v("base_ang_vel_noise", m.resetBaseAngVelNoise);
  v("foot_clearance", m.resetFootClearance);
  v.section(
      "randomization",
      "per episode, null: off: friction U(lo, hi), mass added to the base U(lo, hi) [kg] (its "
      "inertia scaled with it), "
      "pushes (base x, y velocity + U(-push_velocity, +) [m/s]) every U(lo, hi) s");
  v("friction", m.frictionRange);
  v("added_mass", m.addedMassRange);
  v("push_interval_s", m.pushIntervalS);
  v("push_velocity", m.pushVelocity);
  v.section("terminations", "trained with (null: none); the controller's default safety limits");
  v("base_tilt_above", m.terminationTilt);
  v("base_height_below", m.terminationHeight);
  v.section(
      "provenance",
      "how the policy was made (null or empty: unknown): seed, iterations, warm-start chain "
      "(init_from, newest first), sha256 of the run's config.yaml (the resolved training config) "
      "as read at export, final curriculum "
      "factors (null: no curriculum)");
  v("diffloco_version", m.difflocoVersion);
  v("git_commit", m.gitCommit);
  v("algorithm", m.algorithm);
  v("source", m.source);
  v("config_sha256", m.configSha256);
  v("seed", m.seed);
  v("iterations", m.iterations);
  v("warm_start", m.warmStart);
  v.curriculum("curriculum", m.curriculum);
  v.section("task", "the task as trained (YAML text, diffloco's configs/tasks format)");
  v("yaml", m.taskYaml);
  v.end();
}

// Format 1 (read only): the layout before the contract.
template <class V>
void visitMetadataV1(PolicyMetadata& m, V& v) {
  v.section("format", "");
  v("format", m.format);
  v("diffloco_version", m.difflocoVersion);
  v("git_commit", m.gitCommit);
  v("task", m.task);
  v("robot", m.robot);
  v("algorithm", m.algorithm);
  v("source", m.source);
  v.section("joints", "");
  v("names", m.jointNames);
  v("default_pos", m.defaultJointPos);
  v("lower", m.jointLower);
  v("upper", m.jointUpper);
  v("default_base_height", m.defaultBaseHeight);
  v.section("action", "");
  v("scale", m.actionScale);
  v("clip", m.actionClip);
  v("offset", m.defaultJointPos);
  v("squash", m.squash);
  v.section("observation", "");
  v.terms("terms", m.observations);
  v("size", m.numObs);
  v.section("timing", "");
  v("control_dt", m.controlDt);
  v("sim_dt", m.simDt);
  v("decimation", m.decimation);
  v("episode_length_s", m.episodeLengthS);
  v.section("actuator",
            "at every simulator step (sim_dt), q* held over control_dt: tau = clip(kp (q* - q) - "
            "kd qd, lo, hi), hi = min(saturation (1 - w), effort), lo = max(saturation (-1 - w), "
            "-effort), w = clip(qd, -vmax, vmax) / velocity_limit, vmax = velocity_limit (1 + "
            "effort / saturation); saturation or velocity_limit null: infinite (both null: a "
            "plain clip at +-effort); armature [kg m^2] added to every joint's inertia");
  v("kp", m.kp);
  v("kd", m.kd);
  v("effort", m.effort);
  v("saturation", m.saturation);
  v("velocity_limit", m.velocityLimit);
  v("armature", m.armature);
  v("source", m.actuatorSource);
  v.section("commands", "");
  v("enabled", m.commandsEnabled);
  v("lin_vel_x", m.linVelX);
  v("lin_vel_y", m.linVelY);
  v("ang_vel_z", m.angVelZ);
  v("resample_s", m.commandResampleS);
  v.section("simulation", "");
  v("contact", m.contactModel);
  v("kappa", m.kappa);
  v("friction", m.friction);
  v("solver_iterations", m.solverIterations);
  v.section("terminations", "");
  v("base_tilt_above", m.terminationTilt);
  v("base_height_below", m.terminationHeight);
  v.section("task", "");
  v("yaml", m.taskYaml);
  v.end();
}

// Shortest decimal that reads back to the same double; always with a '.' or an exponent sign so
// that YAML 1.1 readers (PyYAML) see a float.
std::string number(double x) {
  if (!std::isfinite(x)) throw std::runtime_error("metadata: non-finite number");
  char buf[64];
  for (int p = 15; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::string s = buf;
  const size_t e = s.find('e');
  if (s.find('.') == std::string::npos) {
    if (e == std::string::npos)
      s += ".0";
    else
      s.insert(e, ".0");
  }
  return s;
}

std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else
      o += c;
  }
  return o + "\"";
}

// JSON text of one value (YAML flow style reads it too).
std::string value(const std::string& v) {
  return quote(v);
}
std::string value(double v) {
  return number(v);
}
std::string value(int v) {
  return std::to_string(v);
}
std::string value(std::int64_t v) {
  return std::to_string(v);
}
std::string value(bool v) {
  return v ? "true" : "false";
}
template <class T>
std::string value(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + value(v[i]);
  return s + "]";
}
template <class T>
std::string value(const std::optional<T>& v) {
  return v ? value(*v) : "null";
}
std::string value(const std::map<std::string, std::vector<double>>& params) {
  std::string s = "{";
  for (const auto& [k, v] : params) s += (s.size() > 1 ? ", " : "") + quote(k) + ": " + value(v);
  return s + "}";
}
std::string value(const ObservationDefinition& d) {
  return "{\"formula\": " + quote(d.formula) + ", \"frame\": " + quote(d.frame) +
         ", \"units\": " + quote(d.units) + ", \"conventions\": " + quote(d.conventions) + "}";
}
std::string value(const std::optional<CurriculumFactors>& c) {
  if (!c) return "null";
  return "{\"commands\": " + number(c->commands) + ", \"reset_noise\": " + number(c->resetNoise) +
         ", \"episode_length\": " + number(c->episodeLength) +
         ", \"command_resample\": " + number(c->commandResample) + "}";
}

struct JsonWriter {
  std::ostringstream out;
  bool firstSection = true, firstKey = true;
  void section(const std::string& name, const std::string&) {
    if (!firstSection) out << "},\n";
    firstSection = false;
    firstKey = true;
    out << " " << quote(name) << ": {";
  }
  void key(const std::string& k) {
    out << (firstKey ? "" : ", ") << quote(k) << ": ";
    firstKey = false;
  }
  template <class T>
  void operator()(const std::string& k, const T& v) {
    key(k), out << value(v);
  }
  void terms(const std::string& k, const std::vector<ObservationTerm>& ts) {
    key(k);
    out << "[";
    for (size_t i = 0; i < ts.size(); ++i) {
      const auto& t = ts[i];
      out << (i ? ",\n   " : "") << "{\"name\": " << quote(t.name) << ", \"size\": " << t.size
          << ", \"scale\": " << number(t.scale) << ", \"noise\": " << number(t.noise)
          << ", \"params\": " << value(t.params) << ", \"definition\": " << value(t.definition)
          << "}";
    }
    out << "]";
  }
  void curriculum(const std::string& k, const std::optional<CurriculumFactors>& c) {
    key(k), out << value(c);
  }
  void end() { out << "}"; }
};

// Block YAML: the JSON values (flow style for lists), with a comment per section.
struct YamlWriter {
  std::ostringstream out;
  void section(const std::string& name, const std::string& doc) {
    if (!doc.empty()) out << "# " << doc << "\n";
    out << name << ":\n";
  }
  template <class T>
  void operator()(const std::string& k, const T& v) {
    out << "  " << k << ": " << value(v) << "\n";
  }
  void terms(const std::string& k, const std::vector<ObservationTerm>& ts) {
    out << "  " << k << ":\n";
    for (const auto& t : ts) {
      out << "    - name: " << t.name << "\n"
          << "      size: " << t.size << "\n"
          << "      scale: " << number(t.scale) << "\n"
          << "      noise: " << number(t.noise) << "\n"
          << "      params: " << value(t.params) << "\n"
          << "      definition:\n"
          << "        formula: " << quote(t.definition.formula) << "\n"
          << "        frame: " << quote(t.definition.frame) << "\n"
          << "        units: " << quote(t.definition.units) << "\n"
          << "        conventions: " << quote(t.definition.conventions) << "\n";
    }
  }
  void curriculum(const std::string& k, const std::optional<CurriculumFactors>& c) {
    out << "  " << k << ": " << value(c) << "\n";
  }
  void end() {}
};

// Every value as its JSON text, keyed section.key: two metadata are equal when these are.
struct Flattener {
  std::vector<std::pair<std::string, std::string>> items;
  std::string sec;
  void section(const std::string& name, const std::string&) { sec = name; }
  template <class T>
  void operator()(const std::string& k, const T& v) {
    items.emplace_back(sec + "." + k, value(v));
  }
  void terms(const std::string& k, const std::vector<ObservationTerm>& ts) {
    for (size_t i = 0; i < ts.size(); ++i) {
      const std::string p = sec + "." + k + "[" + std::to_string(i) + "].";
      items.emplace_back(p + "name", ts[i].name);
      items.emplace_back(p + "size", value(ts[i].size));
      items.emplace_back(p + "scale", value(ts[i].scale));
      items.emplace_back(p + "noise", value(ts[i].noise));
      items.emplace_back(p + "params", value(ts[i].params));
      items.emplace_back(p + "definition", value(ts[i].definition));
    }
    items.emplace_back(sec + "." + k + ".count", std::to_string(ts.size()));
  }
  void curriculum(const std::string& k, const std::optional<CurriculumFactors>& c) {
    items.emplace_back(sec + "." + k, value(c));
  }
  void end() {}
};

// Reads sections and keys in visiting order. Strict: a missing key, a value of the wrong type and
// (format 2) a key or section the format does not have are errors naming source, line and key.
struct Reader {
  Reader(const YAML::Node& r, const std::string& s, bool isStrict)
      : root(r), source(s), strict(isStrict) {}
  const YAML::Node root;
  const std::string& source;
  bool strict;
  YAML::Node sec;
  std::string secName;
  std::set<std::string> seen, sectionsSeen;

  [[noreturn]] void fail(const YAML::Node& n, const std::string& k, const std::string& msg) {
    const int line = n && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
    throw std::runtime_error(source + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                             secName + (k.empty() ? "" : "." + k) + ": " + msg);
  }
  void closeSection() {
    if (!strict || !sec) return;
    for (auto it = sec.begin(); it != sec.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (!seen.count(k))
        fail(it->first, k, "unknown key (not in format " + std::string(kMetadataFormat) + ")");
    }
  }
  void section(const std::string& name, const std::string&) {
    closeSection();
    secName = name;
    sectionsSeen.insert(name);
    seen.clear();
    sec = root[name];
    if (!sec || !sec.IsMap())
      throw std::runtime_error(source + ": missing section '" + name + "' (expected a map)");
  }
  YAML::Node get(const std::string& k) {
    seen.insert(k);
    const YAML::Node n = sec[k];
    if (!n) fail(sec, k, "missing key");
    return n;
  }
  template <class T>
  void read(const YAML::Node& n, const std::string& k, T& v, const char* expected) {
    try {
      v = n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, k, std::string("expected ") + expected + ", got '" + YAML::Dump(n) + "'");
    }
  }
  void operator()(const std::string& k, std::string& v) { read(get(k), k, v, "a string"); }
  void operator()(const std::string& k, double& v) { read(get(k), k, v, "a number"); }
  void operator()(const std::string& k, int& v) { read(get(k), k, v, "an integer"); }
  void operator()(const std::string& k, bool& v) { read(get(k), k, v, "true or false"); }
  void operator()(const std::string& k, std::vector<double>& v) {
    read(get(k), k, v, "a list of numbers");
  }
  void operator()(const std::string& k, std::vector<std::string>& v) {
    read(get(k), k, v, "a list of strings");
  }
  template <class T>
  void operator()(const std::string& k, std::optional<T>& v) {
    const YAML::Node n = get(k);
    if (n.IsNull()) {
      v.reset();
      return;
    }
    T x;
    read(n, k, x, "a value or null");
    v = x;
  }
  void terms(const std::string& k, std::vector<ObservationTerm>& ts) {
    const YAML::Node n = get(k);
    if (!n.IsSequence()) fail(n, k, "expected a list of terms");
    ts.clear();
    const char* expected =
        strict ? "each term needs name, size, scale, noise, params: {name: [values]} and "
                 "definition: {formula, frame, units, conventions}"
               : "each term needs name, size, scale (and params: {name: [values]})";
    for (const auto& e : n) {
      ObservationTerm t;
      try {
        t.name = e["name"].as<std::string>();
        t.size = e["size"].as<int>();
        t.scale = e["scale"].as<double>();
        if (e["params"])
          for (auto it = e["params"].begin(); it != e["params"].end(); ++it)
            t.params[it->first.as<std::string>()] = it->second.as<std::vector<double>>();
        if (strict) {
          t.noise = e["noise"].as<double>();
          const YAML::Node d = e["definition"];
          t.definition = {d["formula"].as<std::string>(), d["frame"].as<std::string>(),
                          d["units"].as<std::string>(), d["conventions"].as<std::string>()};
        }
      } catch (const YAML::Exception&) {
        fail(e, k, expected);
      }
      ts.push_back(t);
    }
  }
  void curriculum(const std::string& k, std::optional<CurriculumFactors>& c) {
    const YAML::Node n = get(k);
    if (n.IsNull()) {
      c.reset();
      return;
    }
    try {
      // command_resample came after the first format-2 files: absent means 1.
      c = CurriculumFactors{n["commands"].as<double>(), n["reset_noise"].as<double>(),
                            n["episode_length"].as<double>(),
                            n["command_resample"] ? n["command_resample"].as<double>() : 1.0};
    } catch (const YAML::Exception&) {
      fail(n, k,
           "expected null or {commands, reset_noise, episode_length, command_resample} (numbers)");
    }
  }
  void end() {
    closeSection();
    if (!strict) return;
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string name = it->first.as<std::string>();
      if (!sectionsSeen.count(name)) {
        secName = name;
        fail(it->first, "", "unknown section (not in format " + std::string(kMetadataFormat) + ")");
      }
    }
  }
};

void checkSizes(const PolicyMetadata& m, const std::string& source) {
  const size_t nj = m.jointNames.size();
  auto checkSize = [&](const std::vector<double>& v, const char* what) {
    if (v.size() != nj)
      throw std::runtime_error(source + ": " + what + " has " + std::to_string(v.size()) +
                               " entries for " + std::to_string(nj) + " joints");
  };
  checkSize(m.defaultJointPos, "joints.default_pos");
  checkSize(m.jointLower, "joints.lower");
  checkSize(m.jointUpper, "joints.upper");
  checkSize(m.effort, "actuator.effort");
  int total = 0;
  for (const auto& t : m.observations) total += t.size;
  if (total != m.numObs)
    throw std::runtime_error(source + ": observation term sizes sum to " + std::to_string(total) +
                             ", observation.size is " + std::to_string(m.numObs));
  if (m.footRadius.size() != m.feet.size())
    throw std::runtime_error(source + ": robot.foot_radius has " +
                             std::to_string(m.footRadius.size()) + " entries for " +
                             std::to_string(m.feet.size()) + " feet");
  if (m.gravity.size() != 3)
    throw std::runtime_error(source + ": robot.gravity has " + std::to_string(m.gravity.size()) +
                             " entries, expected 3");
  for (const auto* r : {&m.frictionRange, &m.addedMassRange, &m.pushIntervalS})
    if (*r && (*r)->size() != 2)
      throw std::runtime_error(source + ": randomization ranges are [lo, hi] or null");
}

// Format 1 wrote "no limit" as 1e10 and "no termination" as 0.
void upgradeV1Values(PolicyMetadata& m) {
  for (auto* x : {&m.saturation, &m.velocityLimit})
    if (*x && **x >= 1e9) x->reset();
  for (auto* x : {&m.terminationTilt, &m.terminationHeight})
    if (*x && **x == 0) x->reset();
}

}  // namespace

int PolicyMetadata::jointIndex(const std::string& name) const {
  for (int i = 0; i < numJoints(); ++i)
    if (jointNames[i] == name) return i;
  return -1;
}

std::string toJson(const PolicyMetadata& m) {
  JsonWriter w;
  w.out << "{";
  visitMetadata(m, w);
  w.out << "}";
  return w.out.str();
}

std::string toYaml(const PolicyMetadata& m) {
  YamlWriter w;
  w.out << "# Exported diffloco policy: metadata (the same as the TorchScript file's "
           "metadata_json and the ONNX file's metadata_props). docs/deploy.md explains every "
           "section.\n";
  visitMetadata(m, w);
  return w.out.str();
}

PolicyMetadata parsePolicyMetadata(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(source + ": not valid JSON/YAML metadata: " + e.what());
  }
  if (!root.IsMap()) throw std::runtime_error(source + ": metadata is not a map");
  std::string format;
  try {
    format = root["format"]["format"].as<std::string>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(source + ": format.format: missing (expected '" +
                             std::string(kMetadataFormat) + "')");
  }
  PolicyMetadata m;
  try {
    if (format == kMetadataFormat) {
      Reader r(root, source, true);
      visitMetadata(m, r);
    } else if (format == kMetadataFormatV1) {
      Reader r(root, source, false);  // format 1: no unknown-key checks
      visitMetadataV1(m, r);
      upgradeV1Values(m);
    } else {
      throw std::runtime_error(source + ": format.format: '" + format + "', expected '" +
                               kMetadataFormat + "' (or the older '" + kMetadataFormatV1 + "')");
    }
  } catch (const YAML::Exception& e) {
    // What the reader's own checks do not name (a key that is not text, a node of an unexpected
    // kind deep inside a section): yaml-cpp's message, with the file and line.
    throw std::runtime_error(source +
                             (e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1)) +
                             ": metadata: " + e.msg);
  }
  checkSizes(m, source);
  return m;
}

std::vector<std::string> metadataDifferences(const PolicyMetadata& a, const PolicyMetadata& b) {
  Flattener fa, fb;
  visitMetadata(a, fa);
  visitMetadata(b, fb);
  std::vector<std::string> diff;
  const size_t n = std::max(fa.items.size(), fb.items.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= fa.items.size() || i >= fb.items.size()) {
      diff.push_back((i < fa.items.size() ? fa.items[i] : fb.items[i]).first);
    } else if (fa.items[i] != fb.items[i]) {
      diff.push_back(fa.items[i].first);
    }
  }
  return diff;
}

}  // namespace diffloco::deploy
