// The training configuration: one typed tree read strictly from YAML by the config archive
// (config/archive.h: every struct lists its fields once in a visit(); the reader, the writer of
// the resolved config and the flattener are visitors), with command-line overrides
// `--set a.b.c=value`.
//
//   name: walk_quadruped_shac        # run name (the run folder's suffix)
//   algorithm: shac                  # shac | ppo: selects the section below
//   seed: 0
//   init_from: runs/<run>            # optional warm start (networks and normaliser)
//   task: walk                       # a task name (configs/tasks/walk.yaml), a path, inline,
//                                    # or {extends: walk, sim: {contact: hard}}: a task with
//                                    # keys changed (as --set task.sim.contact=hard would)
//   shac: {...}                      # algorithms/config.h (only the selected algorithm's section)
//   policy: {...}                    # policies/config.h
//   curriculum: {...}                # train/curriculum.h (optional: none by default)
//   run: {...}                       # RunConfig below
//
// Errors name the file and the line (or the --set argument), the key path and what was expected;
// an unknown key comes with the closest known one ("did you mean").
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/config.h"
#include "envs/task_config.h"
#include "policies/config.h"
#include "train/curriculum.h"

namespace diffloco::train {

// Settings of the run itself (not of the learning problem).
struct RunConfig {
  int checkpointEvery = 50;  // iterations between checkpoints (and one at the end)
  bool verbose = false;      // per-term rewards and losses on the console
  // Torch intra-op threads. The simulator's pool (sim_threads) and torch share the machine's
  // cores; they run one after the other (rollout steps, then network passes), so each may use
  // all cores. On the small tensors of SHAC (64 envs) torch's threads only add synchronisation
  // (see the measurements in the README); PPO's minibatches of 12k samples gain from 2.
  int torchThreads = 1;
  int simThreads = 2;  // simulator worker threads
  // Where the simulator steps and differentiates the worlds: the sim_threads pool, or the first
  // CUDA device, one thread per world (batch::BatchPath::Cuda, the same functions; the env's terms
  // and the networks stay on the CPU).
  enum class SimDevice { Cpu, Cuda };
  SimDevice simDevice = SimDevice::Cpu;
  int maxNanIterations = 5;  // stop after this many iterations in a row with a skipped update
  bool tensorboard = true;   // write TensorBoard event files

  template <class V>
  void visit(V& v) {
    v.field("checkpoint_every", checkpointEvery, "iterations between checkpoints", V::atLeast(1));
    v.field("verbose", verbose, "print per-term rewards and losses every iteration");
    v.field("torch_threads", torchThreads, "torch intra-op threads", V::between(1, 256));
    v.field("sim_threads", simThreads, "simulator worker threads", V::between(1, 256));
    std::string device = simDevice == SimDevice::Cuda ? "cuda" : "cpu";
    v.field("sim_device", device,
            "where the simulator steps and differentiates the worlds: cpu (sim_threads) or cuda "
            "(the first CUDA device; the env's terms and the networks stay on the CPU)",
            V::oneOf({"cpu", "cuda"}));
    simDevice = device == "cuda" ? SimDevice::Cuda : SimDevice::Cpu;
    v.field("max_nan_iterations", maxNanIterations,
            "stop after this many iterations in a row with a non-finite loss or gradient",
            V::atLeast(1));
    v.field("tensorboard", tensorboard, "write TensorBoard event files");
  }
};

struct TrainConfig {
  std::string name;                // default: the config file's stem
  std::string algorithm = "shac";  // shac | ppo
  std::int64_t seed = 0;
  // Warm start (fine-tuning, curricula): a run folder or a checkpoint file; empty: none.
  std::string initFrom;
  envs::TaskConfig task;   // as resolved (overrides applied); envs::toYaml writes it
  std::string taskSource;  // where it came from (file, or "inline in <config>")
  algorithms::ShacConfig shac;
  algorithms::PpoConfig ppo;
  policies::PolicyConfig policy;
  CurriculumConfig curriculum;
  RunConfig run;

  int iterations() const { return algorithm == "shac" ? shac.iterations : ppo.iterations; }
  int numEnvs() const { return algorithm == "shac" ? shac.numEnvs : ppo.numEnvs; }
};

// Reads a training config file and applies `sets` ("a.b.c=value", YAML values) on top.
TrainConfig loadTrainConfig(const std::string& path, const std::vector<std::string>& sets = {});
// The same from YAML text; `source` names it in messages (tests, resolved configs).
TrainConfig parseTrainConfig(const std::string& yamlText, const std::string& source,
                             const std::vector<std::string>& sets = {});

// A task from its YAML text with "key.path=value" overrides (YAML values, as --set; keys relative
// to the task, e.g. randomization.push_velocity=0) applied, read strictly: `diffloco eval --set`.
// An error about an overridden key names its --set argument.
envs::TaskConfig parseTaskWithSets(const std::string& taskYaml, const std::string& source,
                                   const std::vector<std::string>& sets);
// The same from a task file, by name (configs/tasks/<name>.yaml) or path, as a training config's
// `task:` resolves it (fitted actuator file inlined, name = file stem): `diffloco eval --task`.
envs::TaskConfig loadTaskWithSets(const std::string& nameOrPath,
                                  const std::vector<std::string>& sets);

// The fully resolved config as YAML (every key, with its documentation as comments; the task
// inline): reading it back gives the same config.
std::string toYaml(const TrainConfig& c);
// (key path, value) of every setting, task included, in order: for comparing configs.
std::vector<std::pair<std::string, std::string>> flatten(const TrainConfig& c);

}  // namespace diffloco::train
