#include <gtest/gtest.h>

#include <cmath>

#include "robots/robot.h"
#include "viz/ground_window.h"

namespace diffloco::viz {
namespace {

// 20 m x 20 m at 0.1 m from (-10, -10): h = 0.01 x + 0.001 y^2 + 1/3 (not on the 0.1 mm grid).
sim::HeightField bigField() {
  sim::HeightField f;
  f.originX = f.originY = -10;
  f.spacing = 0.1;
  f.nx = f.ny = 201;
  for (int iy = 0; iy < f.ny; ++iy)
    for (int ix = 0; ix < f.nx; ++ix) {
      const double x = f.originX + ix * f.spacing, y = f.originY + iy * f.spacing;
      f.heights.push_back(0.01 * x + 0.001 * y * y + 1.0 / 3);
    }
  return f;
}

// The quadruped's base moving from (x0, y0) to (x1, y1) in 10 frames.
Rollout walking(double x0, double y0, double x1, double y1) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  const VecX v = VecX::Zero(robot.model.nv());
  for (int k = 0; k < 10; ++k) {
    VecX q = robot.standingConfiguration();
    q[0] = x0 + (x1 - x0) * k / 9.0;
    q[1] = y0 + (y1 - y0) * k / 9.0;
    r.record(0, k * 0.02, q, v, Vec3::Zero());
  }
  return r;
}

TEST(GroundWindow, KeepsTheSamplesAroundTheTrajectory) {
  const sim::HeightField f = bigField();
  const auto w = groundWindow(&f, walking(0, 0, 2, 1), 3.0);
  ASSERT_TRUE(w);
  // The trajectory's box [0, 2] x [0, 1] plus 3 m each side, in whole cells of the source.
  EXPECT_LE(w->originX, -3 + 1e-9);
  EXPECT_LE(w->originY, -3 + 1e-9);
  EXPECT_GE(w->originX + w->sizeX(), 5 - 1e-9);
  EXPECT_GE(w->originY + w->sizeY(), 4 - 1e-9);
  EXPECT_LT(w->nx, 90);  // a window, not the field
  EXPECT_LT(w->ny, 80);
  EXPECT_EQ(w->spacing, f.spacing);
  // Every sample is the source's at the same place, rounded to 0.1 mm.
  const int ox = static_cast<int>(std::lround((w->originX - f.originX) / f.spacing));
  const int oy = static_cast<int>(std::lround((w->originY - f.originY) / f.spacing));
  for (int iy = 0; iy < w->ny; ++iy)
    for (int ix = 0; ix < w->nx; ++ix) {
      EXPECT_NEAR(w->at(ix, iy), f.at(ix + ox, iy + oy), 0.5 / kGroundHeightSteps);
      EXPECT_EQ(w->at(ix, iy), std::round(w->at(ix, iy) * kGroundHeightSteps) / kGroundHeightSteps);
    }
}

TEST(GroundWindow, ClampsToTheFieldAndIsNullOnThePlane) {
  const sim::HeightField f = bigField();
  const auto w = groundWindow(&f, walking(8, -9, 9, -9), 3.0);
  ASSERT_TRUE(w);
  EXPECT_NEAR(w->originX + w->sizeX(), 10, 1e-9);  // the field's edge
  EXPECT_NEAR(w->originY, -10, 1e-9);
  EXPECT_NO_THROW(sim::validateHeightField(*w));
  // Entirely outside the field: still a valid (2-sample) strip at its border.
  EXPECT_NO_THROW(sim::validateHeightField(cropHeightField(f, 50, 50, 60, 60)));
  EXPECT_EQ(groundWindow(nullptr, walking(0, 0, 1, 0)), nullptr);
}

}  // namespace
}  // namespace diffloco::viz
