// An algorithm's checkpoint through memory, written and read as the trainer does with files.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <sstream>
#include <string>

#include "algorithms/algorithm.h"

namespace diffloco::testing {

inline std::string checkpointBytes(algorithms::Algorithm& algo) {
  torch::serialize::OutputArchive out;
  algo.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  return bytes.str();
}

// The archive of checkpointBytes()'s bytes (read completely: the stream may go).
inline std::unique_ptr<torch::serialize::InputArchive> readCheckpoint(const std::string& bytes) {
  std::istringstream in(bytes);
  auto archive = std::make_unique<torch::serialize::InputArchive>();
  archive->load_from(in);
  return archive;
}

}  // namespace diffloco::testing
