// Renders the frames of a recorded rollout offscreen: ground (the plane, or the rollout's height
// field inside its window), robots (one per env, side by side on the plane, where they are on a
// height field), a camera that follows the first robot or stays where it started, and an overlay
// with time, command and measured velocity.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "viz/image.h"
#include "viz/mesh.h"
#include "viz/rollout.h"
#include "viz/terrain_mesh.h"

namespace diffloco::viz {

enum class CameraMode { kFollow, kFixed };
CameraMode parseCameraMode(const std::string& name);  // "follow" or "fixed"; throws otherwise

struct RenderOptions {
  int width = 640, height = 360;  // output pixels (even: H.264 wants even sizes)
  int supersample = 2;            // rendered at this factor and box-filtered: smooth edges
  double fps = 25;
  CameraMode camera = CameraMode::kFollow;
  double cameraDistance = 3.4;  // eye to the followed point [m]
  double envSpacing =
      1.2;  // plane: env k is drawn k * spacing to the side (+y, away from the camera)
  bool overlay = true;
  std::string title;  // bottom line of the overlay (policy, engine); empty: none
};

class FrameRenderer {
 public:
  FrameRenderer(const Rollout& rollout, const RenderOptions& options);

  // Frames at options.fps covering the rollout's duration.
  int frameCount() const;
  Image render(int frame) const;
  // Pixel position of env `env`'s base origin in frame `frame` (x right, y down): where the tests
  // look for the robot.
  Vec3 projectedBase(int frame, int env = 0) const;

 private:
  const RolloutFrame& stateAt(int env, double time) const;
  Vec3 envOffset(int env) const {
    return rollout_.ground ? Vec3::Zero() : Vec3(0, env * options_.envSpacing, 0);
  }
  // Height of the ground under (x, y), and its mean over 2 m around it (where the camera looks:
  // steps do not jolt the view).
  double groundHeight(double x, double y) const;
  double groundAround(double x, double y) const;
  class Camera camera(double time, int supersample) const;

  const Rollout& rollout_;
  RenderOptions options_;
  std::vector<std::vector<Triangle>> meshes_;  // per body, body frame
  std::unique_ptr<TerrainMesh> terrain_;       // null on the plane
};

}  // namespace diffloco::viz
