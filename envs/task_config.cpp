#include "envs/task_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "envs/did_you_mean.h"
#include "io/file_status.h"
#include "robots/robot.h"
#include "sim/adaptive.h"

namespace diffloco::envs {
namespace fs = std::filesystem;

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string didYouMean(const std::string& key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t bestD = std::max<std::size_t>(2, key.size() / 3) + 1;  // close matches only
  for (const auto& k : known) {
    const std::size_t d = editDistance(key, k);
    if (d < bestD) bestD = d, best = k;
  }
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  return (best.empty() ? "" : " (did you mean '" + best + "'?)") + std::string("; known: ") + all;
}

namespace {

// "file:line" of a YAML mark, or the file alone for a node without one (built in memory, e.g. by
// a --set): never "file:0".
std::string located(const std::string& file, const YAML::Mark& m) {
  return m.is_null() ? file : file + ":" + std::to_string(m.line + 1);
}

// Reads one YAML map strictly: every key must be read (get/sub) before finish().
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string path, const std::string& file)
      : node_(node), path_(std::move(path)), file_(file) {
    if (node && !node.IsMap() && !node.IsNull()) fail(node, "expected a map");
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& msg) const {
    throw std::runtime_error(located(file_, at.Mark()) + ": " +
                             (path_.empty() ? "" : path_ + ": ") + msg);
  }
  std::string keyPath(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  bool has(const std::string& key) {
    remember(key);
    return node_ && node_.IsMap() && node_[key];
  }

  YAML::Node sub(const std::string& key) {
    remember(key);
    return node_ && node_.IsMap() ? node_[key] : YAML::Node(YAML::NodeType::Undefined);
  }

  template <class T>
  void get(const std::string& key, T& out) {
    const YAML::Node n = sub(key);
    if (!n) return;
    try {
      out = n.as<T>();
    } catch (const YAML::Exception&) {
      throw std::runtime_error(located(file_, n.Mark()) + ": " + keyPath(key) + ": cannot read '" +
                               YAML::Dump(n) + "' as " + typeName<T>());
    }
  }

  void getRange(const std::string& key, Range& r) {
    const YAML::Node n = sub(key);
    if (!n) return;
    r = parseRange(n, keyPath(key), file_);
  }

  void getPositive(const std::string& key, double& out) {
    get(key, out);
    if (has(key) && !(out > 0)) fail(node_[key], keyPath(key) + " must be > 0");
  }

  // A value in [lo, hi]: the bounds keep every loop the value drives (sub-steps, solver sweeps)
  // to a validated size instead of hanging on an absurd one.
  template <class T>
  void getInRange(const std::string& key, T& out, double lo, double hi) {
    get(key, out);
    if (has(key) && !(out >= lo && out <= hi))
      fail(node_[key], keyPath(key) + " is " + YAML::Dump(node_[key]) + ": must be in [" +
                           fmtBound(lo) + ", " + fmtBound(hi) + "]");
  }
  static std::string fmtBound(double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  }

  // Throws for the first key that was not read.
  void finish() const {
    if (!node_ || !node_.IsMap()) return;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (std::find(known_.begin(), known_.end(), k) == known_.end())
        throw std::runtime_error(located(file_, it->first.Mark()) + ": unknown key '" + keyPath(k) +
                                 "'" + didYouMean(k, known_));
    }
  }

  static Range parseRange(const YAML::Node& n, const std::string& path, const std::string& file) {
    Range r;
    try {
      if (n.IsScalar()) {
        r.lo = r.hi = n.as<double>();
      } else if (n.IsSequence() && n.size() == 2) {
        r.lo = n[0].as<double>();
        r.hi = n[1].as<double>();
      } else {
        throw YAML::Exception(n.Mark(), "");
      }
    } catch (const YAML::Exception&) {
      throw std::runtime_error(located(file, n.Mark()) + ": " + path +
                               ": expected [low, high] or a number");
    }
    if (r.lo > r.hi)
      throw std::runtime_error(located(file, n.Mark()) + ": " + path + ": low > high");
    return r;
  }

 private:
  template <class T>
  static const char* typeName() {
    if constexpr (std::is_same_v<T, double>) return "a number";
    if constexpr (std::is_same_v<T, int>) return "an integer";
    if constexpr (std::is_same_v<T, bool>) return "true/false";
    return "a string";
  }

  // A key the reader knows (once: a key both tested and read is listed once in messages).
  void remember(const std::string& key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  }

  const YAML::Node node_;  // const: lookups of absent keys must not insert them
  std::string path_;
  const std::string& file_;
  std::vector<std::string> known_;
};

