#include "viz/ground_window.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace diffloco::viz {

sim::HeightField cropHeightField(const sim::HeightField& field, double xMin, double yMin,
                                 double xMax, double yMax) {
  sim::validateHeightField(field, "cropHeightField");
  // First and last sample index covering [lo, hi] along one axis, at least two samples.
  auto range = [&](double lo, double hi, double origin, int n) {
    int i0 = static_cast<int>(std::floor((lo - origin) / field.spacing));
    int i1 = static_cast<int>(std::ceil((hi - origin) / field.spacing));
    i0 = std::clamp(i0, 0, n - 2);
    i1 = std::clamp(i1, i0 + 1, n - 1);
    return std::pair<int, int>(i0, i1);
  };
  const auto [ix0, ix1] = range(xMin, xMax, field.originX, field.nx);
  const auto [iy0, iy1] = range(yMin, yMax, field.originY, field.ny);
  sim::HeightField out;
  out.spacing = field.spacing;
  out.originX = field.originX + ix0 * field.spacing;
  out.originY = field.originY + iy0 * field.spacing;
  out.nx = ix1 - ix0 + 1;
  out.ny = iy1 - iy0 + 1;
  out.heights.reserve(static_cast<size_t>(out.nx) * out.ny);
  for (int iy = iy0; iy <= iy1; ++iy)
    for (int ix = ix0; ix <= ix1; ++ix)
      out.heights.push_back(std::round(field.at(ix, iy) * kGroundHeightSteps) / kGroundHeightSteps);
  return out;
}

std::shared_ptr<const sim::HeightField> groundWindow(const sim::HeightField* field,
                                                     const Rollout& rollout, double margin) {
  if (!field) return nullptr;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double xMin = kInf, yMin = kInf, xMax = -kInf, yMax = -kInf;
  for (const EnvRollout& e : rollout.envs)
    for (const RolloutFrame& f : e.frames) {
      xMin = std::min(xMin, f.q[0]), xMax = std::max(xMax, f.q[0]);
      yMin = std::min(yMin, f.q[1]), yMax = std::max(yMax, f.q[1]);
    }
  if (!(xMin <= xMax)) return nullptr;
  return std::make_shared<const sim::HeightField>(
      cropHeightField(*field, xMin - margin, yMin - margin, xMax + margin, yMax + margin));
}

}  // namespace diffloco::viz
