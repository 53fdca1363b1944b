// Shared by the fuzz targets (libFuzzer, tools/checks/fuzz.sh): the input is written to a file,
// since the readers take paths, and every error must name that file, so that a user can find what
// is wrong. A crash, a sanitizer report, a hang (libFuzzer's -timeout) or an error that does not
// name the file is a finding.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace diffloco::fuzz {

// A per-process file in /tmp (or $TMPDIR) holding the current input.
inline std::string writeInput(const uint8_t* data, size_t size, const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path =
      std::string(dir ? dir : "/tmp") + "/diffloco_fuzz_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// fuzz_train_config's input: the config's YAML, then `--set` arguments, one per non-empty line
// after a line `#--set`.
struct ConfigWithSets {
  std::string yaml;
  std::vector<std::string> sets;
};
inline ConfigWithSets splitSets(std::string text) {
  ConfigWithSets out;
  const size_t marker = text.find("#--set\n");
  if (marker != std::string::npos) {
    std::istringstream rest(text.substr(marker + 7));
    for (std::string line; std::getline(rest, line);)
      if (!line.empty()) out.sets.push_back(line);
    text.resize(marker);
  }
  out.yaml = std::move(text);
  return out;
}

// What the readers did with the inputs, printed when the fuzzer exits (libFuzzer ends with
// exit()): the inputs a reader accepted and those it refused with an error naming the file.
struct Tally {
  long accepted = 0;
  long refused = 0;
  ~Tally() {
    std::fprintf(stderr,
                 "diffloco inputs: %ld accepted, %ld refused with an error naming the file\n",
                 accepted, refused);
  }
};
inline Tally& tally() {
  static Tally counts;
  return counts;
}

// Runs `read` and accepts success or an exception whose message names `path` (or, for errors
// about a command-line override, one of `alsoNamed`: the --set arguments).
template <class F>
void expectNamedErrors(const std::string& path, F&& read,
                       const std::vector<std::string>& alsoNamed = {}) {
  try {
    read();
    ++tally().accepted;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    bool named = what.find(path) != std::string::npos;
    for (const auto& name : alsoNamed)
      named = named || (!name.empty() && what.find(name) != std::string::npos);
    if (named) {
      ++tally().refused;
      return;
    }
    std::fprintf(stderr, "error without the file name %s: %s\n", path.c_str(), e.what());
    std::abort();
  }
}

}  // namespace diffloco::fuzz
