// The training configuration: one typed tree read strictly from YAML (Drake style: every struct
// lists its fields once in a visit(); readers, the writer of the resolved config and the
// flattener are visitors), with command-line overrides `--set a.b.c=value`.
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
#include "envs/did_you_mean.h"
#include "envs/task_config.h"
#include "policies/config.h"
#include "train/curriculum.h"

namespace diffloco::train {

// A constraint on a field: numeric range (also per entry of a list), list size, or choices.
struct Check {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool loOpen = false, hiOpen = false;
  int size = -1;  // lists: required number of entries
  std::vector<std::string> choices;

  Check sized(int n) const {
    Check c = *this;
    c.size = n;
    return c;
  }
  bool accepts(double x) const {
    return (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi);
  }
  std::string describe() const;  // "must be >= 1", "must be in [0, 1)", ...
};

// The constraint vocabulary of the visit() functions (V::atLeast(1), ...).
struct Checks {
  static Check range(double lo, double hi, bool loOpen, bool hiOpen) {
    Check c;
    c.lo = lo, c.hi = hi, c.loOpen = loOpen, c.hiOpen = hiOpen;
    return c;
  }
  static Check atLeast(double lo) { return range(lo, Check().hi, false, false); }
  static Check greater(double lo) { return range(lo, Check().hi, true, false); }
  static Check between(double lo, double hi) { return range(lo, hi, false, false); }
  static Check openLow(double lo, double hi) { return range(lo, hi, true, false); }
  static Check halfOpen(double lo, double hi) { return range(lo, hi, false, true); }
  static Check positive() { return greater(0); }
  static Check oneOf(std::vector<std::string> choices) {
    Check c;
    c.choices = std::move(choices);
    return c;
  }
};

// Settings of the run itself (not of the learning problem).
struct RunConfig {
  int checkpointEvery = 50;  // iterations between checkpoints (and one at the end)
  bool verbose = false;      // per-term rewards and losses on the console
  // Torch intra-op threads. The simulator's pool (sim_threads) and torch share the machine's
  // cores; they run one after the other (rollout steps, then network passes), so each may use
  // all cores. On the small tensors of SHAC (64 envs) torch's threads only add synchronisation
  // (see the measurements in the README); PPO's minibatches of 12k samples gain from 2.
  int torchThreads = 1;
  int simThreads = 2;        // simulator worker threads
  int maxNanIterations = 5;  // stop after this many iterations in a row with a skipped update
  bool tensorboard = true;   // write TensorBoard event files

  template <class V>
  void visit(V& v) {
    v.field("checkpoint_every", checkpointEvery, "iterations between checkpoints",
            V::atLeast(1));
    v.field("verbose", verbose, "print per-term rewards and losses every iteration");
    v.field("torch_threads", torchThreads, "torch intra-op threads", V::between(1, 256));
    v.field("sim_threads", simThreads, "simulator worker threads", V::between(1, 256));
    v.field("max_nan_iterations", maxNanIterations,
            "stop after this many iterations in a row with a non-finite loss or gradient",
            V::atLeast(1));
    v.field("tensorboard", tensorboard, "write TensorBoard event files");
  }
};

struct TrainConfig {
  std::string name;               // default: the config file's stem
  std::string algorithm = "shac";  // shac | ppo
  std::int64_t seed = 0;
  // Warm start (fine-tuning, curricula): a run folder or a checkpoint file; empty: none.
  std::string initFrom;
  envs::TaskConfig task;
  std::string taskYaml;    // the task as resolved (overrides applied), YAML text
  std::string taskSource;  // where it came from (file, or "inline in <config>")
  algorithms::ShacConfig shac;
  algorithms::PpoConfig ppo;
  policies::PolicyConfig policy;
  CurriculumConfig curriculum;
  RunConfig run;

  int iterations() const { return algorithm == "shac" ? shac.iterations : ppo.iterations; }
  int numEnvs() const { return algorithm == "shac" ? shac.numEnvs : ppo.numEnvs; }
};

// A command-line argument as messages show it: control characters as \xHH (a NUL would end the
// message, a carriage return overwrite it).
std::string printableArgument(const std::string& s);

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

using envs::didYouMean;  // envs/did_you_mean.h, shared with the task reader
using envs::editDistance;

}  // namespace diffloco::train
