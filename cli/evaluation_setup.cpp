#include "cli/evaluation_setup.h"

#include <torch/script.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/yaml_guard.h"
#include "envs/sim_function.h"
#include "envs/terrain.h"
#include "export/open_policy.h"
#include "policies/actor_critic.h"
#include "robots/robot.h"
#include "runtime/policy_metadata.h"
#include "train/config.h"
#include "viz/ground_window.h"

#ifdef DIFFLOCO_WITH_MUJOCO
#include "export/mujoco_eval.h"
#endif

namespace diffloco::cli {

namespace {

namespace fs = std::filesystem;

// A policy and the task it was trained on (export/open_policy.h: run folder, policy.pt,
// checkpoint or exported file, one rule for where the task comes from).
struct LoadedForEval {
  train::PolicyFn policy;
  envs::TaskConfig task;
};

LoadedForEval load(const std::string& path, const std::vector<std::string>& sets) {
  deploy::OpenedPolicy p = deploy::openPolicy(path);
  if (p.taskYaml.empty())
    throw std::runtime_error(
        p.file + (p.module ? ": the exported file's metadata carries no task (export it again)"
                           : ": the policy names no task (no task_yaml metadata, no config.yaml "
                             "beside it)"));
  LoadedForEval out;
  out.task = train::parseTaskWithSets(p.taskYaml, p.taskSource, sets);
  if (!p.taskName.empty()) out.task.name = p.taskName;
  if (p.module) {
    auto module = p.module;
    out.policy = [module](const torch::Tensor& obs) { return module->forward({obs}).toTensor(); };
  } else {
    policies::Actor actor = p.actor;
    out.policy = [actor](const torch::Tensor& obs) mutable { return actor->forward(obs); };
  }
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
train::EvalResult evaluateMujoco(const EvalArgs& a, Recording* recording) {
  const deploy::OpenedPolicy opened = deploy::openPolicy(a.policy);
  if (opened.kind != deploy::OpenedPolicy::Kind::kExported)
    throw std::runtime_error(opened.file +
                             ": --engine mujoco takes a file written by `diffloco export`");
  const deploy::PolicyMetadata& meta = opened.exported;
  const Robot robot = loadRobot(a.robot.empty() ? meta.robot : a.robot);
  mj::MujocoEvalOptions o;
  o.episodes = a.options.episodes;
  o.seed = a.options.seed;
  o.timestep = a.dt;
  o.episodeLengthS = a.episodeLengthS;
  o.jointPosNoise = a.resetNoise;
  const deploy::EvaluationProtocol advice = meta.evaluation.value_or(deploy::EvaluationProtocol());
  o.integrator = a.integrator.empty() ? advice.mujocoIntegrator : a.integrator;
  o.cone = a.cone.empty() ? advice.mujocoCone : a.cone;
  o.solver = a.solver.empty() ? advice.mujocoSolver : a.solver;
  o.iterations = a.iterations > 0 ? a.iterations : advice.mujocoIterations;
  o.noslipIterations = a.noslip >= 0 ? a.noslip : advice.mujocoNoslipIterations;
  o.mjcfPath = a.saveMjcf;
  o.friction = a.friction;
  o.actionDelaySteps = a.actionDelay;
  o.motorStrength = a.motorStrength;
  o.addedBaseMass = a.addedMass;
  o.observationNoise = a.observationNoise;
  o.pushVelocity = a.pushVelocity;
  if (!a.pushIntervalS.empty()) o.pushIntervalS = {a.pushIntervalS[0], a.pushIntervalS[1]};
  const envs::TaskConfig task =
      meta.taskYaml.empty()
          ? envs::TaskConfig()
          : envs::parseTaskConfig(config::checkYamlTree(YAML::Load(meta.taskYaml), a.policy),
                                  a.policy);
  if (o.episodeLengthS <= 0 && !meta.taskYaml.empty()) o.episodeLengthS = task.episodeLengthS;
  std::string ground = "plane";
  if (!a.options.terrainType.empty() && a.options.terrainType != "none") {
    // The task's own terrain, regenerated from the file's task, tiles of one type at a level.
    if (!task.terrain.enabled)
      throw std::runtime_error("--terrain " + a.options.terrainType + ": " + a.policy +
                               " was trained without terrain (only --terrain none applies)");
    const envs::Terrain t = envs::generateTerrain(task.terrain);
    const int level = a.options.terrainLevel >= 0 ? a.options.terrainLevel : t.rows - 1;
    if (level >= t.rows)
      throw std::runtime_error("--level " + std::to_string(level) + ": the terrain has levels 0 to " +
                               std::to_string(t.rows - 1));
    const std::vector<int> cols = t.columnsOf(a.options.terrainType);
    if (cols.empty())
      throw std::runtime_error("--terrain " + a.options.terrainType +
                               ": no such sub-terrain in the policy's terrain");
    o.terrain = t.field;
    for (int c : cols) o.spawn.push_back({t.centreX(level), t.centreY(c)});
    o.climbDistance = 0.5 * t.tileSize;
    ground = a.options.terrainType + " level " + std::to_string(level);
  }
  if (!a.command.empty()) {
    if (!meta.commandsEnabled)
      throw std::runtime_error("--command: " + a.policy + "'s task has no commands");
    o.command = std::array<double, 3>{a.command[0], a.command[1], a.command[2]};
  }
  if (a.durationS > 0) o.episodeLengthS = a.durationS;
  if (o.episodeLengthS <= 0)
    throw std::runtime_error(a.policy + ": no task_yaml in the file: give --episode-length");
  if (recording && recording->envs > 0) {
    const int n = std::min(recording->envs, o.episodes);
    recording->rollout = std::make_unique<viz::Rollout>(robot.model, n, meta.controlDt);
    viz::Rollout& r = *recording->rollout;
    r.robot = robot.name;
    r.task = meta.task;
    r.engine = "mujoco";
    r.policy = fs::path(a.policy).filename().string();
    r.hasCommands = meta.commandsEnabled;
    o.onDecision = [&r, n](int episode, int decision, const sim::VecX& q, const sim::VecX& v,
                           const std::array<double, 3>& c) {
      if (episode < n) r.record(episode, decision * r.dt, q, v, viz::Vec3(c[0], c[1], c[2]));
    };
  }
  const mj::MujocoEpisodes m = mj::evaluateInMujoco(a.policy, robot.model, o);
  if (recording && recording->rollout)
    recording->rollout->ground = viz::groundWindow(o.terrain.get(), *recording->rollout);
  train::EvalResult r;
  r.task = meta.task;
  r.terrain = ground;
  r.contact = "mujoco";
  r.engine = m.engineOptions;
  r.simDt = m.timestep;
  r.commands = meta.commandsEnabled;
  if (o.climbDistance > 0) r.climbDistance = o.climbDistance;
  for (size_t i = 0; i < m.lengthS.size(); ++i) {
    train::EpisodeStats s;
    s.ret = std::nan("");
    s.lengthS = m.lengthS[i];
    s.fell = m.fell[i] != 0;
    s.meanVx = m.meanVx[i];
    s.meanSpeed = m.meanSpeed[i];
    s.linVelErr2 = m.linVelErr2[i];
    s.yawRateErr2 = m.yawRateErr2[i];
    s.limitExcess = m.limitExcess[i];
    s.climbed = m.climbed[i] != 0;
    s.climbedFace = m.climbedFace[i] != 0;
    r.episodes.push_back(s);
  }
  return r;
}
#endif

// Records the first `recording.envs` envs of an evaluation in our simulator, each until its
// first episode ends.
void recordInOurSimulator(const envs::TaskConfig& task, const std::string& policyPath, int numEnvs,
                          Recording& recording, train::EvalOptions& options) {
  const Robot robot = loadRobot(task.robot);
  const int n = std::min(recording.envs, numEnvs);
  recording.rollout = std::make_unique<viz::Rollout>(robot.model, n, task.envDt);
  viz::Rollout& r = *recording.rollout;
  r.robot = robot.name;
  r.task = task.name;
  r.engine = std::string("diffloco, ") + sim::toString(task.sim.contact.model) + " contact";
  r.policy = fs::path(policyPath).filename().string();
  if (r.policy == "policy.pt" || r.policy.empty())  // a run folder says more than its file
    r.policy =
        fs::path(policyPath).lexically_normal().parent_path().filename().string() + "/" + r.policy;
  r.hasCommands = task.commands.enabled;
  options.onStep = [&r, n](const torch::Tensor& q, const torch::Tensor& v,
                           const torch::Tensor& commands, const torch::Tensor& restarted) {
    const auto* ids = restarted.data_ptr<int64_t>();
    for (int64_t k = 0; k < restarted.numel(); ++k)
      if (ids[k] < n) r.endEpisode(static_cast<int>(ids[k]));
    const torch::Tensor qc = q.detach().contiguous(), vc = v.detach().contiguous(),
                        cc = commands.detach().to(torch::kDouble).contiguous();
    const int nq = static_cast<int>(qc.size(1)), nv = static_cast<int>(vc.size(1));
    for (int i = 0; i < n; ++i) {
      const double* c = cc.data_ptr<double>() + 3 * i;
      const size_t frame = r.envs[i].frames.size();
      r.record(i, frame * r.dt, Eigen::Map<const sim::VecX>(qc.data_ptr<double>() + nq * i, nq),
               Eigen::Map<const sim::VecX>(vc.data_ptr<double>() + nv * i, nv),
               viz::Vec3(c[0], c[1], c[2]));
    }
  };
}

}  // namespace

void addEvalOptions(CLI::App* cmd, EvalArgs& a) {
  EvalArgs* p = &a;
  cmd->add_option(
         "policy", p->policy,
         "run folder, policy file (policy.pt), training checkpoint (model_N.pt) or exported file")
      ->required();
  cmd->add_option("--engine", p->engine,
                  "simulator: diffloco, or mujoco (MuJoCo compiles the robot's URDF; takes an "
                  "exported file; no return, the rest as with diffloco)")
      ->check(CLI::IsMember({"diffloco", "mujoco"}))
      ->capture_default_str();
  cmd->add_option("--robot", p->robot, "mujoco: robot name or URDF (default: the policy's)");
  cmd->add_option("--episode-length", p->episodeLengthS,
                  "mujoco: episode length [s] (default: the task's)")
      ->check(CLI::Range(1e-3, 3600.0));
  cmd->add_option("--reset-scale", p->resetScale,
                  "diffloco: multiplies the task's initial-state noise (1: as trained, 0: default "
                  "pose at rest)")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--reset-noise", p->resetNoise,
                  "mujoco: uniform noise on the default joint angles at reset [rad]")
      ->check(CLI::Range(0.0, 3.2))
      ->capture_default_str();
  cmd->add_option("--contact", p->contact,
                  "contact model (default: the one trained with): hard, smoothed, soft, "
                  "straight_through");
  // Ranges: absurd magnitudes are refused here, naming the flag, rather than hanging (billions
  // of solver iterations or threads) or failing deep inside with an allocation error.
  cmd->add_option("--dt", p->dt, "simulator step [s] (must divide the env step; default: trained)")
      ->check(CLI::Range(1e-5, 0.1));
  cmd->add_option("--iterations", p->iterations,
                  "Gauss-Seidel iterations (default: trained); mujoco: the constraint solver's "
                  "iterations (default: MuJoCo's 100)")
      ->check(CLI::Range(1, 10000));
  // Unset MuJoCo options take the file's recommendation (its evaluation section), else MuJoCo's
  // defaults.
  cmd->add_option(
      "--integrator", p->integrator,
      "mujoco: Euler, RK4 or implicit (default: the file's recommendation, else Euler)");
  cmd->add_option("--cone", p->cone,
                  "mujoco: friction cone, pyramidal or elliptic (default: the file's "
                  "recommendation, else pyramidal)");
  cmd->add_option("--solver", p->solver,
                  "mujoco: PGS, CG or Newton (default: the file's recommendation, else Newton)");
  cmd->add_option("--noslip", p->noslip,
                  "mujoco: noslip iterations (default: the file's recommendation, else 0)")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--save-mjcf", p->saveMjcf,
                  "mujoco: write the MJCF model MuJoCo compiled to this file");
  // The conditions of a robustness evaluation in MuJoCo (in ours: --set randomization.*).
  cmd->add_option("--friction", p->friction, "mujoco: ground friction (default: the exported)")
      ->check(CLI::Range(1e-3, 10.0));
  cmd->add_option("--action-delay", p->actionDelay,
                  "mujoco: control periods from a decision to its targets at the drives")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--motor-strength", p->motorStrength,
                  "mujoco: the drives' kp and kd multiplied by this (torque limits unchanged)")
      ->check(CLI::Range(0.01, 100.0));
  cmd->add_option("--added-mass", p->addedMass, "mujoco: payload on the base [kg]")
      ->check(CLI::Range(-1000.0, 1000.0));
  cmd->add_flag("--observation-noise", p->observationNoise,
                "mujoco: the policy senses its state with the exported per-term noise");
  cmd->add_option("--push-velocity", p->pushVelocity,
                  "mujoco: pushes add U(-x, x) [m/s] to the base's world v_x and v_y")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--push-interval", p->pushIntervalS, "mujoco: a push every U(a, b) s (10 15)")
      ->expected(2)
      ->check(CLI::Range(0.001, 1e6));
  // The range is checked on the text: CLI11 wraps an out-of-range unsigned value silently.
  cmd->add_option("--seed", p->options.seed, "seed of resets, commands, noise")
      ->check(CLI::Range(0.0, 9.2e18))
      ->capture_default_str();
  cmd->add_option("--threads", p->options.threads, "simulator threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--set", p->sets,
                  "diffloco: override a task key, key.path=value (e.g. "
                  "randomization.push_velocity=0); repeatable");
  cmd->add_option("--terrain", p->options.terrainType,
                  "every env (mujoco: episode) on tiles of this sub-terrain type of the task's "
                  "terrain (pyramid_stairs, rough, ...) at --level, or 'none' for the plane z = 0 "
                  "(default: diffloco, the task's terrain and curriculum; mujoco, the plane)");
  cmd->add_option("--command", p->command,
                  "every episode holds this command, VX VY WZ (base frame [m/s], [rad/s]), "
                  "instead of the task's draws (climbing: e.g. 0.5 0 0)")
      ->expected(3)
      ->check(CLI::Range(-100.0, 100.0));
  cmd->add_option("--level", p->options.terrainLevel,
                  "with --terrain: the terrain level (default: the hardest)")
      ->check(CLI::Range(0, 999));
  cmd->add_option("--task", p->task,
                  "diffloco: evaluate on this task (name or .yaml; same robot and observations) "
                  "instead of the one trained on, e.g. a fine-tuned policy on its original task");
}

