#include <gtest/gtest.h>

#include <cmath>

#include "robots/robot.h"
#include "viz/frame_renderer.h"
#include "viz/terrain_mesh.h"

namespace diffloco::viz {
namespace {

// 6 m x 6 m around the origin at 0.05 m, flat at z = 0 except a `block` m high 1 m x 1 m block
// centred at (0, 0).
std::shared_ptr<const sim::HeightField> blockField(double block) {
  auto f = std::make_shared<sim::HeightField>();
  f->originX = f->originY = -3;
  f->spacing = 0.05;
  f->nx = f->ny = 121;
  for (int iy = 0; iy < f->ny; ++iy)
    for (int ix = 0; ix < f->nx; ++ix) {
      const double x = f->originX + ix * f->spacing, y = f->originY + iy * f->spacing;
      f->heights.push_back(std::abs(x) <= 0.5 && std::abs(y) <= 0.5 ? block : 0.0);
    }
  return f;
}

// The plane alone, or the plane around the field's window and the field, as a frame draws them.
Canvas groundOnly(const Camera& cam, const std::shared_ptr<const sim::HeightField>& field) {
  Canvas canvas(cam.width(), cam.height());
  drawGround(canvas, cam, {}, {}, field.get());
  if (field) TerrainMesh(field).draw(canvas, cam, {});
  return canvas;
}

TEST(TerrainMesh, ABlockIsDrawnInFrontOfThePlane) {
  const Camera cam(Vec3(0.5, -4, 2), Vec3(0, 0, 0.25), 320, 180);
  const Canvas plane = groundOnly(cam, nullptr), block = groundOnly(cam, blockField(0.5));
  // The pixel looking at the block's top centre sees it 0.5 m above the plane: nearer.
  const Projected top = cam.project(Vec3(0, 0, 0.5));
  const size_t i = static_cast<size_t>(std::floor(top.y)) * 320 + static_cast<size_t>(top.x);
  EXPECT_NEAR(block.depth[i], top.depth, 0.02);
  EXPECT_GT(plane.depth[i], block.depth[i] + 0.2);
  // The block's front face (facing the camera, -y) is drawn: shaded differently from the top.
  const Projected front = cam.project(Vec3(0, -0.5, 0.25));
  const std::uint8_t* f = block.color.at(static_cast<int>(front.x), static_cast<int>(front.y));
  const std::uint8_t* t = block.color.at(static_cast<int>(top.x), static_cast<int>(top.y));
  EXPECT_NE(f[0], t[0]);
}

TEST(TerrainMesh, FlatFieldLooksLikeThePlane) {
  // Lambert relative to flat ground, the same checker and fog: a flat field differs from the
  // plane only along triangle edges (one pixel of rounding at most).
  const Camera cam(Vec3(0.5, -4, 2), Vec3(0, 0, 0.25), 320, 180);
  const Canvas plane = groundOnly(cam, nullptr), flat = groundOnly(cam, blockField(0));
  long differing = 0;
  for (size_t k = 0; k < plane.color.rgb.size(); ++k)
    differing += std::abs(plane.color.rgb[k] - flat.color.rgb[k]) > 8;
  EXPECT_LT(differing, static_cast<long>(plane.color.rgb.size() / 100));
}

// The quadruped standing on top of a block of `height` m (0: the plane).
Rollout standingOnBlock(double height) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  VecX q = robot.standingConfiguration();
  q[2] += height;
  for (int k = 0; k < 5; ++k) r.record(0, k * 0.02, q, VecX::Zero(robot.model.nv()), Vec3::Zero());
  if (height > 0) r.ground = blockField(height);
  return r;
}

TEST(TerrainMesh, FramesOfARolloutOnAHeightFieldShowIt) {
  RenderOptions o;
  o.width = 320, o.height = 180, o.overlay = false, o.camera = CameraMode::kFixed;
  const Rollout plane = standingOnBlock(0), block = standingOnBlock(0.5);
  const Image a = FrameRenderer(plane, o).render(0), b = FrameRenderer(block, o).render(0);
  // The camera rises with the ground: the robot stays above the same spot ...
  const Vec3 pa = FrameRenderer(plane, o).projectedBase(0),
             pb = FrameRenderer(block, o).projectedBase(0);
  EXPECT_NEAR(pa.x(), pb.x(), 2);
  // ... and the block's front face, below the robot, is drawn where the plane showed its checker.
  long differing = 0;
  for (size_t k = 0; k < a.rgb.size(); ++k) differing += std::abs(a.rgb[k] - b.rgb[k]) > 20;
  EXPECT_GT(differing, static_cast<long>(a.rgb.size() / 50));
}

}  // namespace
}  // namespace diffloco::viz
