// diffloco.make_env: the locomotion environments (envs/locomotion_env.h) in the shape of rsl_rl's
// VecEnv. A step records the simulator's autograd function (the one SHAC differentiates) when
// torch's grad mode is on and something it would differentiate requires grad: the actions or
// the state carried from earlier such steps. Otherwise it costs no autograd at all.
#include <torch/extension.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/yaml_guard.h"
#include "envs/locomotion_env.h"
#include "python/bindings.h"
#include "train/config.h"
#include "train/curriculum.h"

namespace py = pybind11;

namespace diffloco::python {
namespace {

// A training config names its task under `task:`; anything else is a task (name or file).
bool isTrainingConfig(const std::string& taskOrConfig) {
  if (taskOrConfig.size() < 5 || taskOrConfig.substr(taskOrConfig.size() - 5) != ".yaml")
    return false;
  try {
    const YAML::Node n = config::checkYamlTree(YAML::LoadFile(taskOrConfig), taskOrConfig);
    return n.IsMap() && n["task"];
  } catch (const YAML::Exception&) {
    return false;  // the task reader reports the file's error with its line
  }
}

torch::Dtype parseDtype(const py::object& dtype) {
  const std::string s = py::str(dtype);
  if (s == "torch.float32" || s == "float32") return torch::kFloat32;
  if (s == "torch.float64" || s == "float64") return torch::kFloat64;
  throw std::invalid_argument("dtype must be torch.float32 or torch.float64, got " + s);
}

class Env {
 public:
  Env(const std::string& taskOrConfig, std::optional<int> numEnvs,
      std::optional<std::uint64_t> seed, const std::vector<std::string>& overrides, int threads,
      const py::object& dtype) {
    envs::EnvOptions eo;
    eo.threads = threads;
    eo.dtype = parseDtype(dtype);
    eo.printSummary = false;
    envs::TaskConfig task;
    if (isTrainingConfig(taskOrConfig)) {
      // The env the trainer builds: the config's task with its curriculum's starting values.
      const train::TrainConfig cfg = train::loadTrainConfig(taskOrConfig, overrides);
      task = train::trainedTask(cfg.curriculum, cfg.task);
      curriculum_ = cfg.curriculum;
      eo.numEnvs = numEnvs.value_or(cfg.numEnvs());
      eo.seed = seed.value_or(static_cast<std::uint64_t>(cfg.seed));
    } else {
      task = train::loadTaskWithSets(taskOrConfig, overrides);
      eo.numEnvs = numEnvs.value_or(64);
      eo.seed = seed.value_or(0);
    }
    if (eo.numEnvs < 1) throw std::invalid_argument("num_envs must be at least 1");
    env_ = std::make_unique<envs::LocomotionEnv>(std::move(task), eo);
    env_->reset();
    if (curriculum_) train::applyCurriculum(*curriculum_, 0, *env_, true);
  }

  // The training config's curriculum at `iteration` (as the trainer sets it before each one).
  void applyCurriculum(int iteration) {
    if (!curriculum_)
      throw std::invalid_argument(
          "apply_curriculum: the env was made from a task, not a "
          "training config with a curriculum");
    train::applyCurriculum(*curriculum_, iteration, *env_, false);
  }

  py::tuple step(const torch::Tensor& actions) {
    if (actions.dim() != 2 || actions.size(0) != env_->numEnvs() ||
        actions.size(1) != env_->numActions())
      throw std::invalid_argument("actions must have shape [" + std::to_string(env_->numEnvs()) +
                                  ", " + std::to_string(env_->numActions()) + "], got " +
                                  c10::str(actions.sizes()));
    const bool graph =
        torch::GradMode::is_enabled() &&
        (actions.requires_grad() || env_->q().requires_grad() || env_->v().requires_grad());
    const envs::StepResult r = withoutGil([&] {
      env_->setDifferentiable(graph);
      return env_->step(actions);
    });
    py::dict extras;
    extras["time_outs"] = r.truncated;
    extras["terminated"] = r.terminated;
    extras["terminal_observations"] = r.extras.terminalObs;
    extras["reset_ids"] = r.extras.resetIds;
    extras["reward_terms"] = r.extras.rewardTerms;
    py::dict episode, log;
    for (const auto& [key, value] : r.extras.log) {
      log[py::str(key)] = value;
      if (key.rfind("Episode/", 0) == 0) episode[py::str(key.substr(8))] = value;
    }
    extras["episode"] = episode;
    extras["log"] = log;
    extras["observations"] = criticGroup(r.criticObs);
    if (r.extras.terminalCriticObs.defined())
      extras["terminal_critic_observations"] = r.extras.terminalCriticObs;
    return py::make_tuple(r.obs, r.rewards, torch::logical_or(r.terminated, r.truncated), extras);
  }

  py::tuple reset() {
    const torch::Tensor obs = withoutGil([&] {
      env_->setDifferentiable(false);
      return env_->reset();
    });
    return py::make_tuple(obs, observationExtras());
  }

  py::tuple observations() const {
    return py::make_tuple(env_->observations(), observationExtras());
  }
  // rsl_rl's num_privileged_obs: the critic's own observations, None where it has none.
  py::object numPrivilegedObs() const {
    return env_->numCriticObs() > 0 ? py::object(py::int_(env_->numCriticObs())) : py::none();
  }

  std::map<std::string, torch::Tensor> stateDict() const { return env_->stateDict(); }
  void loadStateDict(const std::map<std::string, torch::Tensor>& s) {
    env_->setDifferentiable(false);
    env_->loadStateDict(s);
  }
  void setState(const torch::Tensor& q, const torch::Tensor& v) {
    env_->setDifferentiable(false);
    env_->setState(q, v);
  }

