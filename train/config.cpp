#include "train/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/file_status.h"
#include "robots/robot.h"

namespace diffloco::train {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& msg) {
  throw std::runtime_error(msg);
}

std::string fmtNumber(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  for (int p = 6; p <= 17; ++p) {  // shortest text that reads back exactly
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string quoted(const std::string& s) {
  YAML::Emitter e;
  e << s;
  return e.c_str();
}

std::string shortText(const YAML::Node& n) {
  std::string s = n.IsScalar() ? n.Scalar() : YAML::Dump(n);
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace

std::string printableArgument(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// --set arguments (and the keys of a task that extends another): where each one landed, for
// messages.
struct Override {
  std::string path;    // a.b.c
  std::string text;    // as typed
  std::string origin;  // how messages name it; empty: "--set <text>"
  YAML::Node value;

  std::string label() const { return origin.empty() ? "--set " + text : origin; }
};

struct Source {
  std::string file;
  std::vector<Override> sets;

  // "file:line" of a node, or the --set argument that produced it.
  std::string where(const std::string& path, const YAML::Node& n) const {
    for (const auto& o : sets)
      if (o.path == path || path.rfind(o.path + ".", 0) == 0 || o.path.rfind(path + ".", 0) == 0)
        return o.label();
    if (!n || n.Mark().is_null()) return file;
    return file + ":" + std::to_string(n.Mark().line + 1);
  }
};

Override parseSet(const std::string& s) {
  Override o;
  o.text = printableArgument(s);  // what messages show
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    fail("--set " + o.text + ": expected key.path=value (e.g. --set shac.iterations=500)");
  o.path = s.substr(0, eq);
  const bool control = std::any_of(o.path.begin(), o.path.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  std::string part;
  std::istringstream parts(o.path);
  while (std::getline(parts, part, '.'))
    if (control || part.empty() || part.find_first_of(" \t[]{}:,") != std::string::npos)
      fail("--set " + o.text + ": '" + printableArgument(o.path) +
           "' is not a key path (keys separated by '.')");
  if (o.path.back() == '.') fail("--set " + o.text + ": '" + o.path + "' ends with '.'");
  try {
    o.value = YAML::Load(s.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    fail("--set " + o.text + ": the value is not valid YAML (" + e.msg + ")");
  }
  return o;
}

std::vector<std::string> splitPath(const std::string& p) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream parts(p);
  while (std::getline(parts, part, '.')) out.push_back(part);
  return out;
}

// Writes o.value at keys[from..] below root, creating sections as needed.
void applySet(YAML::Node root, const Override& o, size_t from) {
  const auto keys = splitPath(o.path);
  YAML::Node cur;
  cur.reset(root);
  std::string at;
  for (size_t i = from; i + 1 < keys.size(); ++i) {
    at += (at.empty() ? "" : ".") + keys[i];
    YAML::Node next = cur[keys[i]];
    if (next && !next.IsMap() && !next.IsNull())
      fail("--set " + o.text + ": '" + at + "' is a value, not a section");
    if (!next || next.IsNull()) cur[keys[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node child = cur[keys[i]];
    cur.reset(child);
  }
  cur[keys.back()] = o.value;
}

// Strict reader of one YAML map into a struct with visit(): every key must be a field.
class Reader : public Checks {
 public:
  Reader(const YAML::Node& node, std::string path, const Source& src)
      : node_(node), path_(std::move(path)), src_(src) {
    if (node_ && !node_.IsMap() && !node_.IsNull())
      fail(src_.where(path_, node_) + ": " + path_ +
           ": expected a section (key: value lines), got '" + shortText(node_) + "'");
  }

  template <class T>
  void field(const char* key, T& value, const char* /*doc*/, const Check& check = Check()) {
    const YAML::Node n = take(key);
    if (n) read(n, keyPath(key), value, check);
  }

  template <class S>
  void section(const char* key, S& s) {
    Reader r(take(key), keyPath(key), src_);
    s.visit(r);
    r.finish();
  }

  // A map from names the user chooses to sections (curriculum.rewards.<term>).
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char* /*doc*/) {
    const YAML::Node n = take(key);
    const std::string p = keyPath(key);
    m.clear();
    if (!n || n.IsNull()) return;
    if (!n.IsMap()) bad(n, p, "expected a map of names to sections, got '" + shortText(n) + "'");
    for (auto it = n.begin(); it != n.end(); ++it) {
      Reader r(it->second, p + "." + it->first.as<std::string>(), src_);
      S s;
      s.visit(r);
      r.finish();
      m[it->first.as<std::string>()] = s;
    }
  }

  // Marks `key` as known and returns its node (undefined when absent).
  YAML::Node take(const std::string& key) {
    known_.push_back(key);
    if (!node_ || !node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    return node_[key];
  }

  // The key node of `key` (for its line), or an undefined node.
  YAML::Node keyNode(const std::string& key) const {
    if (node_ && node_.IsMap())
      for (auto it = node_.begin(); it != node_.end(); ++it)
        if (it->first.as<std::string>() == key) return it->first;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  void finish() const {
    if (!node_ || !node_.IsMap()) return;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (std::find(known_.begin(), known_.end(), k) != known_.end()) continue;
      const std::string p = keyPath(k);
      fail(src_.where(p, it->first) + ": unknown key '" + p + "'" + didYouMean(k, known_));
    }
  }

  std::string keyPath(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  const Source& source() const { return src_; }

 private:
  [[noreturn]] void bad(const YAML::Node& n, const std::string& path,
                        const std::string& what) const {
    fail(src_.where(path, n) + ": " + path + ": " + what);
  }
  template <class T>
  T as(const YAML::Node& n, const std::string& path, const char* type) const {
    if (!n.IsScalar())
      bad(n, path, std::string("expected ") + type + ", got '" + shortText(n) + "'");
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      bad(n, path, std::string("expected ") + type + ", got '" + n.Scalar() + "'");
    }
  }
  void range(const YAML::Node& n, const std::string& path, double x, const Check& c) const {
    if (!c.accepts(x)) bad(n, path, fmtNumber(x) + " is out of range: " + c.describe());
  }

  void read(const YAML::Node& n, const std::string& p, double& v, const Check& c) {
    v = as<double>(n, p, "a number");
    if (!std::isfinite(v)) bad(n, p, "expected a finite number, got '" + n.Scalar() + "'");
    range(n, p, v, c);
  }
  void read(const YAML::Node& n, const std::string& p, int& v, const Check& c) {
    v = as<int>(n, p, "an integer");
    range(n, p, v, c);
  }
  void read(const YAML::Node& n, const std::string& p, std::int64_t& v, const Check& c) {
    v = as<long long>(n, p, "an integer");
    range(n, p, static_cast<double>(v), c);
  }
  void read(const YAML::Node& n, const std::string& p, bool& v, const Check&) {
    v = as<bool>(n, p, "true or false");
  }
  void read(const YAML::Node& n, const std::string& p, std::string& v, const Check& c) {
    v = as<std::string>(n, p, "a string");
    if (!c.choices.empty() && std::find(c.choices.begin(), c.choices.end(), v) == c.choices.end())
      bad(
          n, p, "'" + v + "' is not one of: " + [&] {
            std::string s;
            for (const auto& k : c.choices) s += (s.empty() ? "" : ", ") + k;
            return s;
          }() + didYouMean(v, c.choices));
  }
  template <class T>
  void read(const YAML::Node& n, const std::string& p, std::vector<T>& v, const Check& c) {
    if (!n.IsSequence()) bad(n, p, "expected a list like [1, 2], got '" + shortText(n) + "'");
    if (c.size >= 0 && static_cast<int>(n.size()) != c.size)
      bad(n, p, "expected " + std::to_string(c.size) + " entries, got " + std::to_string(n.size()));
    if (c.size < 0 && n.size() == 0) bad(n, p, "expected at least one entry");
    v.clear();
    for (size_t i = 0; i < n.size(); ++i) {
      T x;
      read(n[i], p + "[" + std::to_string(i) + "]", x, c);
      v.push_back(x);
    }
  }

  const YAML::Node node_;  // const: lookups of absent keys must not insert them
  std::string path_;
  const Source& src_;
  std::vector<std::string> known_;
};

std::string text(double v) {
  return fmtNumber(v);
}
std::string text(int v) {
  return std::to_string(v);
}
std::string text(std::int64_t v) {
  return std::to_string(v);
}
std::string text(bool v) {
  return v ? "true" : "false";
}
std::string text(const std::string& v) {
  return quoted(v);
}
template <class T>
std::string text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}

// Writes a struct as commented YAML lines.
class Writer : public Checks {
 public:
  Writer(std::ostringstream& out, int indent) : out_(out), pad_(indent, ' ') {}
  template <class T>
  void field(const char* key, const T& value, const char* doc, const Check& = Check()) {
    out_ << pad_ << key << ": " << text(value) << "  # " << doc << "\n";
  }
  template <class S>
  void section(const char* key, S& s) {
    out_ << pad_ << key << ":\n";
    Writer w(out_, static_cast<int>(pad_.size()) + 2);
    s.visit(w);
  }
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char* doc) {
    out_ << pad_ << key << ":" << (m.empty() ? " {}" : "") << "  # " << doc << "\n";
    for (auto& [name, s] : m) {
      out_ << pad_ << "  " << name << ":\n";
      Writer w(out_, static_cast<int>(pad_.size()) + 4);
      s.visit(w);
    }
  }

 private:
  std::ostringstream& out_;
  std::string pad_;
};

// (path, value) of every field.
class Flattener : public Checks {
 public:
  Flattener(std::vector<std::pair<std::string, std::string>>& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}
  template <class T>
  void field(const char* key, const T& value, const char*, const Check& = Check()) {
    out_.emplace_back(prefix_ + key, text(value));
  }
  template <class S>
  void section(const char* key, S& s) {
    Flattener f(out_, prefix_ + key + ".");
    s.visit(f);
  }
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char*) {
    for (auto& [name, s] : m) {
      Flattener f(out_, prefix_ + key + "." + name + ".");
      s.visit(f);
    }
  }

 private:
  std::vector<std::pair<std::string, std::string>>& out_;
  std::string prefix_;
};

void flattenNode(const YAML::Node& n, const std::string& path,
                 std::vector<std::pair<std::string, std::string>>& out) {
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it)
      flattenNode(it->second, path + "." + it->first.as<std::string>(), out);
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      flattenNode(n[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out.emplace_back(path, n.IsNull() ? "null" : n.Scalar());
  }
}

// The top level: name, algorithm, seed, task, the algorithm's section, policy, curriculum, run.
template <class V>
void visitTop(V& v, TrainConfig& c) {
  v.field("name", c.name, "run name: the run folder is <out>/<date>_<time>_<name>");
  v.field("algorithm", c.algorithm, "shac or ppo", V::oneOf({"shac", "ppo"}));
  v.field("seed", c.seed, "seed of networks, action noise, minibatches and env draws",
          V::atLeast(0));
  v.field("init_from", c.initFrom,
          "warm start: the networks and observation normaliser of a run folder (its last "
          "checkpoint) or of a checkpoint model_<iter>.pt of the same algorithm and architecture; "
          "optimisers, iteration counter and schedules start fresh. Empty: random initialisation");
}

fs::path resolveTaskFile(const std::string& ref, const std::string& configFile) {
  fs::path p = ref;
  if (p.extension() != ".yaml") return fs::path(configDir()) / "tasks" / (ref + ".yaml");
  if (io::exists(p) || p.is_absolute()) return p;
  const fs::path rel = fs::path(configFile).parent_path() / p;
  return io::exists(rel) ? rel : p;
}

// The envs layer's strict task parser. A message about a key that one of `sets` overrode names
// that --set argument, not the file; `prefix` is what the arguments' paths have before the task's
// own keys ("task." on the training command line, "" for eval's).
envs::TaskConfig parseTaskNamingSets(const YAML::Node& task, const std::string& source,
                                     const std::vector<Override>& sets, const std::string& prefix) {
  try {
    return envs::parseTaskConfig(task, source);
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    for (const auto& o : sets) {
      // The message may name the overridden key or any section on its path (an unknown
      // 'si0' for --set task.si0.contact=...): every prefix of the path is tried.
      const std::string rel = o.path.substr(prefix.size());
      bool named = false;
      for (size_t end = rel.find('.'); !named; end = rel.find('.', end + 1)) {
        const std::string key = rel.substr(0, end);
        named = msg.find("'" + key + "'") != std::string::npos ||
                msg.find(" " + key + ":") != std::string::npos ||
                msg.find(" " + key + " ") != std::string::npos;
        if (end == std::string::npos) break;
      }
      if (named) {
        const size_t colon = msg.find(": ");
        fail(o.label() + ": task: " + (colon == std::string::npos ? msg : msg.substr(colon + 2)));
      }
    }
    throw;
  }
}

// The keys of a task that extends another (`task: {extends: walk, sim: {contact: hard}}`) as
// overrides of it, one per value (a list or an empty map is one value), each naming its line.
void extensionOverrides(const YAML::Node& n, const std::string& path, const std::string& file,
                        std::vector<Override>& out) {
  if (n.IsMap() && n.size() > 0) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (path == "task" && key == "extends") continue;
      if (key.empty() || key.find('.') != std::string::npos)
        fail(file + ":" + std::to_string(it->first.Mark().line + 1) + ": " + path + ": '" +
             printableArgument(key) + "' is not a key (empty or with a '.')");
      extensionOverrides(it->second, path + "." + key, file, out);
    }
    return;
  }
  Override o;
  o.path = o.text = path;
  o.origin = file + (n.Mark().is_null() ? "" : ":" + std::to_string(n.Mark().line + 1)) + ": " +
             path + " (extending the task)";
  o.value = n;
  out.push_back(o);
}

TrainConfig parseRoot(YAML::Node root, const std::string& file,
                      const std::vector<std::string>& setArgs) {
  Source src{file, {}};
  for (const auto& s : setArgs) src.sets.push_back(parseSet(s));
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail(file + ": expected a map of settings at the top level");
  std::vector<Override> taskSets;
  for (const auto& o : src.sets) {
    if (o.path.rfind("task.", 0) == 0)
      taskSets.push_back(o);
    else
      applySet(root, o, 0);
  }

  TrainConfig c;
  c.name = fs::path(file).stem().string();
  Reader r(root, "", src);
  visitTop(r, c);

  // The task: a name, a path or inline; then the task.* overrides; then the envs layer's strict
  // parser.
  const YAML::Node t = r.take("task");
  YAML::Node task;
  if (!t)
    fail(file + ": missing key 'task' (a task name from " + configDir() +
         "/tasks, a path to a task .yaml, {extends: NAME, <keys that change it>}, or the task "
         "inline)");
  // A map with `extends: NAME` is the named task with the map's other keys on top of it (as
  // --set task.<key>=... would put them; the command line's task.* overrides still come last).
  const bool extends = t.IsMap() && t["extends"];
  if (extends) {
    const YAML::Node base = t["extends"];
    if (!base.IsScalar() || base.Scalar().empty())
      fail(src.where("task.extends", base) +
           ": task.extends: expected a task name or a path to a task .yaml");
    std::vector<Override> own;
    extensionOverrides(t, "task", file, own);
    taskSets.insert(taskSets.begin(), own.begin(), own.end());
  }
  const YAML::Node ref = extends ? t["extends"] : t;
  if (ref.IsScalar()) {
    const std::string refKey = extends ? "task.extends" : "task";
    const fs::path path = resolveTaskFile(ref.Scalar(), file);
    if (!io::exists(path))
      fail(src.where(refKey, ref) + ": " + refKey + ": '" + ref.Scalar() +
           "' not found (looked for " + path.string() + "; a task name from " + configDir() +
           "/tasks or a path to a .yaml)");
    try {
      task = YAML::LoadFile(path.string());
    } catch (const YAML::Exception& e) {
      fail(path.string() + ": " + e.what());
    }
    c.taskSource = path.string();
  } else if (t.IsMap()) {
    task.reset(t);
    c.taskSource = "inline in " + file;
  } else {
    fail(src.where("task", t) + ": task: expected a task name, a path or the task inline");
  }
  for (const auto& o : taskSets) applySet(task, o, 1);
  // The robot's task defaults and a fitted actuator file become values in the resolved config
  // (config.yaml of a run).
  const bool fromFile = ref.IsScalar();
  envs::inlineRobotDefaults(task, fromFile ? c.taskSource : file);
  envs::inlineActuatorFile(task, fromFile ? c.taskSource : file);
  c.task = parseTaskNamingSets(task, fromFile ? c.taskSource : file, taskSets, "task.");
  if (fromFile) c.task.name = fs::path(c.taskSource).stem().string();
  // The resolved task carries its name: a resumed run, its policy file and its checkpoints (which
  // hold the task inline) still say "velocity", not the name of the file they sit in.
  if (!task["name"]) task["name"] = c.task.name;
  c.taskYaml = YAML::Dump(task);

  const char* other = c.algorithm == "shac" ? "ppo" : "shac";
  const YAML::Node o = r.take(other);
  if (o)
    fail(src.where(other, r.keyNode(other)) + ": section '" + other +
         "' does not apply to algorithm '" + c.algorithm + "' (set algorithm: " + other +
         " to use it)");
  if (c.algorithm == "shac")
    r.section("shac", c.shac);
  else
    r.section("ppo", c.ppo);
  r.section("policy", c.policy);
  r.section("curriculum", c.curriculum);
  r.section("run", c.run);
  r.finish();
  // Curriculum reward weights name reward terms (the task need not have them).
  std::vector<std::string> rewardTerms;
  for (const auto& d : envs::termRegistry(envs::TermKind::Reward)) rewardTerms.push_back(d.name);
  for (const auto& [name, ramp] : c.curriculum.rewards)
    if (!envs::findTerm(envs::TermKind::Reward, name)) {
      const std::string path = "curriculum.rewards." + name;
      const YAML::Node& top = root;  // const: a lookup must not insert
      YAML::Node at;
      if (top["curriculum"] && top["curriculum"]["rewards"])
        for (auto it = top["curriculum"]["rewards"].begin();
             it != top["curriculum"]["rewards"].end(); ++it)
          if (it->first.as<std::string>() == name) at = it->first;
      fail(src.where(path, at) + ": " + path + ": unknown reward term '" + name + "'" +
           didYouMean(name, rewardTerms));
    }
  if (c.name.empty() || c.name.find_first_of("/\\ ") != std::string::npos)
    fail(src.where("name", root["name"]) + ": name: '" + c.name +
         "' must be non-empty, without spaces or slashes (it names the run folder)");
  return c;
}

}  // namespace

std::string Check::describe() const {
  if (!choices.empty()) {
    std::string s = "must be one of:";
    for (const auto& c : choices) s += " " + c;
    return s;
  }
  const bool hasLo = std::isfinite(lo), hasHi = std::isfinite(hi);
  if (hasLo && hasHi)
    return "must be in " + std::string(loOpen ? "(" : "[") + fmtNumber(lo) + ", " + fmtNumber(hi) +
           (hiOpen ? ")" : "]");
  if (hasLo) return std::string("must be ") + (loOpen ? "> " : ">= ") + fmtNumber(lo);
  if (hasHi) return std::string("must be ") + (hiOpen ? "< " : "<= ") + fmtNumber(hi);
  return "any value";
}

TrainConfig parseTrainConfig(const std::string& yamlText, const std::string& source,
                             const std::vector<std::string>& sets) {
  YAML::Node root;
  try {
    root = YAML::Load(yamlText);
  } catch (const YAML::Exception& e) {
    fail(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  return parseRoot(root, source, sets);
}

TrainConfig loadTrainConfig(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path);
  if (!in) fail(path + ": cannot read the training config");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseTrainConfig(ss.str(), path, sets);
}

std::string toYaml(const TrainConfig& c0) {
  TrainConfig c = c0;
  std::ostringstream out;
  out << "# Resolved training configuration (every setting; the task inline), written by\n"
         "# `diffloco train`. `diffloco train <this file>` trains the same again.\n";
  Writer w(out, 0);
  visitTop(w, c);
  if (c.algorithm == "shac")
    w.section("shac", c.shac);
  else
    w.section("ppo", c.ppo);
  w.section("policy", c.policy);
  w.section("curriculum", c.curriculum);
  w.section("run", c.run);
  out << "# task from " << c.taskSource << "\ntask:\n";
  std::istringstream task(c.taskYaml);
  for (std::string line; std::getline(task, line);) out << "  " << line << "\n";
  return out.str();
}

std::vector<std::pair<std::string, std::string>> flatten(const TrainConfig& c0) {
  TrainConfig c = c0;
  std::vector<std::pair<std::string, std::string>> out;
  Flattener f(out, "");
  visitTop(f, c);
  if (c.algorithm == "shac")
    f.section("shac", c.shac);
  else
    f.section("ppo", c.ppo);
  f.section("policy", c.policy);
  f.section("curriculum", c.curriculum);
  f.section("run", c.run);
  flattenNode(YAML::Load(c.taskYaml), "task", out);
  return out;
}

namespace {
// A task node with "key.path=value" overrides applied (keys relative to the task), read strictly.
envs::TaskConfig parseTaskNode(YAML::Node task, const std::string& source,
                               const std::vector<std::string>& sets, bool inlineActuator) {
  std::vector<Override> overrides;
  for (const auto& s : sets) {
    overrides.push_back(parseSet(s));
    applySet(task, overrides.back(), 0);
  }
  if (inlineActuator) {  // a task file, not a resolved config
    envs::inlineRobotDefaults(task, source);
    envs::inlineActuatorFile(task, source);
  }
  return parseTaskNamingSets(task, source, overrides, "");
}
}  // namespace

envs::TaskConfig parseTaskWithSets(const std::string& taskYaml, const std::string& source,
                                   const std::vector<std::string>& sets) {
  YAML::Node task;
  try {
    task = YAML::Load(taskYaml);
  } catch (const YAML::Exception& e) {
    fail(source + ": " + e.what());
  }
  return parseTaskNode(task, source, sets, false);  // resolved YAML: values already inline
}

envs::TaskConfig loadTaskWithSets(const std::string& nameOrPath,
                                  const std::vector<std::string>& sets) {
  const fs::path path = resolveTaskFile(nameOrPath, "");
  if (!io::exists(path))
    fail("task '" + nameOrPath + "' not found (looked for " + path.string() +
         "; a task name from " + configDir() + "/tasks or a path to a .yaml)");
  YAML::Node task;
  try {
    task = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    fail(path.string() + ": " + e.what());
  }
  envs::TaskConfig t = parseTaskNode(task, path.string(), sets, true);
  t.name = path.stem().string();
  return t;
}

}  // namespace diffloco::train
