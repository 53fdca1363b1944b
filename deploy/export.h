// `diffloco export`: a trained policy as one TorchScript file that runs without diffloco.
//
// The module is built from C++ (torch::jit::Module, register_parameter / register_buffer, define()
// with TorchScript source) and holds:
//   forward(obs) -> a                    obs [B, num_obs] (any float dtype, computed in float32):
//                                        normaliser (x - mean) * rsqrt(var + eps), the actor's MLP
//                                        mean, tanh when the actor squashes; deterministic. a is
//                                        the action the env receives BEFORE its clip and scale.
//   joint_targets(a) -> q*               default_pos + action_scale * clamp(a, -clip, clip)
//   actuator_torque(q*, q, qd) -> tau    the PD law of sim/actuator.h (per-joint effort limit,
//                                        speed-torque line), in the inputs' dtype
//   metadata_json                        string attribute: deploy/policy_metadata.h as JSON
// and beside it `<stem>.yaml` (policy.pt -> policy.yaml) with the same metadata.
#pragma once

#include <torch/script.h>

#include <string>

#include "deploy/policy_metadata.h"
#include "policies/actor_critic.h"

namespace diffloco::deploy {

// The module for an actor and its metadata (tests build it directly).
torch::jit::Module buildExportModule(policies::Actor& actor, const PolicyMetadata& meta);

struct ExportResult {
  std::string modulePath, yamlPath;
  PolicyMetadata metadata;
};

// RUN: a run folder (policy.pt and config.yaml from `diffloco train`) or a policy.pt whose folder
// holds config.yaml; `configPath` overrides where the config is read from. Writes `out` and the
// YAML beside it atomically.
ExportResult exportPolicy(const std::string& run, const std::string& out,
                          const std::string& configPath = "");

// Writes a module atomically (.tmp, then rename).
void saveModuleAtomic(const torch::jit::Module& m, const std::string& path);

}  // namespace diffloco::deploy
