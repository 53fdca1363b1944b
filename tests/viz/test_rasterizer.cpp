#include <gtest/gtest.h>

#include "viz/camera.h"
#include "viz/ground.h"
#include "viz/rasterizer.h"

namespace diffloco::viz {
namespace {

// A camera 3 m behind the origin on -y, looking at it: world +x is screen right, +z up.
Camera frontCamera() {
  return Camera(Vec3(0, -3, 0), Vec3(0, 0, 0), 64, 48);
}

TEST(Camera, ProjectsTheTargetToTheCentreAndXToTheRight) {
  const Camera cam = frontCamera();
  const Projected c = cam.project(Vec3::Zero());
  EXPECT_NEAR(c.x, 32, 1e-9);
  EXPECT_NEAR(c.y, 24, 1e-9);
  EXPECT_NEAR(c.depth, 3, 1e-9);
  EXPECT_GT(cam.project(Vec3(0.5, 0, 0)).x, 32);
  EXPECT_LT(cam.project(Vec3(0, 0, 0.5)).y, 24);    // up is up on screen
  EXPECT_LE(cam.project(Vec3(0, -4, 0)).depth, 0);  // behind the camera
}

TEST(Rasterizer, FillsATriangleAndKeepsTheNearestSurface) {
  const Camera cam = frontCamera();
  Canvas canvas(64, 48);
  const Rgb red{200, 0, 0}, blue{0, 0, 200};
  // A far blue triangle, then a nearer red one over the centre: the centre must be red.
  drawTriangle(canvas, cam, Vec3(-1, 1, -1), Vec3(1, 1, -1), Vec3(0, 1, 1), blue);
  drawTriangle(canvas, cam, Vec3(-0.3, 0, -0.3), Vec3(0.3, 0, -0.3), Vec3(0, 0, 0.3), red);
  const std::uint8_t* centre = canvas.color.at(32, 24);
  EXPECT_GT(centre[0], 0);
  EXPECT_EQ(centre[2], 0);
  EXPECT_NEAR(canvas.depth[24 * 64 + 32], 3, 1e-3);
  // Drawing the blue one again does not cover the red one.
  drawTriangle(canvas, cam, Vec3(-1, 1, -1), Vec3(1, 1, -1), Vec3(0, 1, 1), blue);
  EXPECT_EQ(canvas.color.at(32, 24)[2], 0);
  // Outside both triangles nothing is drawn.
  EXPECT_EQ(canvas.color.at(1, 1)[0] + canvas.color.at(1, 1)[2], 0);
}

TEST(Rasterizer, ShadesByTheAngleToTheLight) {
  const Camera cam = frontCamera();
  Light light;
  light.towardLight = Vec3(0, -1, 0);  // from the camera's side
  Canvas lit(64, 48), grazing(64, 48);
  const Rgb white{200, 200, 200};
  drawTriangle(lit, cam, Vec3(-1, 0, -1), Vec3(1, 0, -1), Vec3(0, 0, 1), white, light);
  light.towardLight = Vec3(1, 0, 0);  // along the surface: ambient only
  drawTriangle(grazing, cam, Vec3(-1, 0, -1), Vec3(1, 0, -1), Vec3(0, 0, 1), white, light);
  EXPECT_EQ(lit.color.at(32, 24)[0], 200);
  EXPECT_EQ(grazing.color.at(32, 24)[0], static_cast<int>(200 * light.ambient));
}

TEST(Ground, CheckerBelowTheHorizonSkyAbove) {
  const Camera cam(Vec3(0, -3, 1), Vec3(0, 0, 0.5), 64, 48);
  Canvas canvas(64, 48);
  drawGround(canvas, cam, {});
  const GroundStyle style;
  const std::uint8_t* top = canvas.color.at(32, 0);
  EXPECT_EQ(top[2], style.sky.b);
  // The bottom row sees the ground nearby: both checker colours appear along it.
  bool light = false, dark = false;
  for (int x = 0; x < 64; ++x) {
    const int r = canvas.color.at(x, 47)[0];
    light |= r == style.light.r;
    dark |= r == style.dark.r;
  }
  EXPECT_TRUE(light && dark);
  EXPECT_TRUE(std::isfinite(canvas.depth[47 * 64 + 32]));
}

TEST(Image, DownsampleAveragesBlocks) {
  Image img(4, 2, {0, 0, 0});
  img.at(0, 0)[0] = 255;
  img.at(1, 1)[0] = 255;
  const Image half = downsample(img, 2);
  ASSERT_EQ(half.width, 2);
  ASSERT_EQ(half.height, 1);
  EXPECT_EQ(half.at(0, 0)[0], 128);
  EXPECT_EQ(half.at(1, 0)[0], 0);
  EXPECT_THROW(downsample(img, 3), std::invalid_argument);
}

}  // namespace
}  // namespace diffloco::viz
