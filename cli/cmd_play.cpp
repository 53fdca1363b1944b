// `diffloco play POLICY -o walk.mp4|walk.gif|page.html|traj.json [eval's options] [--duration S]
// [--envs N] [--fps F] [--size WxH] [--camera follow|fixed]`: runs one evaluation episode per env
// (our simulator or MuJoCo, as `eval` does) and writes it to watch: a video rendered offscreen,
// the interactive HTML viewer, or the rollout record.
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/evaluation_setup.h"
#include "viz/rollout_output.h"

namespace diffloco::cli {

namespace {

struct PlayArgs {
  std::string output;
  std::string size = "640x360";
  std::string camera = "follow";
  int envs = 1;
  viz::RenderOptions render;
  bool noOverlay = false;
};

void parseSize(const std::string& text, viz::RenderOptions& r) {
  int w = 0, h = 0;
  char x = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || x != 'x')
    throw std::runtime_error("--size " + text + ": expected WIDTHxHEIGHT, e.g. 640x360");
  r.width = w;
  r.height = h;
}

}  // namespace

Runner addPlayCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "play",
      "Watch a policy: run an evaluation episode (as `eval`, in our simulator or MuJoCo) and write "
      "it as a video (.mp4, .gif; rendered offscreen), an interactive viewer (.html) or a "
      "rollout record (.json)");
  auto a = std::make_shared<EvalArgs>();
  auto p = std::make_shared<PlayArgs>();
  a->durationS = 10;
  addEvalOptions(cmd, *a);
  cmd->add_option("-o,--output", p->output, "output file: .mp4, .gif, .html or .json")->required();
  cmd->add_option("--duration", a->durationS,
                  "episode length [s] (0: the task's; shorter if the robot falls)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--envs", p->envs,
                  "robots side by side (on terrain: where they are), one episode each")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--fps", p->render.fps, "video frame rate")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 120.0));
  cmd->add_option("--size", p->size, "video size in pixels, WIDTHxHEIGHT (even)")
      ->capture_default_str();
  cmd->add_option("--camera", p->camera,
                  "video camera: follow (tracks the first robot) or fixed (where it started)")
      ->check(CLI::IsMember({"follow", "fixed"}))
      ->capture_default_str();
  cmd->add_option("--supersample", p->render.supersample,
                  "anti-aliasing: render at this factor and filter down (1 to 4)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4));
  cmd->add_flag("--no-overlay", p->noOverlay, "no time, command and velocity text on the video");
  return [a, p, cmd] {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    rejectOtherEngineOptions(cmd, *a);
    parseSize(p->size, p->render);
    p->render.camera = viz::parseCameraMode(p->camera);
    p->render.overlay = !p->noOverlay;
    viz::checkOutput(p->output);  // before the episode, not after it
    a->options.numEnvs = p->envs;
    a->options.episodes = p->envs;
    Recording recording;
    recording.envs = p->envs;
    const train::EvalResult result = runEvaluation(*a, &recording);
    const auto simulated = Clock::now();
    const viz::Rollout& rollout = *recording.rollout;
    p->render.title = rollout.policy + ", " + rollout.engine;
    const viz::OutputStats s = viz::writeRollout(p->output, rollout, p->render);
    const double total = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("episode: %.2f s of %s, %d of %zu robot(s) fell\n", rollout.duration(),
                rollout.task.c_str(), result.falls(), result.episodes.size());
    if (s.frames > 0)
      std::printf(
          "wrote %s: %d frames (%.2f s at %g fps), %dx%d, %ld kB; render %.1f ms/frame, "
          "encode %.1f ms/frame, simulation %.1f s, total %.1f s\n",
          p->output.c_str(), s.frames, s.frames / p->render.fps, p->render.fps, p->render.width,
          p->render.height, s.bytes / 1024, 1e3 * s.renderSeconds / s.frames,
          1e3 * s.encodeSeconds / s.frames,
          std::chrono::duration<double>(simulated - start).count(), total);
    else
      std::printf("wrote %s (%ld kB) in %.1f s\n", p->output.c_str(), s.bytes / 1024, total);
    return 0;
  };
}

}  // namespace diffloco::cli
