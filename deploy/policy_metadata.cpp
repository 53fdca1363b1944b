#include "deploy/policy_metadata.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace diffloco::deploy {

namespace {

// Every field once: section, key, value. The writers and the reader are visitors.
template <class V, class M>
void visitMetadata(M& m, V& v) {
  v.section("format", "");
  v("format", m.format);
  v("diffloco_version", m.difflocoVersion);
  v("git_commit", m.gitCommit);
  v("task", m.task);
  v("robot", m.robot);
  v("algorithm", m.algorithm);
  v("source", m.source);
  v.section("joints", "joints in the policy's action and observation order");
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
  v.section("observation", "terms in order, each multiplied by its scale");
  v.terms("terms", m.observations);
  v("size", m.numObs);
  v.section("timing", "control_dt: policy period, sim_dt: simulator step [s]");
  v("control_dt", m.controlDt);
  v("sim_dt", m.simDt);
  v("decimation", m.decimation);
  v("episode_length_s", m.episodeLengthS);
  v.section("actuator",
            "tau = clip(kp (q* - q) - kd qd, max(saturation (-1 - qd / velocity_limit), "
            "-effort), min(saturation (1 - qd / velocity_limit), effort))");
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
  v.section("simulation", "contact model trained with");
  v("contact", m.contactModel);
  v("kappa", m.kappa);
  v("friction", m.friction);
  v("solver_iterations", m.solverIterations);
  v.section("terminations", "trained with (0: none); the controller's default safety limits");
  v("base_tilt_above", m.terminationTilt);
  v("base_height_below", m.terminationHeight);
  v.section("task", "the task as trained (YAML text, diffloco's configs/tasks format)");
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
  void operator()(const std::string& k, const std::string& v) { key(k), out << quote(v); }
  void operator()(const std::string& k, const double& v) { key(k), out << number(v); }
  void operator()(const std::string& k, const int& v) { key(k), out << v; }
  void operator()(const std::string& k, const bool& v) { key(k), out << (v ? "true" : "false"); }
  void operator()(const std::string& k, const std::vector<double>& v) {
    key(k);
    out << "[";
    for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << number(v[i]);
    out << "]";
  }
  void operator()(const std::string& k, const std::vector<std::string>& v) {
    key(k);
    out << "[";
    for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << quote(v[i]);
    out << "]";
  }
  void terms(const std::string& k, const std::vector<ObservationTerm>& ts) {
    key(k);
    out << "[";
    for (size_t i = 0; i < ts.size(); ++i) {
      const auto& t = ts[i];
      out << (i ? ",\n   " : "") << "{\"name\": " << quote(t.name) << ", \"size\": " << t.size
          << ", \"scale\": " << number(t.scale) << ", \"params\": {";
      bool first = true;
      for (const auto& [pk, pv] : t.params) {
        out << (first ? "" : ", ") << quote(pk) << ": [";
        for (size_t j = 0; j < pv.size(); ++j) out << (j ? ", " : "") << number(pv[j]);
        out << "]";
        first = false;
      }
      out << "}}";
    }
    out << "]";
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
  void operator()(const std::string& k, const std::string& v) {
    out << "  " << k << ": " << quote(v) << "\n";
  }
  template <class T>
  void operator()(const std::string& k, const T& v) {
    JsonWriter j;  // writes "k": value
    j(k, v);
    out << "  " << k << ": " << j.out.str().substr(quote(k).size() + 2) << "\n";
  }
  void terms(const std::string& k, const std::vector<ObservationTerm>& ts) {
    out << "  " << k << ":\n";
    for (const auto& t : ts) {
      out << "    - {name: " << t.name << ", size: " << t.size << ", scale: " << number(t.scale);
      if (!t.params.empty()) {
        out << ", params: {";
        bool first = true;
        for (const auto& [pk, pv] : t.params) {
          out << (first ? "" : ", ") << pk << ": [";
          for (size_t j = 0; j < pv.size(); ++j) out << (j ? ", " : "") << number(pv[j]);
          out << "]";
          first = false;
        }
        out << "}";
      }
      out << "}\n";
    }
  }
  void end() {}
};

struct Reader {
  const YAML::Node root;
  const std::string& source;
  YAML::Node sec;
  std::string secName;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& k, const std::string& msg) {
    const int line = n && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
    throw std::runtime_error(source + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                             secName + "." + k + ": " + msg);
  }
  void section(const std::string& name, const std::string&) {
    secName = name;
    sec = root[name];
    if (!sec || !sec.IsMap()) throw std::runtime_error(source + ": missing section '" + name + "'");
  }
  YAML::Node get(const std::string& k) {
    const YAML::Node n = sec[k];
    if (!n) fail(sec, k, "missing key");
    return n;
  }
  template <class T>
  void operator()(const std::string& k, T& v) {
    const YAML::Node n = get(k);
    try {
      v = n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, k, "cannot read '" + YAML::Dump(n) + "'");
    }
  }
  void terms(const std::string& k, std::vector<ObservationTerm>& ts) {
    const YAML::Node n = get(k);
    if (!n.IsSequence()) fail(n, k, "expected a list of terms");
    ts.clear();
    for (const auto& e : n) {
      ObservationTerm t;
      try {
        t.name = e["name"].as<std::string>();
        t.size = e["size"].as<int>();
        t.scale = e["scale"].as<double>();
        if (e["params"])
          for (auto it = e["params"].begin(); it != e["params"].end(); ++it)
            t.params[it->first.as<std::string>()] = it->second.as<std::vector<double>>();
      } catch (const YAML::Exception&) {
        fail(e, k, "each term needs name, size, scale (and params: {name: [values]})");
      }
      ts.push_back(t);
    }
  }
  void end() {}
};

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
           "metadata_json).\n";
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
  PolicyMetadata m;
  Reader r{root, source, {}, {}};
  visitMetadata(m, r);
  if (m.format != "diffloco-exported-policy-1")
    throw std::runtime_error(source + ": format '" + m.format +
                             "' is not diffloco-exported-policy-1");
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
  return m;
}

}  // namespace diffloco::deploy
