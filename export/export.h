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
//   metadata_json                        string attribute: runtime/policy_metadata.h as JSON
// and beside it `<stem>.yaml` (policy.pt -> policy.yaml) with the same metadata.
#pragma once

#include <torch/script.h>

#include <string>

#include "policies/actor_critic.h"
#include "runtime/policy_metadata.h"

namespace diffloco::deploy {

// The module for an actor and its metadata (tests build it directly).
torch::jit::Module buildExportModule(policies::Actor& actor, const PolicyMetadata& meta);

struct ExportResult {
  std::string modulePath, onnxPath, yamlPath;  // empty: not written
  PolicyMetadata metadata;
};

// torchscript: `out` is the TorchScript file; onnx: `out` is the ONNX file (export/onnx_export.h);
// both: <stem>.pt and <stem>.onnx. The YAML is <stem>.yaml in every case.
enum class ExportFormat { TorchScript, Onnx, Both };
ExportFormat parseExportFormat(const std::string& name);  // torchscript | onnx | both

// RUN: a run folder (policy.pt and config.yaml from `diffloco train`), a policy.pt whose folder
// holds config.yaml (`configPath` overrides where the config is read from), or a file written by
// `diffloco export` (also of an older metadata format): the same network, its metadata derived
// again from the task it carries, in the current format (upgrade). Writes atomically.
ExportResult exportPolicy(const std::string& run, const std::string& out,
                          const std::string& configPath = "",
                          ExportFormat format = ExportFormat::TorchScript);

// The observation terms a policy may read (not the critic's privileged ones) with their
// definitions as a Markdown table: what docs/deploy.md shows (`diffloco export
// --describe-observations` prints it; a test keeps the page equal to it), so the page and the
// exported files have one source.
std::string observationDefinitionsMarkdown();

// Writes a module atomically (.tmp, then rename).
void saveModuleAtomic(const torch::jit::Module& m, const std::string& path);

}  // namespace diffloco::deploy
