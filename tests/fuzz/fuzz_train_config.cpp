// libFuzzer target: the training config (train/config.h) with command-line overrides. The input
// is the config's YAML; lines after a line `#--set` are `--set` arguments, one per (non-empty)
// line. An error must name the config file or the --set argument it is about.
#include <sstream>
#include <vector>

#include "config/archive.h"
#include "tests/fuzz/fuzz_input.h"
#include "train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  const size_t marker = text.find("#--set\n");
  if (marker != std::string::npos) {
    std::istringstream rest(text.substr(marker + 7));
    for (std::string line; std::getline(rest, line);)
      if (!line.empty()) sets.push_back(line);
    text.resize(marker);
  }
  const std::string path = diffloco::fuzz::writeInput(reinterpret_cast<const uint8_t*>(text.data()),
                                                      text.size(), "train.yaml");
  std::vector<std::string> shown;  // as messages show them (control characters escaped)
  for (const auto& s : sets) shown.push_back(diffloco::config::printable(s));
  diffloco::fuzz::expectNamedErrors(
      path, [&] { diffloco::train::loadTrainConfig(path, sets); }, shown);
  return 0;
}
