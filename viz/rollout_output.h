// Writes a recorded rollout to the file a user named, in the format its extension names:
//   .mp4 / .gif  a video rendered offscreen (frame_renderer.h, video_encoder.h)
//   .html        the self-contained interactive viewer (html_viewer.h)
//   .json        the rollout record (rollout_record.h)
// Every output appears atomically (written aside, then renamed).
#pragma once

#include <string>

#include "viz/frame_renderer.h"
#include "viz/rollout.h"

namespace diffloco::viz {

enum class OutputKind { kVideo, kHtml, kJson };

// The kind named by the extension; throws naming the path for an unknown one.
OutputKind outputKindOf(const std::string& path);

// Throws naming the path if its extension is unknown or the file cannot be created: called before
// the simulation so that a typo costs no episode.
void checkOutput(const std::string& path);

struct OutputStats {
  int frames = 0;            // rendered frames (video only)
  double renderSeconds = 0;  // drawing them
  double encodeSeconds = 0;  // ffmpeg, as far as it did not overlap the drawing
  long bytes = 0;            // size of the file written
};

OutputStats writeRollout(const std::string& path, const Rollout& rollout,
                         const RenderOptions& options);

}  // namespace diffloco::viz
