// libFuzzer target: the training config (train/config.h) with command-line overrides. The input
// is the config's YAML; lines after a line `#--set` are `--set` arguments, one per (non-empty)
// line. An error must name the config file or the --set argument it is about.
#include <vector>

#include "config/archive.h"
#include "tests/fuzz/fuzz_input.h"
#include "train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto input =
      diffloco::fuzz::splitSets(std::string(reinterpret_cast<const char*>(data), size));
  const std::string path = diffloco::fuzz::writeInput(
      reinterpret_cast<const uint8_t*>(input.yaml.data()), input.yaml.size(), "train.yaml");
  std::vector<std::string> shown;  // as messages show them (control characters escaped)
  for (const auto& s : input.sets) shown.push_back(diffloco::config::printable(s));
  diffloco::fuzz::expectNamedErrors(
      path, [&] { diffloco::train::loadTrainConfig(path, input.sets); }, shown);
  return 0;
}