  envs::LocomotionEnv& env() { return *env_; }
  const envs::LocomotionEnv& env() const { return *env_; }

 private:
  // extras["observations"]: rsl_rl's observation groups, {"critic": the critic's own
  // observations} where the task has critic_observations, else empty.
  static py::dict criticGroup(const torch::Tensor& criticObs) {
    py::dict groups;
    if (criticObs.defined()) groups["critic"] = criticObs;
    return groups;
  }
  py::dict observationExtras() const {
    py::dict extras;
    extras["observations"] = criticGroup(env_->criticObservations());
    return extras;
  }

  std::unique_ptr<envs::LocomotionEnv> env_;
  std::optional<train::CurriculumConfig> curriculum_;
};

}  // namespace

void bindEnv(py::module_& m) {
  py::class_<Env>(m, "Env", R"doc(
A batch of locomotion environments, rsl_rl's VecEnv: step(actions) -> (obs, rewards, dones,
extras), reset() and get_observations() -> (obs, extras). extras of a step: "time_outs" (the
episode reached its time limit), "terminated", "terminal_observations" (observations of the
states reached before the resets: bootstrap truncated episodes from them), "reset_ids",
"reward_terms" [N, terms] (columns: reward_names), "episode" (per-term means of the episodes that
ended in this step) and "log" (the same with their "Episode/" keys and the env's counters).
A task with critic_observations (an asymmetric actor-critic) gives the critic's own observations
as extras["observations"]["critic"] (rsl_rl's observation groups; num_privileged_obs is their
size, else None) and a step's "terminal_critic_observations".
A step is differentiable (the simulator's hand-written backward pass) when torch's grad mode is
on and the actions or the state carried from earlier differentiable steps require grad;
detach() cuts that history (as SHAC does at the start of every window). Keep the env alive
while a graph through it is.)doc")
      .def("step", &Env::step, py::arg("actions"))
      .def("reset", &Env::reset, "resets every env: (obs, extras)")
      .def("get_observations", &Env::observations, "(obs, extras) of the current state")
      .def(
          "detach", [](Env& e) { e.env().detach(); },
          "cuts the autograd history: the current state and observations become leaves")
      .def("apply_curriculum", &Env::applyCurriculum, py::arg("iteration"),
           "a training config's curriculum factors and reward weights at this iteration")
      .def(
          "seed", [](Env& e, std::uint64_t s) { e.env().seed(s); }, py::arg("seed"),
          "reseeds every random draw (resets, commands, noise, pushes, randomisation)")
      .def("state_dict", &Env::stateDict,
           "everything needed to continue exactly from here (detached copies)")
      .def("load_state_dict", &Env::loadStateDict, py::arg("state"))
      .def("set_state", &Env::setState, py::arg("q"), py::arg("v"),
           "overwrites q [N, nq], v [N, nv] of every env and recomputes the observations")
      .def(
          "set_commands", [](Env& e, const torch::Tensor& c) { e.env().setCommands(c); },
          py::arg("commands"), "velocity commands [N, 3]: v_x, v_y [m/s], yaw rate [rad/s]")
      .def(
          "set_terrain_tile",
          [](Env& e, int level, const std::string& type) { e.env().setTerrainTile(level, type); },
          py::arg("level"), py::arg("terrain_type"),
          "every env on tiles of this sub-terrain type and level from its next reset on")
      .def_property_readonly("num_envs", [](const Env& e) { return e.env().numEnvs(); })
      .def_property_readonly("num_obs", [](const Env& e) { return e.env().numObs(); })
      .def_property_readonly("num_privileged_obs", &Env::numPrivilegedObs)
      .def_property_readonly("num_actions", [](const Env& e) { return e.env().numActions(); })
      .def_property_readonly("max_episode_length",
                             [](const Env& e) { return e.env().maxEpisodeLength(); })
      .def_property_readonly("episode_length_buf",
                             [](const Env& e) { return e.env().episodeLength(); })
      .def_property_readonly("dt", [](const Env& e) { return e.env().envDt(); })
      .def_property_readonly("device", [](const Env&) { return "cpu"; })
      .def_property_readonly("reward_names", [](const Env& e) { return e.env().rewardNames(); })
      .def_property_readonly("observation_layout",
                             [](const Env& e) { return e.env().observationLayout(); })
      .def_property_readonly("q", [](const Env& e) { return e.env().q(); })
      .def_property_readonly("v", [](const Env& e) { return e.env().v(); })
      .def_property_readonly("commands", [](const Env& e) { return e.env().commands(); })
      .def_property_readonly("terrain_levels", [](const Env& e) { return e.env().terrainLevels(); })
      .def_property_readonly("task", [](const Env& e) { return envs::toYaml(e.env().task()); })
      .def_property_readonly("summary", [](const Env& e) { return e.env().summary(); });

  m.def(
      "make_env",
      [](const std::string& task, std::optional<int> numEnvs, std::optional<std::uint64_t> seed,
         const std::vector<std::string>& overrides, int threads, const py::object& dtype) {
        return std::make_unique<Env>(task, numEnvs, seed, overrides, threads, dtype);
      },
      py::arg("task"), py::arg("num_envs") = py::none(), py::arg("seed") = py::none(),
      py::arg("overrides") = std::vector<std::string>{}, py::arg("threads") = 2,
      py::arg("dtype") = py::str("float32"), R"doc(
An Env of a task (a name from configs/tasks, or a task YAML) or of a training config (its task
with its curriculum's starting values; num_envs and seed default to the config's). overrides:
"key.path=value" (YAML values), relative to the file given, as `diffloco eval --set` for a task
and `diffloco train --set` for a training config. dtype of observations and rewards: float32 or
float64 (the state is float64).)doc");
}

}  // namespace diffloco::python
