// Shared by the fuzz targets (libFuzzer, tools/fuzz.sh): the input is written to a file, since
// the readers take paths, and every error must name that file, so that a user can find what is
// wrong. A crash, a sanitizer report, a hang (libFuzzer's -timeout) or an error that does not
// name the file is a finding.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

namespace diffloco::fuzz {

// A per-process file in /tmp (or $TMPDIR) holding the current input.
inline std::string writeInput(const uint8_t* data, size_t size, const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/diffloco_fuzz_" +
                           std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `read` and accepts success or an exception whose message names `path` (or, for errors
// about a command-line override, one of `alsoNamed`: the --set arguments).
template <class F>
void expectNamedErrors(const std::string& path, F&& read,
                       const std::vector<std::string>& alsoNamed = {}) {
  try {
    read();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) return;
    for (const auto& name : alsoNamed)
      if (!name.empty() && what.find(name) != std::string::npos) return;
    std::fprintf(stderr, "error without the file name %s: %s\n", path.c_str(), e.what());
    std::abort();
  }
}

}  // namespace diffloco::fuzz
