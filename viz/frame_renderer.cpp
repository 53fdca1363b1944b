#include "viz/frame_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "viz/camera.h"
#include "viz/font.h"
#include "viz/ground.h"
#include "viz/rasterizer.h"

namespace diffloco::viz {

CameraMode parseCameraMode(const std::string& name) {
  if (name == "follow") return CameraMode::kFollow;
  if (name == "fixed") return CameraMode::kFixed;
  throw std::invalid_argument("unknown camera '" + name + "' (follow or fixed)");
}

FrameRenderer::FrameRenderer(const Rollout& rollout, const RenderOptions& options)
    : rollout_(rollout), options_(options) {
  if (options.width < 16 || options.height < 16 || options.width % 2 || options.height % 2)
    throw std::invalid_argument("frame size must be even and at least 16 x 16 pixels");
  if (options.supersample < 1 || options.supersample > 4)
    throw std::invalid_argument("supersampling must be 1 to 4");
  if (!(options.fps > 0)) throw std::invalid_argument("frame rate must be > 0");
  meshes_ = bodyMeshes(robotShapes(rollout.model), rollout.model.nbodies());
  if (rollout.ground) terrain_ = std::make_unique<TerrainMesh>(rollout.ground);
}

double FrameRenderer::groundHeight(double x, double y) const {
  const sim::HeightField* f = rollout_.ground.get();
  // Outside the window the plane is drawn, so the plane is what is under a point there.
  if (!f || x < f->originX || y < f->originY || x > f->originX + f->sizeX() ||
      y > f->originY + f->sizeY())
    return 0;
  return sim::groundHeight(f, x, y);
}

double FrameRenderer::groundAround(double x, double y) const {
  if (!rollout_.ground) return 0;
  double sum = 0;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j) sum += groundHeight(x + 0.5 * i, y + 0.5 * j);
  return sum / 25;
}

int FrameRenderer::frameCount() const {
  return std::max(1, static_cast<int>(std::floor(rollout_.duration() * options_.fps + 1e-6)));
}

const RolloutFrame& FrameRenderer::stateAt(int env, double time) const {
  const auto& frames = rollout_.envs.at(env).frames;
  if (frames.empty()) throw std::runtime_error("rollout: env " + std::to_string(env) + " is empty");
  // An env whose episode ended early (a fall) stays in its last state.
  const long i = std::lround(time / rollout_.dt);
  return frames[std::clamp<long>(i, 0, static_cast<long>(frames.size()) - 1)];
}

Camera FrameRenderer::camera(double time, int supersample) const {
  // Beside and a little ahead of the robot, looking down at it: world +x (forward) runs to the
  // right of the frame.
  const Vec3 base = stateAt(0, options_.camera == CameraMode::kFollow ? time : 0).q.head<3>();
  const double middle =
      rollout_.ground ? 0 : 0.5 * (rollout_.envs.size() - 1) * options_.envSpacing;
  const Vec3 target(base.x(), base.y() + middle, 0.3 + groundAround(base.x(), base.y()));
  const double distance =
      options_.cameraDistance * (options_.camera == CameraMode::kFixed ? 1.6 : 1.0) + 0.5 * middle;
  Vec3 eye = target + distance * Vec3(0.3, -0.88, 0.36).normalized();
  // Never inside the terrain (a robot in a pit seen from beside it, over a rim).
  eye.z() = std::max(eye.z(), groundHeight(eye.x(), eye.y()) + 0.5);
  return Camera(eye, target, options_.width * supersample, options_.height * supersample);
}

Vec3 FrameRenderer::projectedBase(int frame, int env) const {
  const double t = frame / options_.fps;
  const Projected p = camera(t, 1).project(stateAt(env, t).q.head<3>() + envOffset(env));
  return Vec3(p.x, p.y, p.depth);
}

Image FrameRenderer::render(int frame) const {
  const double t = frame / options_.fps;
  const int ss = options_.supersample;
  const Camera cam = camera(t, ss);
  Canvas canvas(options_.width * ss, options_.height * ss);

  std::vector<BlobShadow> shadows;
  for (size_t e = 0; e < rollout_.envs.size(); ++e) {
    Vec3 c = stateAt(e, t).q.head<3>() + envOffset(e);
    c.z() = groundHeight(c.x(), c.y());
    shadows.push_back({c, 0.45});
  }
  drawGround(canvas, cam, shadows, {}, rollout_.ground.get());
  if (terrain_) terrain_->draw(canvas, cam, shadows);

  for (size_t e = 0; e < rollout_.envs.size(); ++e) {
    VecX q = stateAt(e, t).q;
    q.head<3>() += envOffset(e);
    const std::vector<BodyPose> poses = bodyPoses(rollout_.model, q);
    for (size_t b = 0; b < meshes_.size(); ++b) {
      const Mat3& R = poses[b].rotation;
      const Vec3& p = poses[b].position;
      for (const Triangle& tri : meshes_[b])
        drawTriangle(canvas, cam, R * tri.a + p, R * tri.b + p, R * tri.c + p, tri.color);
    }
  }
  Image image = downsample(canvas.color, ss);
  if (!options_.overlay) return image;

  const RolloutFrame& s = stateAt(0, t);
  char line[3][96];
  std::snprintf(line[0], sizeof line[0], "t %5.2f s", t);
  if (rollout_.hasCommands)
    std::snprintf(line[1], sizeof line[1], "cmd  vx %5.2f  vy %5.2f  wz %5.2f", s.command.x(),
                  s.command.y(), s.command.z());
  else
    std::snprintf(line[1], sizeof line[1], "cmd  none (task without commands)");
  std::snprintf(line[2], sizeof line[2], "vel  vx %5.2f  vy %5.2f  wz %5.2f", s.velocity.x(),
                s.velocity.y(), s.velocity.z());
  const int scale = std::max(1, options_.height / 180), pad = 3 * scale,
            lineH = textHeight(scale) + 3 * scale;
  int w = 0;
  for (const char* l : line) w = std::max(w, textWidth(l, scale));
  darkenRect(image, 0, 0, w + 2 * pad, 3 * lineH + pad);
  for (int i = 0; i < 3; ++i)
    drawText(image, pad, pad + i * lineH, line[i], {255, 255, 255}, scale);
  if (!options_.title.empty()) {
    const int y = options_.height - lineH - pad;
    darkenRect(image, 0, y - pad, textWidth(options_.title, scale) + 2 * pad, lineH + 2 * pad);
    drawText(image, pad, y, options_.title, {255, 255, 255}, scale);
  }
  return image;
}

}  // namespace diffloco::viz
