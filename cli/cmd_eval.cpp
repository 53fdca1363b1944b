// `diffloco eval POLICY [--engine diffloco|mujoco] [--contact M] [--dt S] [--iterations N]
// [--episodes N] [--envs N] [--seed N] [--json]`: sim-to-sim evaluation of a policy.
#include <spdlog/spdlog.h>
#include <torch/script.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "deploy/policy_metadata.h"
#include "envs/sim_function.h"
#include "policies/actor_critic.h"
#include "robots/robot.h"
#include "train/config.h"
#include "train/evaluation.h"

#ifdef DIFFLOCO_WITH_MUJOCO
#include "deploy/mujoco_eval.h"
#endif

namespace diffloco::cli {

namespace {

namespace fs = std::filesystem;

struct EvalArgs {
  std::string policy;
  std::string engine = "diffloco";
  std::string contact;
  double dt = 0;
  int iterations = 0;
  std::string robot;          // mujoco: URDF or robot name (default: the policy's robot)
  double episodeLengthS = 0;  // mujoco: 0 = the task's
  double resetNoise = 0.1;    // mujoco: U(-x, x) on the default joint angles at reset [rad]
  double resetScale = 1;      // diffloco: scale of the task's initial-state noise
  std::string integrator = "Euler", cone = "pyramidal", solver = "Newton";  // mujoco
  int noslip = 0;                                                           // mujoco
  std::vector<std::string> sets;  // diffloco: task overrides, key.path=value
  std::string task;               // diffloco: evaluate on this task instead of the trained one
  train::EvalOptions options;
  bool json = false;
};

// A policy and the task it was trained on, from a run folder (policy.pt + config.yaml) or a
// policy file (training archive with the task in its metadata, or with config.yaml beside it).
struct LoadedForEval {
  train::PolicyFn policy;
  envs::TaskConfig task;
};

// A `diffloco export` file: TorchScript with a metadata_json attribute (deploy/policy_metadata.h),
// which carries the whole task as trained (rewards, terminations, resets).
struct Exported {
  torch::jit::Module module;
  deploy::PolicyMetadata meta;
};

// The file as an exported policy, loaded once; empty if it is not one.
std::optional<Exported> loadExported(const std::string& path) {
  Exported e;
  try {
    e.module = torch::jit::load(path);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
  if (!e.module.hasattr("metadata_json")) return std::nullopt;
  e.module.eval();
  e.meta = deploy::parsePolicyMetadata(e.module.attr("metadata_json").toStringRef(), path);
  return e;
}

// The --set overrides as a training config's (under task.).
std::vector<std::string> taskSets(const std::vector<std::string>& sets) {
  std::vector<std::string> out;
  for (const auto& s : sets) out.push_back("task." + s);
  return out;
}

// A training checkpoint (model_<iteration>.pt): its actor and the task of the config saved in it.
// Empty if the file is not a checkpoint.
std::optional<LoadedForEval> loadCheckpointActor(const std::string& path,
                                                 const std::vector<std::string>& sets) {
  torch::serialize::InputArchive a;
  c10::IValue format, config;
  try {
    a.load_from(path);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
  if (!a.try_read("format", format) || format.toStringRef() != "diffloco-checkpoint-1")
    return std::nullopt;
  if (!a.try_read("config", config))
    throw std::runtime_error(path + ": checkpoint without its config");
  LoadedForEval out;
  out.task = train::parseTrainConfig(config.toStringRef(), path + " (config)", taskSets(sets)).task;
  policies::Actor actor = policies::readActor(a);
  actor->eval();
  out.policy = [actor](const torch::Tensor& obs) mutable { return actor->forward(obs); };
  return out;
}

LoadedForEval load(const std::string& path, const std::vector<std::string>& sets) {
  fs::path file = path, runDir;
  if (fs::is_directory(file)) {
    runDir = file;
    file = file / "policy.pt";
  } else {
    runDir = file.parent_path();
  }
  if (!fs::exists(file)) throw std::runtime_error(file.string() + ": no such policy file");
  if (std::optional<Exported> e = loadExported(file.string())) {
    if (e->meta.taskYaml.empty())
      throw std::runtime_error(file.string() +
                               ": the exported file's metadata carries no task (export it again)");
    LoadedForEval out;
    out.task = train::parseTaskWithSets(e->meta.taskYaml, file.string() + " (task_yaml)", sets);
    out.task.name = e->meta.task;
    auto module = std::make_shared<torch::jit::Module>(e->module);
    out.policy = [module](const torch::Tensor& obs) { return module->forward({obs}).toTensor(); };
    return out;
  }
  if (auto checkpoint = loadCheckpointActor(file.string(), sets)) return *checkpoint;
  policies::LoadedPolicy p = policies::loadPolicy(file.string());
  LoadedForEval out;
  const auto it = p.metadata.find("task_yaml");
  if (it != p.metadata.end()) {
    out.task = train::parseTaskWithSets(it->second, file.string() + " (task_yaml)", sets);
  } else if (fs::exists(runDir / "config.yaml")) {
    out.task = train::loadTrainConfig((runDir / "config.yaml").string(), taskSets(sets)).task;
  } else {
    throw std::runtime_error(file.string() +
                             ": the policy names no task (no task_yaml metadata, no config.yaml "
                             "beside it)");
  }
  if (p.metadata.count("task")) out.task.name = p.metadata.at("task");
  policies::Actor actor = p.actor;
  actor->eval();
  out.policy = [actor](const torch::Tensor& obs) mutable { return actor->forward(obs); };
  return out;
}

// --task: another task (a name from configs/tasks or a .yaml path) for a policy trained on a
// variant of it, e.g. a fine-tune with short episodes evaluated on the task it came from. The
// robot, the observation terms and the action layout must be the trained task's.
envs::TaskConfig replacementTask(const std::string& nameOrPath,
                                 const std::vector<std::string>& sets,
                                 const envs::TaskConfig& trained) {
  envs::TaskConfig task;
  try {
    task = train::loadTaskWithSets(nameOrPath, sets);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("--task " + nameOrPath + ": " + e.what());
  }
  auto names = [](const envs::TaskConfig& t) {
    std::string s;
    for (const auto& o : t.observations) s += (s.empty() ? "" : ", ") + o.name;
    return s;
  };
  if (task.robot != trained.robot || names(task) != names(trained))
    throw std::runtime_error("--task " + nameOrPath + ": robot '" + task.robot +
                             "' with observations (" + names(task) +
                             ") does not fit a policy trained for robot '" + trained.robot +
                             "' with observations (" + names(trained) + ")");
  return task;
}

#ifdef DIFFLOCO_WITH_MUJOCO
// MuJoCo engine: only the exported file and the robot's URDF. No rewards (the return is not
// computed: NaN); lengths, falls, speed and tracking errors as in our engine.
train::EvalResult evaluateMujoco(const EvalArgs& a) {
  const std::optional<Exported> loaded = loadExported(a.policy);
  if (!loaded)
    throw std::runtime_error(a.policy +
                             ": --engine mujoco takes a file written by `diffloco export`");
  const Exported& e = *loaded;
  const Robot robot = loadRobot(a.robot.empty() ? e.meta.robot : a.robot);
  mj::MujocoEvalOptions o;
  o.episodes = a.options.episodes;
  o.seed = a.options.seed;
  o.timestep = a.dt;
  o.episodeLengthS = a.episodeLengthS;
  o.jointPosNoise = a.resetNoise;
  o.integrator = a.integrator, o.cone = a.cone, o.solver = a.solver;
  o.iterations = a.iterations > 0 ? a.iterations : 100;  // MuJoCo's default
  o.noslipIterations = a.noslip;
  if (o.episodeLengthS <= 0 && !e.meta.taskYaml.empty())
    o.episodeLengthS = envs::parseTaskConfig(YAML::Load(e.meta.taskYaml), a.policy).episodeLengthS;
  if (o.episodeLengthS <= 0)
    throw std::runtime_error(a.policy + ": no task_yaml in the file: give --episode-length");
  const mj::MujocoEpisodes m = mj::evaluateInMujoco(a.policy, robot.model, o);
  train::EvalResult r;
  r.task = e.meta.task;
  r.contact = "mujoco";
  r.engine = m.engineOptions;
  r.simDt = m.timestep;
  r.commands = e.meta.commandsEnabled;
  for (size_t i = 0; i < m.lengthS.size(); ++i) {
    train::EpisodeStats s;
    s.ret = std::nan("");
    s.lengthS = m.lengthS[i];
    s.fell = m.fell[i] != 0;
    s.meanVx = m.meanVx[i];
    s.meanSpeed = m.meanSpeed[i];
    s.linVelErr2 = m.linVelErr2[i];
    s.yawRateErr2 = m.yawRateErr2[i];
    r.episodes.push_back(s);
  }
  return r;
}
#endif

void print(const train::EvalResult& r, bool json) {
  const auto s = r.summary();
  if (json) {
    std::printf("{\"task\": \"%s\", \"contact\": \"%s\"", r.task.c_str(), r.contact.c_str());
    if (!r.engine.empty()) std::printf(", \"engine\": \"%s\"", r.engine.c_str());
    for (const auto& [k, v] : s) {
      if (std::isfinite(v))
        std::printf(", \"%s\": %.6g", k.c_str(), v);
      else
        std::printf(", \"%s\": null", k.c_str());  // e.g. the return under MuJoCo
    }
    std::printf("}\n");
    return;
  }
  if (r.contact == "mujoco")
    std::printf("task %s, %s: %d episodes (no return: MuJoCo computes no rewards)\n",
                r.task.c_str(), r.engine.c_str(), static_cast<int>(s.at("episodes")));
  else
    std::printf("task %s, contact %s, sim dt %g s, %d solver iterations: %d episodes\n",
                r.task.c_str(), r.contact.c_str(), r.simDt, r.iterations,
                static_cast<int>(s.at("episodes")));
  auto row = [&](const char* name, const std::string& key, const char* unit) {
    std::printf("  %-22s %10.4g +- %-10.4g %s\n", name, s.at(key + "_mean"), s.at(key + "_std"),
                unit);
  };
  row("return", "return", "");
  row("episode length", "length_s", "s");
  row("forward velocity", "forward_velocity", "m/s (world x)");
  row("heading speed", "heading_speed", "m/s (base x)");
  if (r.commands) {
    std::printf("  %-22s %10.4g m/s\n", "lin. velocity RMS err", s.at("lin_vel_rms"));
    std::printf("  %-22s %10.4g rad/s\n", "yaw rate RMS err", s.at("yaw_rate_rms"));
  }
  std::printf("  %-22s %10d of %d\n", "falls", r.falls(), static_cast<int>(s.at("episodes")));
}

}  // namespace

Runner addEvalCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Evaluate a policy deterministically (actor mean) on the task it was trained on: return, "
      "episode length, speed, velocity-tracking errors and falls, mean +- std over episodes");
  auto a = std::make_shared<EvalArgs>();
  cmd->add_option(
         "policy", a->policy,
         "run folder, policy file (policy.pt), training checkpoint (model_N.pt) or exported file")
      ->required();
  cmd->add_option("--engine", a->engine,
                  "simulator: diffloco, or mujoco (MuJoCo compiles the robot's URDF; takes an "
                  "exported file; no return, the rest as with diffloco)")
      ->check(CLI::IsMember({"diffloco", "mujoco"}))
      ->capture_default_str();
  cmd->add_option("--robot", a->robot, "mujoco: robot name or URDF (default: the policy's)");
  cmd->add_option("--episode-length", a->episodeLengthS,
                  "mujoco: episode length [s] (default: the task's)");
  cmd->add_option("--reset-scale", a->resetScale,
                  "diffloco: multiplies the task's initial-state noise (1: as trained, 0: default "
                  "pose at rest)")
      ->capture_default_str();
  cmd->add_option("--reset-noise", a->resetNoise,
                  "mujoco: uniform noise on the default joint angles at reset [rad]")
      ->capture_default_str();
  cmd->add_option("--contact", a->contact,
                  "contact model (default: the one trained with): hard, smoothed, soft, "
                  "straight_through");
  cmd->add_option("--dt", a->dt, "simulator step [s] (must divide the env step; default: trained)");
  cmd->add_option("--iterations", a->iterations,
                  "Gauss-Seidel iterations (default: trained); mujoco: the constraint solver's "
                  "iterations (default: MuJoCo's 100)");
  cmd->add_option("--integrator", a->integrator,
                  "mujoco: Euler (MuJoCo's default), RK4 or implicit")
      ->capture_default_str();
  cmd->add_option("--cone", a->cone, "mujoco: friction cone, pyramidal (default) or elliptic")
      ->capture_default_str();
  cmd->add_option("--solver", a->solver, "mujoco: PGS, CG or Newton (default)")
      ->capture_default_str();
  cmd->add_option("--noslip", a->noslip, "mujoco: noslip iterations (default 0)")
      ->capture_default_str();
  cmd->add_option("--episodes", a->options.episodes, "episodes to collect")->capture_default_str();
  cmd->add_option("--envs", a->options.numEnvs, "parallel environments")->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "seed of resets, commands, noise")
      ->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "simulator threads")->capture_default_str();
  cmd->add_option("--set", a->sets,
                  "diffloco: override a task key, key.path=value (e.g. "
                  "randomization.push_velocity=0); repeatable");
  cmd->add_option("--task", a->task,
                  "diffloco: evaluate on this task (name or .yaml; same robot and observations) "
                  "instead of the one trained on, e.g. a fine-tuned policy on its original task");
  cmd->add_flag("--json", a->json, "one JSON object on stdout");
  return [a, cmd] {
    // An option of the other engine is a mistake to report, not a setting to ignore.
    const bool mujoco = a->engine == "mujoco";
    for (const char* o :
         mujoco ? std::vector<const char*>{"--set", "--contact", "--reset-scale", "--task"}
                : std::vector<const char*>{"--robot", "--episode-length", "--reset-noise",
                                           "--integrator", "--cone", "--solver", "--noslip"})
      if (cmd->count(o) > 0)
        throw std::runtime_error(std::string(o) + " applies to --engine " +
                                 (mujoco ? "diffloco" : "mujoco") + " only, not to --engine " +
                                 a->engine);
    envs::setTorchThreads(1);  // small tensors: more threads would only fight the simulator
    if (mujoco) {
#ifdef DIFFLOCO_WITH_MUJOCO
      print(evaluateMujoco(*a), a->json);
      return 0;
#else
      throw std::runtime_error("--engine mujoco: this diffloco was built without MuJoCo");
#endif
    }
    LoadedForEval l = load(a->policy, a->task.empty() ? a->sets : std::vector<std::string>{});
    if (!a->task.empty()) l.task = replacementTask(a->task, a->sets, l.task);
    train::overrideSimulation(l.task, a->contact, a->dt, a->iterations);
    train::scaleResetNoise(l.task, a->resetScale);
    print(train::evaluatePolicy(l.task, l.policy, a->options), a->json);
    return 0;
  };
}

}  // namespace diffloco::cli
