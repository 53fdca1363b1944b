// A closed interval of numbers: YAML `[low, high]`, or one number for low = high.
#pragma once

namespace diffloco::config {

struct Range {
  double lo = 0, hi = 0;
  double width() const { return hi - lo; }
};

}  // namespace diffloco::config