// A term list: a map from term name to its parameters (`{}` for none), in YAML order.
std::vector<TermConfig> parseTerms(const YAML::Node& node, TermKind kind, const std::string& path,
                                   const std::string& file) {
  std::vector<TermConfig> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsMap())
    throw std::runtime_error(located(file, node.Mark()) + ": " + path +
                             ": expected a map of term names to their parameters");
  std::vector<std::string> names;
  for (const auto& t : termRegistry(kind)) names.push_back(t.name);
  for (auto it = node.begin(); it != node.end(); ++it) {
    TermConfig tc;
    tc.name = it->first.as<std::string>();
    tc.def = findTerm(kind, tc.name);
    if (!tc.def)
      throw std::runtime_error(located(file, it->first.Mark()) + ": unknown " + toString(kind) +
                               " term '" + tc.name + "' in " + path + didYouMean(tc.name, names));
    for (const auto& prev : out)
      if (prev.name == tc.name)
        throw std::runtime_error(file + ": " + path + ": term '" + tc.name + "' given twice");
    MapReader r(it->second, path + "." + tc.name, file);
    if (kind == TermKind::Reward) r.get("weight", tc.weight);
    if (kind == TermKind::Observation) {
      r.get("scale", tc.scale);
      r.get("noise", tc.noise);
      if (tc.noise < 0) r.fail(it->second, "noise must be >= 0");
    }
    std::map<std::string, std::vector<double>> values;
    for (const auto& p : tc.def->params) {
      std::vector<double> v = p.value;
      const YAML::Node n = r.sub(p.name);
      if (n) {
        try {
          v = n.IsSequence() ? n.as<std::vector<double>>() : std::vector<double>{n.as<double>()};
        } catch (const YAML::Exception&) {
          r.fail(n, r.keyPath(p.name) + ": expected a number or a list of numbers");
        }
        if (v.size() != p.value.size())
          r.fail(n, r.keyPath(p.name) + ": expected " + std::to_string(p.value.size()) +
                        " value(s), got " + std::to_string(v.size()));
      }
      values[p.name] = v;
    }
    tc.params = TermParams(std::move(values));
    r.finish();
    out.push_back(std::move(tc));
  }
  return out;
}

}  // namespace

int TaskConfig::decimation() const {
  const double d = envDt / sim.dt;
  const int n = static_cast<int>(std::lround(d));
  if (n < 1 || std::abs(d - n) > 1e-9 * d)
    throw std::runtime_error(source + ": env_dt (" + std::to_string(envDt) +
                             ") must be a multiple of sim.dt (" + std::to_string(sim.dt) + ")");
  if (n > 1000)
    throw std::runtime_error(source + ": env_dt / sim.dt = " + std::to_string(n) +
                             " simulator steps per env step: at most 1000");
  return n;
}

int TaskConfig::maxEpisodeSteps() const {
  return std::max(1, static_cast<int>(std::lround(episodeLengthS / envDt)));
}

void TaskConfig::freezeRandomization() {
  randomization.friction = false;
  randomization.addedMass = false;
  randomization.pushes = false;
  randomization.observationNoise = false;
  commands.resampleS = 0;
}

