#include <gtest/gtest.h>

#include <set>

#include "robots/robot.h"
#include "tests/viz/robot_pixels.h"
#include "viz/frame_renderer.h"

namespace diffloco::viz {
namespace {

using testing::basePixels;

// The quadruped standing and sliding forward (+x) at `speed` for `seconds`: a rollout whose
// motion the frames must show.
Rollout slidingRobot(double speed, double seconds, int envs = 1) {
  const Robot robot = loadRobot("quadruped");
  const double dt = 0.02;
  Rollout r(robot.model, envs, dt);
  r.hasCommands = true;
  const VecX v = VecX::Zero(robot.model.nv());
  for (int e = 0; e < envs; ++e)
    for (int k = 0; k * dt < seconds - 1e-9; ++k) {
      VecX q = robot.standingConfiguration();
      q[0] += speed * k * dt;
      r.record(e, k * dt, q, v, Vec3(speed, 0, 0));
    }
  return r;
}

RenderOptions small(CameraMode camera) {
  RenderOptions o;
  o.width = 160;
  o.height = 96;
  o.fps = 10;
  o.camera = camera;
  return o;
}

TEST(FrameRenderer, FrameCountCoversTheRollout) {
  const Rollout r = slidingRobot(1.0, 2.0);
  EXPECT_EQ(FrameRenderer(r, small(CameraMode::kFixed)).frameCount(), 20);
}

TEST(FrameRenderer, FramesAreNotBlankAndShowTheRobot) {
  const Rollout r = slidingRobot(1.0, 1.0);
  const Image img = FrameRenderer(r, small(CameraMode::kFollow)).render(0);
  ASSERT_EQ(img.width, 160);
  ASSERT_EQ(img.height, 96);
  // Many distinct colours (ground, sky, robot, text), and the robot's base covers a visible area
  // near the middle of the frame.
  std::set<int> colours;
  for (size_t i = 0; i < img.rgb.size(); i += 3)
    colours.insert(img.rgb[i] << 16 | img.rgb[i + 1] << 8 | img.rgb[i + 2]);
  EXPECT_GT(colours.size(), 20u);
  const auto base = basePixels(img);
  EXPECT_GT(base.count, 40);
  EXPECT_NEAR(base.x, 80, 25);
  EXPECT_NEAR(base.y, 48, 25);
}

TEST(FrameRenderer, FixedCameraSeesTheRobotMoveInTheCommandedDirection) {
  // Commanded +x: with the camera on the robot's right side, that is to the right of the frame.
  for (double speed : {1.0, -1.0}) {
    const Rollout r = slidingRobot(speed, 1.0);
    const FrameRenderer renderer(r, small(CameraMode::kFixed));
    const auto first = basePixels(renderer.render(0));
    const auto last = basePixels(renderer.render(renderer.frameCount() - 1));
    ASSERT_GT(first.count, 20);
    ASSERT_GT(last.count, 20);
    EXPECT_GT(speed * (last.x - first.x), 10) << "speed " << speed;
    // The projection the renderer reports agrees with the pixels.
    const Vec3 p0 = renderer.projectedBase(0),
               p1 = renderer.projectedBase(renderer.frameCount() - 1);
    EXPECT_GT(speed * (p1.x() - p0.x()), 10);
  }
}

TEST(FrameRenderer, FollowCameraKeepsTheRobotInPlace) {
  const Rollout r = slidingRobot(1.0, 1.0);
  const FrameRenderer renderer(r, small(CameraMode::kFollow));
  const auto first = basePixels(renderer.render(0));
  const auto last = basePixels(renderer.render(renderer.frameCount() - 1));
  EXPECT_NEAR(last.x, first.x, 2);
  // ... while the ground moves under it: the frames differ.
  EXPECT_NE(renderer.render(0).rgb, renderer.render(renderer.frameCount() - 1).rgb);
}

TEST(FrameRenderer, SeveralEnvsAreDrawnSideBySide) {
  const Rollout one = slidingRobot(1.0, 0.5, 1), three = slidingRobot(1.0, 0.5, 3);
  const int pixelsOne = basePixels(FrameRenderer(one, small(CameraMode::kFollow)).render(0)).count;
  const int pixelsThree =
      basePixels(FrameRenderer(three, small(CameraMode::kFollow)).render(0)).count;
  EXPECT_GT(pixelsThree, pixelsOne);  // further away, but three of them
}

TEST(FrameRenderer, RejectsBadOptions) {
  const Rollout r = slidingRobot(1.0, 0.5);
  RenderOptions o = small(CameraMode::kFollow);
  o.width = 161;
  EXPECT_THROW(FrameRenderer(r, o), std::invalid_argument);
  EXPECT_THROW(parseCameraMode("orbit"), std::invalid_argument);
}

}  // namespace
}  // namespace diffloco::viz
