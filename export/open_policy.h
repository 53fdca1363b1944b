// What a policy path names, opened once, with one rule for where its task comes from. Used by
// `diffloco eval`, `play` and `export`.
//
// A path is a run folder (its policy.pt), a policy file of `diffloco train` (policy.pt), a
// training checkpoint (model_<N>.pt) or a file written by `diffloco export`. The rule:
//   - the task it was trained on comes from the file itself when the file records it (an exported
//     file's metadata, a checkpoint's config, a policy file's task_yaml); only a file that records
//     none takes it from a training config (the one given, else config.yaml in its folder);
//   - how it was trained (algorithm, seed, iterations, curriculum, warm starts) comes from a
//     training config: a checkpoint's own, else the one given, else config.yaml in its folder.
#pragma once

#include <torch/script.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "policies/actor_critic.h"
#include "runtime/policy_metadata.h"
#include "train/config.h"

namespace diffloco::deploy {

struct OpenedPolicy {
  enum class Kind { kPolicyFile, kCheckpoint, kExported };
  Kind kind = Kind::kPolicyFile;
  std::string file;  // the file read
  // kPolicyFile, kCheckpoint: the actor with its normaliser.
  policies::Actor actor{nullptr};
  std::map<std::string, std::string> metadata;  // a policy file's metadata
  // kExported: the TorchScript module and its metadata.
  std::shared_ptr<torch::jit::Module> module;
  PolicyMetadata exported;
  // The task as trained: its resolved YAML (empty: the file records none and no config was
  // found), where that came from (for messages) and its name.
  std::string taskYaml, taskSource, taskName;
  // How it was trained, when a training config is known (see the rule above), and its file.
  std::optional<train::TrainConfig> config;
  std::string configFile;
};

// Opens `path` (configPath: a training config to use instead of config.yaml beside the file).
// Errors (no such file, not a policy, a damaged one) name the path and what was expected.
OpenedPolicy openPolicy(const std::string& path, const std::string& configPath = "");

}  // namespace diffloco::deploy
