// `diffloco eval POLICY [--engine diffloco|mujoco] [--contact M] [--dt S] [--iterations N]
// [--episodes N] [--envs N] [--seed N] [--json]`: sim-to-sim evaluation of a policy.
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "envs/sim_function.h"
#include "policies/actor_critic.h"
#include "train/commands.h"
#include "train/config.h"
#include "train/evaluation.h"

namespace diffloco::cli {

namespace {

namespace fs = std::filesystem;

struct EvalArgs {
  std::string policy;
  std::string engine = "diffloco";
  std::string contact;
  double dt = 0;
  int iterations = 0;
  train::EvalOptions options;
  bool json = false;
};

// A policy and the task it was trained on, from a run folder (policy.pt + config.yaml) or a
// policy file (training archive with the task in its metadata, or with config.yaml beside it).
struct LoadedForEval {
  train::PolicyFn policy;
  envs::TaskConfig task;
};

LoadedForEval load(const std::string& path) {
  fs::path file = path, runDir;
  if (fs::is_directory(file)) {
    runDir = file;
    file = file / "policy.pt";
  } else {
    runDir = file.parent_path();
  }
  if (!fs::exists(file)) throw std::runtime_error(file.string() + ": no such policy file");
  policies::LoadedPolicy p = policies::loadPolicy(file.string());
  LoadedForEval out;
  const auto it = p.metadata.find("task_yaml");
  if (it != p.metadata.end()) {
    out.task = envs::parseTaskConfig(YAML::Load(it->second), file.string() + " (task_yaml)");
  } else if (fs::exists(runDir / "config.yaml")) {
    out.task = train::loadTrainConfig((runDir / "config.yaml").string()).task;
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

void print(const train::EvalResult& r, bool json) {
  const auto s = r.summary();
  if (json) {
    std::printf("{\"task\": \"%s\", \"contact\": \"%s\"", r.task.c_str(), r.contact.c_str());
    for (const auto& [k, v] : s) std::printf(", \"%s\": %.6g", k.c_str(), v);
    std::printf("}\n");
    return;
  }
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
  cmd->add_option("policy", a->policy, "run folder or policy file (policy.pt)")->required();
  cmd->add_option("--engine", a->engine, "simulator: diffloco")
      ->check(CLI::IsMember({"diffloco"}))
      ->capture_default_str();
  cmd->add_option("--contact", a->contact,
                  "contact model (default: the one trained with): hard, smoothed, soft, "
                  "straight_through");
  cmd->add_option("--dt", a->dt, "simulator step [s] (must divide the env step; default: trained)");
  cmd->add_option("--iterations", a->iterations, "Gauss-Seidel iterations (default: trained)");
  cmd->add_option("--episodes", a->options.episodes, "episodes to collect")->capture_default_str();
  cmd->add_option("--envs", a->options.numEnvs, "parallel environments")->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "seed of resets, commands, noise")
      ->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "simulator threads")->capture_default_str();
  cmd->add_flag("--json", a->json, "one JSON object on stdout");
  return [a] {
    LoadedForEval l = load(a->policy);
    train::overrideSimulation(l.task, a->contact, a->dt, a->iterations);
    envs::setTorchThreads(1);  // small tensors: more threads would only fight the simulator
    print(train::evaluatePolicy(l.task, l.policy, a->options), a->json);
    return 0;
  };
}

}  // namespace diffloco::cli