void inlineActuatorFile(YAML::Node& task, const std::string& source) {
  if (!task.IsMap() || !task["actuator"] || !task["actuator"].IsMap()) return;
  YAML::Node act = task["actuator"];
  const YAML::Node f = act["file"];
  if (!f) return;
  if (!f.IsScalar())
    throw std::runtime_error(located(source, f.Mark()) +
                             ": actuator.file: expected a path to a fitted actuator .yaml");
  fs::path path = f.Scalar();
  if (path.is_relative()) {
    const fs::path src = source;
    if (io::isRegularFile(src)) path = src.parent_path() / path;
  }
  if (!io::exists(path))
    throw std::runtime_error(located(source, f.Mark()) + ": actuator.file: " + path.string() +
                             " not found");
  YAML::Node fitted;
  try {
    fitted = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  if (!fitted.IsMap()) throw std::runtime_error(path.string() + ": expected a map");
  static const std::vector<std::string> keys{
      "kp", "kd", "effort", "saturation", "velocity_limit", "armature"};
  for (auto it = fitted.begin(); it != fitted.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    if (k == "fit") continue;
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      throw std::runtime_error(located(path.string(), it->first.Mark()) + ": unknown key '" + k +
                               "'" + didYouMean(k, keys));
    double v = 0;
    try {
      v = it->second.as<double>();
    } catch (const YAML::Exception&) {
      throw std::runtime_error(located(path.string(), it->second.Mark()) + ": " + k +
                               ": expected a number");
    }
    act[k] = v;  // the file wins over the section's own keys (the task's defaults)
  }
  act.remove("file");
  act["source"] = fs::absolute(path).lexically_normal().string();
}

namespace {

// The task with a fitted actuator file inlined. Only then a copy (YAML::Clone drops the line
// marks that error messages use; the callers inline in place first where they can).
YAML::Node withActuatorFile(const YAML::Node& task, const std::string& source) {
  const bool hasFile =
      task.IsMap() && task["actuator"] && task["actuator"].IsMap() && task["actuator"]["file"];
  if (!hasFile) return task;
  YAML::Node copy = YAML::Clone(task);
  inlineActuatorFile(copy, source);
  return copy;
}

// The strict parser; `partial` reads a robot's task_defaults (no robot, terms optional, the time
// steps checked only where the task has both).
TaskConfig parseTask(const YAML::Node& taskNode, const std::string& source, bool partial) {
  const YAML::Node node = withActuatorFile(taskNode, source);
  TaskConfig t;
  t.source = source;
  t.name = fs::path(source).stem().string();
  MapReader top(node, "", source);
  if (!node || !node.IsMap()) throw std::runtime_error(source + ": expected a map at the top");
  if (partial) {
    for (const char* k : {"robot", "name"})
      if (node[k]) top.fail(node[k], std::string("'") + k + "' cannot be a robot's task default");
  } else {
    if (!top.has("robot")) throw std::runtime_error(source + ": missing key 'robot'");
    top.get("robot", t.robot);
  }
  // An inline task (a run's resolved config) keeps its own name here; a task file is named by
  // its stem.
  if (top.has("name")) top.get("name", t.name);
  top.getInRange("episode_length_s", t.episodeLengthS, 1e-3, 1e5);
  top.getInRange("env_dt", t.envDt, 1e-5, 1.0);

  {
    MapReader r(top.sub("sim"), "sim", source);
    auto& c = t.sim.contact;
    r.getInRange("dt", t.sim.dt, 1e-5, 0.1);
    std::string model = sim::toString(c.model);
    r.get("contact", model);
    try {
      c.model = sim::parseContactModel(model);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(source + ": sim.contact: " + e.what());
    }
    r.get("friction", c.mu);
    r.getPositive("kappa", c.kappa);
    r.getPositive("cutoff", c.cutoff);
    r.getInRange("iterations", c.iterations, 1, 10000);
    r.get("soft_kp", c.softKp);
    r.get("soft_kd", c.softKd);
    r.get("soft_kf", c.softKf);
    r.getInRange("soft_substeps", c.softSubsteps, 1, 1000);
    // Time integration of the soft model (sim/adaptive.h): fixed sub-steps or Dormand-Prince 5(4)
    // with a PI step-size controller; the tolerances and the cap on steps per env step.
    if (r.has("integrator")) {
      std::string integrator = sim::toString(c.integrator);
      r.get("integrator", integrator);
      try {
        c.integrator = sim::parseIntegrator(integrator);
      } catch (const std::invalid_argument& e) {
        r.fail(top.sub("sim")["integrator"], std::string("sim.integrator: ") + e.what());
      }
    }
    r.getPositive("rtol", c.adaptive.rtol);
    r.getPositive("atol", c.adaptive.atol);
    r.getInRange("max_substeps", c.adaptive.maxSteps, 1, 1e6);
    if (c.adaptive.rtol >= 1) r.fail(top.sub("sim")["rtol"], "sim.rtol must be < 1");
    if (c.integrator == sim::Integrator::Adaptive && c.model != sim::ContactModel::Soft)
      r.fail(top.sub("sim")["integrator"],
             std::string("sim.integrator: adaptive integrates the soft contact model only (contact "
                         "is ") +
                 sim::toString(c.model) + ")");
    r.finish();
  }
  {
    MapReader r(top.sub("actuator"), "actuator", source);
    auto& a = t.sim.actuator;
    a.effort = 0;  // the robot's torque limit unless given
    r.get("kp", a.kp);
    r.get("kd", a.kd);
    r.get("effort", a.effort);
    r.get("saturation", a.saturation);
    r.get("velocity_limit", a.velocityLimit);
    r.get("armature", t.armature);
    r.get("source", t.actuatorSource);  // written by inlineActuatorFile
    r.finish();
  }
  {
    MapReader r(top.sub("action"), "action", source);
    r.get("scale", t.actionScale);
    r.getPositive("clip", t.actionClip);
    r.finish();
  }
  if (top.has("commands")) {
    MapReader r(top.sub("commands"), "commands", source);
    t.commands.enabled = true;
    r.getRange("lin_vel_x", t.commands.linVelX);
    r.getRange("lin_vel_y", t.commands.linVelY);
    r.getRange("ang_vel_z", t.commands.angVelZ);
    r.get("resample_s", t.commands.resampleS);
    r.get("standing_fraction", t.commands.standingFraction);
    r.finish();
  }
  t.observations =
      parseTerms(top.sub("observations"), TermKind::Observation, "observations", source);
  t.rewards = parseTerms(top.sub("rewards"), TermKind::Reward, "rewards", source);
  t.terminations =
      parseTerms(top.sub("terminations"), TermKind::Termination, "terminations", source);
  if (t.observations.empty() && !partial)
    throw std::runtime_error(source + ": no observation terms");
  if (t.rewards.empty() && !partial) throw std::runtime_error(source + ": no reward terms");
  {
    MapReader r(top.sub("randomization"), "randomization", source);
    auto& d = t.randomization;
    d.friction = r.has("friction");
    r.getRange("friction", d.frictionRange);
    d.addedMass = r.has("added_base_mass");
    r.getRange("added_base_mass", d.addedMassRange);
    d.pushes = r.has("push_interval_s");
    r.getRange("push_interval_s", d.pushIntervalS);
    r.get("push_velocity", d.pushVelocity);
    r.get("observation_noise", d.observationNoise);
    if (d.pushes && !(d.pushIntervalS.lo > 0))
      r.fail(r.sub("push_interval_s"), "randomization.push_interval_s must be > 0");
    r.finish();
  }
  {
    MapReader r(top.sub("reset"), "reset", source);
    auto& s = t.reset;
    r.get("joint_pos_noise", s.jointPosNoise);
    r.get("joint_vel_noise", s.jointVelNoise);
    r.get("base_pos_noise", s.basePosNoise);
    r.get("base_rot_noise", s.baseRotNoise);
    r.get("random_yaw", s.randomYaw);
    r.get("base_lin_vel_noise", s.baseLinVelNoise);
    r.get("base_ang_vel_noise", s.baseAngVelNoise);
    r.get("foot_clearance", s.footClearance);
    r.finish();
  }
  top.finish();
  if (!partial) t.decimation();  // validates the time steps
  return t;
}

// Lookups through a const node insert nothing (a non-const operator[] adds the key).
const YAML::Node& constNode(const YAML::Node& n) {
  return n;
}

bool hasKey(const YAML::Node& map, const std::string& key) {
  return map.IsMap() && map[key];
}

// Copies into `dst` every key of `src` that dst lacks, recursing into maps both have. In the term
// sections only the parameters of dst's own terms.
void fillMissing(YAML::Node dst, const YAML::Node& src, bool termSection) {
  for (auto it = src.begin(); it != src.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const bool present = hasKey(constNode(dst), key);
    if (termSection) {
      if (!present) continue;  // a term the task does not use
      YAML::Node term = dst[key];
      if (term.IsNull()) term = YAML::Node(YAML::NodeType::Map);
      if (term.IsMap() && it->second.IsMap()) fillMissing(term, it->second, false);
      dst[key] = term;
    } else if (!present) {
      dst[key] = it->second;  // keeps the robot file's line marks for messages
    } else if (it->second.IsMap() && constNode(dst)[key].IsMap()) {
      fillMissing(dst[key], it->second,
                  key == "observations" || key == "rewards" || key == "terminations");
    }
  }
}

}  // namespace

TaskConfig parseTaskConfig(const YAML::Node& taskNode, const std::string& source) {
  return parseTask(taskNode, source, false);
}

void inlineRobotDefaults(YAML::Node& task, const std::string& source) {
  const YAML::Node& ctask = task;
  if (!task.IsMap() || !ctask["robot"] || !ctask["robot"].IsScalar()) return;  // parser says it
  const std::string path = robotFilePath(ctask["robot"].Scalar());
  if (!io::isRegularFile(path)) return;  // loadRobot reports it
  YAML::Node robot;
  try {
    robot = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  const YAML::Node& crobot = robot;
  if (!robot.IsMap() || !crobot["task_defaults"]) return;
  const YAML::Node defaults = crobot["task_defaults"];
  try {
    parseTask(defaults, path, true);  // strict, naming the robot file and its lines
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (in task_defaults, filling task " + source +
                             ")");
  }
  fillMissing(task, defaults, false);
}

TaskConfig loadTaskConfig(const std::string& nameOrPath) {
  fs::path path = nameOrPath;
  if (path.extension() != ".yaml") path = fs::path(configDir()) / "tasks" / (nameOrPath + ".yaml");
  if (!io::exists(path))
    throw std::runtime_error(path.string() + ": task file not found (expected a task name from " +
                             configDir() + "/tasks or a path to a .yaml)");
  YAML::Node y;
  try {
    y = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  inlineRobotDefaults(y, path.string());
  inlineActuatorFile(y, path.string());
  return parseTaskConfig(y, path.string());
}

}  // namespace diffloco::envs
