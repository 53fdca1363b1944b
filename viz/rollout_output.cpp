#include "viz/rollout_output.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "io/atomic_file.h"
#include "viz/html_viewer.h"
#include "viz/rollout_record.h"
#include "viz/video_encoder.h"

namespace diffloco::viz {

namespace fs = std::filesystem;

OutputKind outputKindOf(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".mp4" || ext == ".gif") return OutputKind::kVideo;
  if (ext == ".html" || ext == ".htm") return OutputKind::kHtml;
  if (ext == ".json") return OutputKind::kJson;
  throw std::invalid_argument(path + ": unknown output format '" + ext +
                              "' (.mp4, .gif, .html or .json)");
}

void checkOutput(const std::string& path) {
  const OutputKind kind = outputKindOf(path);
  checkWritable(path);
  if (kind == OutputKind::kHtml && !fs::exists(threeJsPath()))
    throw std::runtime_error("cannot write " + path + ": " + threeJsPath() +
                             " not found (install Debian's libjs-three, or set DIFFLOCO_THREE_JS)");
}

OutputStats writeRollout(const std::string& path, const Rollout& rollout,
                         const RenderOptions& options) {
  OutputStats stats;
  const OutputKind kind = outputKindOf(path);
  if (kind == OutputKind::kJson) {
    io::writeFileAtomic(path, rolloutJson(rollout));
  } else if (kind == OutputKind::kHtml) {
    const std::string title = "diffloco: " + rollout.policy + " (" + rollout.engine + ")";
    io::writeFileAtomic(path, viewerHtml(rolloutJson(rollout), title));
  } else {
    using Clock = std::chrono::steady_clock;
    const FrameRenderer renderer(rollout, options);
    VideoEncoder video(path, options.width, options.height, options.fps);
    stats.frames = renderer.frameCount();
    for (int k = 0; k < stats.frames; ++k) {
      const auto t0 = Clock::now();
      const Image frame = renderer.render(k);
      const auto t1 = Clock::now();
      video.write(frame);
      stats.renderSeconds += std::chrono::duration<double>(t1 - t0).count();
      stats.encodeSeconds += std::chrono::duration<double>(Clock::now() - t1).count();
    }
    const auto t2 = Clock::now();
    video.finish();
    stats.encodeSeconds += std::chrono::duration<double>(Clock::now() - t2).count();
  }
  stats.bytes = static_cast<long>(fs::file_size(path));
  return stats;
}

}  // namespace diffloco::viz
