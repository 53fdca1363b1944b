// The height_scan observation's grid, one definition for the training term (envs/terms.cpp) and
// the robot side (runtime/controller.h's heightScanPoints, MuJoCo's evaluation): points every
// `spacing` from x_range[0] to x_range[1] along the heading and from y_range[0] to y_range[1] to
// the left, k = i * ny + j (x outer, y inner).
#pragma once

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace diffloco::deploy {

struct HeightScanGrid {
  double x0 = 0, y0 = 0, spacing = 0;
  int nx = 0, ny = 0;

  // Throws std::invalid_argument for a spacing that is not positive or more than 1001 points
  // per axis.
  HeightScanGrid(const std::vector<double>& xRange, const std::vector<double>& yRange,
                 double spacing)
      : x0(xRange.at(0)), y0(yRange.at(0)), spacing(spacing) {
    auto count = [&](const std::vector<double>& r) {
      const double n = (r.at(1) - r.at(0)) / spacing;
      if (!(spacing > 0) || !(n >= 0) || n > 1000)
        throw std::invalid_argument("height_scan: x_range, y_range and spacing give a grid of " +
                                    std::to_string(n + 1) + " points per axis (1 to 1001)");
      return static_cast<int>(std::floor(n + 1e-9)) + 1;
    };
    nx = count(xRange);
    ny = count(yRange);
  }

  // The points in the base's yaw-aligned frame: (along the heading, to the left) [m].
  std::vector<std::array<double, 2>> local() const {
    std::vector<std::array<double, 2>> p;
    p.reserve(static_cast<size_t>(nx) * ny);
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j) p.push_back({x0 + i * spacing, y0 + j * spacing});
    return p;
  }
};

}  // namespace diffloco::deploy
