#include "train/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "config/archive.h"
#include "config/yaml_guard.h"
#include "io/excerpt.h"
#include "io/file_status.h"
#include "robots/robot.h"

namespace diffloco::train {
namespace fs = std::filesystem;

using config::fail;
using config::Override;
using config::Source;

namespace {

// The top level: name, algorithm, seed, task, the algorithm's section, policy, curriculum, run.
template <class V>
void visitTop(V& v, TrainConfig& c) {
  v.field("name", c.name, "run name: the run folder is <out>/<date>_<time>_<name>");
  v.field("algorithm", c.algorithm, "shac or ppo", V::oneOf({"shac", "ppo"}));
  v.field("seed", c.seed, "seed of networks, action noise, minibatches and env draws",
          V::atLeast(0));
  v.field("init_from", c.initFrom,
          "warm start: the networks and observation normaliser of a run folder (its last "
          "checkpoint) or of a checkpoint model_<iter>.pt of the same algorithm and architecture, "
          "or the actor and its normaliser of a policy file (a run's policy.pt) or of an "
          "exported policy (diffloco export's .pt, pretrained/*.pt: the mean's network, the std "
          "is policy.init_std) with the critic fresh (ppo.critic_warmup_iterations); optimisers, "
          "iteration counter and schedules start fresh. Empty: random initialisation");
}

// The sections after the task: the selected algorithm's, policy, curriculum, run.
template <class V>
void visitSections(V& v, TrainConfig& c) {
  if (c.algorithm == "shac")
    v.section("shac", c.shac);
  else
    v.section("ppo", c.ppo);
  v.section("policy", c.policy);
  v.section("curriculum", c.curriculum);
  v.section("run", c.run);
}

fs::path resolveTaskFile(const std::string& ref, const std::string& configFile) {
  fs::path p = ref;
  if (p.extension() != ".yaml") return fs::path(configDir()) / "tasks" / (ref + ".yaml");
  if (io::exists(p) || p.is_absolute()) return p;
  const fs::path rel = fs::path(configFile).parent_path() / p;
  return io::exists(rel) ? rel : p;
}

// The envs layer's strict task parser; `keyPrefix` is the task's key path in the config the
// overrides' paths are written against ("task" on the training command line, "" for eval's): a
// message about an overridden key names the override.
envs::TaskConfig parseTaskWithOverrides(const YAML::Node& task, const std::string& file,
                                        const std::vector<Override>& sets,
                                        const std::string& keyPrefix) {
  return envs::parseTaskConfig(task, config::Source{file, sets}, keyPrefix);
}

// The keys of a task that extends another (`task: {extends: walk, sim: {contact: hard}}`) as
// overrides of it, one per value (a list or an empty map is one value), each naming its line.
void extensionOverrides(const YAML::Node& n, const std::string& path, const std::string& file,
                        std::vector<Override>& out) {
  if (n.IsMap() && n.size() > 0) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = config::keyName(it->first, file);
      if (path == "task" && key == "extends") continue;
      if (key.empty() || key.find('.') != std::string::npos)
        fail(file + ":" + std::to_string(it->first.Mark().line + 1) + ": " + path + ": '" +
             config::printable(key) + "' is not a key (empty or with a '.')");
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
  for (const auto& s : setArgs) src.sets.push_back(config::parseOverride(s));
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail(file + ": expected a map of settings at the top level");
  std::vector<Override> taskSets;
  for (const auto& o : src.sets) {
    if (o.path.rfind("task.", 0) == 0)
      taskSets.push_back(o);
    else
      config::applyOverride(root, o, 0);
  }

  TrainConfig c;
  c.name = fs::path(file).stem().string();
  config::Reader r(root, "", src);
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
    if (!io::isRegularFile(path))
      fail(src.where(refKey, ref) + ": " + refKey + ": '" +
           io::excerpt(config::printable(ref.Scalar())) + "' not found (looked for " +
           config::printable(path.string()) + "; a task name from " + configDir() +
           "/tasks or a path to a .yaml)");
    try {
      task = YAML::LoadFile(path.string());
    } catch (const YAML::Exception& e) {
      fail(path.string() + ": " + e.what());
    }
    config::checkYamlTree(task, path.string());
    c.taskSource = path.string();
  } else if (t.IsMap()) {
    task.reset(t);
    c.taskSource = "inline in " + file;
  } else {
    fail(src.where("task", t) + ": task: expected a task name, a path or the task inline");
  }
  for (const auto& o : taskSets) config::applyOverride(task, o, 1);
  // The robot's task defaults and a fitted actuator file become values in the resolved config
  // (config.yaml of a run).
  const bool fromFile = ref.IsScalar();
  envs::inlineRobotDefaults(task, fromFile ? c.taskSource : file);
  envs::inlineActuatorFile(task, fromFile ? c.taskSource : file);
  c.task = parseTaskWithOverrides(task, fromFile ? c.taskSource : file, taskSets, "task");
  if (fromFile) c.task.name = fs::path(c.taskSource).stem().string();

