// libFuzzer target: an exported policy's metadata (runtime/policy_metadata.h), the contract a
// robot-side controller reads (YAML or JSON text).
#include "runtime/policy_metadata.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "policy.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  diffloco::fuzz::expectNamedErrors(path,
                                    [&] { diffloco::deploy::parsePolicyMetadata(text, path); });
  return 0;
}
