// YAML that attacks a reader through its aliases (config/yaml_guard.h refuses both): shared by the
// tests of the guard and of the readers that call it.
#pragma once

#include <string>

namespace diffloco::testing {

// A list that holds itself.
inline constexpr const char* kSelfReferentialAlias = "x: &self [*self]\n";

// Ten top-level keys a0 .. a9 (lines 1 .. 10), each a list of ten aliases to the one before:
// 10^10 nodes once expanded (a "billion laughs"). *a9 expands the whole of it.
inline std::string anchorBomb() {
  std::string s = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) s += (k ? ", " : "") + prev;
    s += "]\n";
  }
  return s;
}

}  // namespace diffloco::testing