  const char* other = c.algorithm == "shac" ? "ppo" : "shac";
  const YAML::Node o = r.take(other);
  if (o)
    fail(src.where(other, r.keyNode(other)) + ": section '" + other +
         "' does not apply to algorithm '" + c.algorithm + "' (set algorithm: " + other +
         " to use it)");
  visitSections(r, c);
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
          if (it->first.IsScalar() && it->first.Scalar() == name) at = it->first;
      fail(src.where(path, at) + ": " + path + ": unknown reward term '" + name + "'" +
           config::didYouMean(name, rewardTerms));
    }
  // A minibatch holds at least one of the iteration's samples (num_envs x horizon / rollout).
  const bool shac = c.algorithm == "shac";
  const std::int64_t samples = shac ? std::int64_t{c.shac.numEnvs} * c.shac.horizon
                                    : std::int64_t{c.ppo.numEnvs} * c.ppo.rollout;
  const int minibatches = shac ? c.shac.criticMinibatches : c.ppo.minibatches;
  if (minibatches > samples) {
    const std::string key = shac ? "critic_minibatches" : "minibatches";
    const std::string path = c.algorithm + "." + key;
    YAML::Node at;
    const YAML::Node& top = root;  // const: a lookup must not insert
    if (top[c.algorithm] && top[c.algorithm].IsMap() && top[c.algorithm][key])
      at = top[c.algorithm][key];
    fail(src.where(path, at) + ": " + path + ": " + std::to_string(minibatches) +
         " minibatches of " + std::to_string(samples) + " samples (num_envs x " +
         (shac ? "horizon" : "rollout") + "): at most one a sample");
  }
  if (c.policy.squashBounded() && c.policy.squash != "tanh") {
    const YAML::Node& top = root;  // const: a lookup must not insert
    YAML::Node at;
    if (top["policy"] && top["policy"].IsMap()) at = top["policy"]["squash_bound"];
    fail(src.where("policy.squash_bound", at) +
         ": policy.squash_bound: a bound of the tanh squash, but policy.squash is " +
         c.policy.squash);
  }
  if (c.name.empty() || c.name.find_first_of("/\\ ") != std::string::npos)
    fail(src.where("name", root["name"]) + ": name: '" + io::excerpt(c.name) +
         "' must be non-empty, without spaces or slashes (it names the run folder)");
  return c;
}

}  // namespace

TrainConfig parseTrainConfig(const std::string& yamlText, const std::string& source,
                             const std::vector<std::string>& sets) {
  YAML::Node root;
  try {
    root = YAML::Load(yamlText);
  } catch (const YAML::Exception& e) {
    fail(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  config::checkYamlTree(root, source);
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
  config::Writer w(out, 0);
  visitTop(w, c);
  visitSections(w, c);
  out << "# task from " << c.taskSource << "\ntask:\n";
  std::istringstream task(envs::toYaml(c.task));
  for (std::string line; std::getline(task, line);) out << "  " << line << "\n";
  return out.str();
}

std::vector<std::pair<std::string, std::string>> flatten(const TrainConfig& c0) {
  TrainConfig c = c0;
  std::vector<std::pair<std::string, std::string>> out;
  config::Flattener f(out, "");
  visitTop(f, c);
  visitSections(f, c);
  for (const auto& [key, value] : envs::flatten(c.task)) out.emplace_back("task." + key, value);
  return out;
}

namespace {
// A task node with "key.path=value" overrides applied (keys relative to the task), read strictly.
envs::TaskConfig parseTaskNode(YAML::Node task, const std::string& source,
                               const std::vector<std::string>& sets, bool inlineActuator) {
  std::vector<Override> overrides;
  for (const auto& s : sets) {
    overrides.push_back(config::parseOverride(s));
    config::applyOverride(task, overrides.back(), 0);
  }
  if (inlineActuator) {  // a task file, not a resolved config
    envs::inlineRobotDefaults(task, source);
    envs::inlineActuatorFile(task, source);
  }
  return parseTaskWithOverrides(task, source, overrides, "");
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
  config::checkYamlTree(task, source);
  return parseTaskNode(task, source, sets, false);  // resolved YAML: values already inline
}

envs::TaskConfig loadTaskWithSets(const std::string& nameOrPath,
                                  const std::vector<std::string>& sets) {
  const fs::path path = resolveTaskFile(nameOrPath, "");
  if (!io::isRegularFile(path))
    fail("task '" + nameOrPath + "' not found (looked for " + path.string() +
         "; a task name from " + configDir() + "/tasks or a path to a .yaml)");
  YAML::Node task;
  try {
    task = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    fail(path.string() + ": " + e.what());
  }
  config::checkYamlTree(task, path.string());
  envs::TaskConfig t = parseTaskNode(task, path.string(), sets, true);
  t.name = path.stem().string();
  return t;
}

}  // namespace diffloco::train
