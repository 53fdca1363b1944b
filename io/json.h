// JSON written through one library (nlohmann/json). jsonNumber: a number as JSON has it, which
// has no infinities or NaN (null) and where a count reads as an integer (3, not 3.0).
#pragma once

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace diffloco::io {

inline nlohmann::ordered_json jsonNumber(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0)  // 2^53: exact as an integer
    return static_cast<std::int64_t>(v);
  return v;
}

}  // namespace diffloco::io
