// Encodes frames to an MP4 (H.264) or animated GIF by piping raw RGB into ffmpeg
// (`-f rawvideo -pix_fmt rgb24`). ffmpeg writes PATH.tmp and the file is renamed over PATH only
// when encoding succeeded, so a reader never sees a half-written video.
#pragma once

#include <cstdio>
#include <string>

#include "viz/image.h"

namespace diffloco::viz {

enum class VideoFormat { kMp4, kGif };

// The format named by the file's extension (.mp4, .gif); throws for anything else.
VideoFormat videoFormatOf(const std::string& path);

class VideoEncoder {
 public:
  // Starts ffmpeg (found on PATH, or at $DIFFLOCO_FFMPEG). Throws with the output's name when
  // the output folder is not writable or ffmpeg cannot be started.
  VideoEncoder(const std::string& path, int width, int height, double fps);
  ~VideoEncoder();  // without finish(): stops ffmpeg and removes the partial file
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  void write(const Image& frame);
  // Waits for ffmpeg and renames the result into place; throws if ffmpeg failed.
  void finish();

 private:
  std::string path_, tmp_;
  int width_, height_;
  FILE* pipe_ = nullptr;
};

// Throws std::runtime_error naming `path` if a file cannot be created there (checked before a
// long simulation, not after it).
void checkWritable(const std::string& path);

}  // namespace diffloco::viz
