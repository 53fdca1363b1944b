// The ONNX form of an exported policy (`diffloco export --format onnx`): the normaliser and the
// actor's deterministic action, the same function as the TorchScript file's forward(), for robot
// stacks that run ONNX Runtime. Built from C++ with the protobuf classes of Debian's libonnx (no
// Python at export time) and checked with ONNX's own checker before it is written.
//
//   input  "obs"      float32 [batch, num_obs]   (the observation of runtime/policy_metadata.h)
//   output "actions"  float32 [batch, num_actions] (before the action clip and scale)
//   metadata_props    "metadata_json": the same JSON as the TorchScript file's metadata_json;
//                     "format": its format name
//   opset 17 (LayerNormalization), IR version 8.
//
// The graph is translated from the TorchScript module's forward() graph, op by op (sub, mul,
// linear, elu, relu, tanh, layer_norm, the float cast), so it works for every file `diffloco
// export` writes, also for files exported before ONNX existed here (pretrained/); any other op is
// an error naming it.
#pragma once

#include <torch/script.h>

#include <string>

#include "runtime/policy_metadata.h"

namespace diffloco::deploy {

// The serialised ONNX ModelProto of `module`'s forward() with `meta` in metadata_props. Throws
// std::runtime_error if the graph has an op without a translation or ONNX's checker rejects it.
std::string onnxModelBytes(const torch::jit::Module& module, const PolicyMetadata& meta);

}  // namespace diffloco::deploy