void addEvalCountOptions(CLI::App* cmd, EvalArgs& a) {
  cmd->add_option("--episodes", a.options.episodes, "episodes to collect")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--envs", a.options.numEnvs, "parallel environments")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
}

void rejectOtherEngineOptions(const CLI::App* cmd, const EvalArgs& a) {
  const bool mujoco = a.engine == "mujoco";
  for (const char* o :
       mujoco ? std::vector<const char*>{"--set", "--contact", "--reset-scale", "--task"}
              : std::vector<const char*>{"--robot", "--episode-length", "--reset-noise",
                                         "--integrator", "--cone", "--solver", "--noslip",
                                         "--friction", "--action-delay", "--motor-strength",
                                         "--added-mass", "--observation-noise", "--push-velocity",
                                         "--push-interval", "--save-mjcf"})
    if (cmd->count(o) > 0)
      throw std::runtime_error(std::string(o) + " applies to --engine " +
                               (mujoco ? "diffloco" : "mujoco") + " only, not to --engine " +
                               a.engine);
}

train::EvalResult runEvaluation(const EvalArgs& a, Recording* recording) {
  envs::setTorchThreads(1);  // small tensors: more threads would only fight the simulator
  if (a.engine == "mujoco") {
#ifdef DIFFLOCO_WITH_MUJOCO
    return evaluateMujoco(a, recording);
#else
    throw std::runtime_error("--engine mujoco: this diffloco was built without MuJoCo");
#endif
  }
  if (a.engine != "diffloco")
    throw std::runtime_error("unknown engine '" + a.engine + "' (diffloco or mujoco)");
  LoadedForEval l = load(a.policy, a.task.empty() ? a.sets : std::vector<std::string>{});
  if (!a.task.empty()) l.task = replacementTask(a.task, a.sets, l.task);
  train::overrideSimulation(l.task, a.contact, a.dt, a.iterations);
  train::scaleResetNoise(l.task, a.resetScale);
  if (a.durationS > 0) l.task.episodeLengthS = a.durationS;
  train::EvalOptions options = a.options;
  if (!a.command.empty())
    options.command = std::array<double, 3>{a.command[0], a.command[1], a.command[2]};
  if (recording && recording->envs > 0)
    recordInOurSimulator(l.task, a.policy, options.numEnvs, *recording, options);
  train::EvalResult result = train::evaluatePolicy(l.task, l.policy, options);
  if (recording && recording->rollout)
    recording->rollout->ground = viz::groundWindow(result.ground.get(), *recording->rollout);
  return result;
}

}  // namespace diffloco::cli
