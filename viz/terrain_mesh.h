// A height field drawn in the frames: two flat triangles per grid cell through the samples (as
// MuJoCo's hfield), coloured by the ground's checker at the cell's world position (motion stays
// visible as on the plane) times a Lambert factor of the triangle's normal relative to flat
// ground (steps and slopes read as light and shade), darkened by the robots' blob shadows and
// faded into the sky with distance like the plane. Skirts close the gap between the window's edge
// and the plane z = 0 that drawGround draws around it.
#pragma once

#include <memory>
#include <vector>

#include "sim/terrain.h"
#include "viz/ground.h"
#include "viz/rasterizer.h"

namespace diffloco::viz {

class TerrainMesh {
 public:
  explicit TerrainMesh(std::shared_ptr<const sim::HeightField> field, const GroundStyle& style = {},
                       const Light& light = {});

  // Depth-tested: draw after drawGround(..., &field()) and before the robots.
  void draw(Canvas& canvas, const Camera& camera, const std::vector<BlobShadow>& shadows) const;
  const sim::HeightField& field() const { return *field_; }

 private:
  struct Skirt {
    Vec3 top[2], bottom[2];  // a quad from the window's edge down (or up) to z = 0
    Rgb color;
  };
  static constexpr int kBlock = 16;  // cells per side of a block culled as one

  Vec3 vertex(int ix, int iy) const;
  Rgb shaded(Rgb base, double shadow, double distance) const;
  static double shadowAt(double x, double y, const std::vector<BlobShadow>& shadows);
  bool blockVisible(const Camera& camera, int bx, int by, double width, double height) const;
  // `p`: scratch for the block's projected vertices.
  void drawBlock(Canvas& canvas, const Camera& camera, const std::vector<BlobShadow>& shadows,
                 int bx, int by, std::vector<Projected>& p) const;

  std::shared_ptr<const sim::HeightField> field_;
  GroundStyle style_;
  std::vector<Rgb>
      colors_;  // per triangle, lit: 2 per cell, cell (ix, iy) at 2 * (iy * (nx-1) + ix)
  std::vector<Skirt> skirts_;
  int blocksX_ = 0, blocksY_ = 0;
  std::vector<double> blockMin_, blockMax_;  // height range per block, by * blocksX_ + bx
};

}  // namespace diffloco::viz
