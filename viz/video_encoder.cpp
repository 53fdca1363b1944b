#include "viz/video_encoder.h"

#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/atomic_file.h"

namespace diffloco::viz {

namespace fs = std::filesystem;

namespace {

std::string lowerExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Single-quoted for /bin/sh, so any file name survives popen.
std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

VideoFormat videoFormatOf(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == ".mp4") return VideoFormat::kMp4;
  if (ext == ".gif") return VideoFormat::kGif;
  throw std::invalid_argument(path + ": unknown video format '" + ext + "' (.mp4 or .gif)");
}

void checkWritable(const std::string& path) {
  io::checkReplaceable(path);  // not a folder or a device
  const std::string probe = io::temporaryPathFor(path);
  {
    std::ofstream f(probe, std::ios::binary);
    if (!f)
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno) +
                               " (does its folder exist and is it writable?)");
  }
  std::error_code ec;
  fs::remove(probe, ec);
}

VideoEncoder::VideoEncoder(const std::string& path, int width, int height, double fps)
    : path_(path), tmp_(io::temporaryPathFor(path)), width_(width), height_(height) {
  const VideoFormat format = videoFormatOf(path);
  checkWritable(path);
  const char* env = std::getenv("DIFFLOCO_FFMPEG");
  const std::string ffmpeg = env && *env ? env : "ffmpeg";
  char input[160];
  std::snprintf(input, sizeof input, "-f rawvideo -pix_fmt rgb24 -s %dx%d -framerate %.6g -i -",
                width, height, fps);
  // MP4: H.264 in yuv420p, which every player takes; faststart puts the index first for the web.
  // GIF: a palette computed from the whole clip, then dithered to it (far better than the fixed
  // web palette at the same size).
  const std::string output =
      format == VideoFormat::kMp4
          ? "-c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -movflags +faststart -f mp4"
          : "-filter_complex \"split[a][b];[a]palettegen=stats_mode=diff[p];"
            "[b][p]paletteuse=dither=bayer:bayer_scale=3\" -f gif";
  const std::string cmd = shellQuote(ffmpeg) + " -hide_banner -loglevel error -y " + input + " " +
                          output + " " + shellQuote(tmp_);
  // A dead ffmpeg must show up as a failed write, not kill this process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  pipe_ = popen(cmd.c_str(), "w");
  if (!pipe_) throw std::runtime_error("cannot start " + ffmpeg + " to write " + path);
}

VideoEncoder::~VideoEncoder() {
  if (!pipe_) return;
  pclose(pipe_);
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void VideoEncoder::write(const Image& frame) {
  if (!pipe_) throw std::logic_error("VideoEncoder::write after finish");
  if (frame.width != width_ || frame.height != height_)
    throw std::invalid_argument("VideoEncoder: frame size differs from the video's");
  if (std::fwrite(frame.rgb.data(), 1, frame.rgb.size(), pipe_) != frame.rgb.size())
    throw std::runtime_error("ffmpeg stopped while writing " + path_ +
                             " (is ffmpeg installed? see its message above)");
}

void VideoEncoder::finish() {
  FILE* p = pipe_;
  pipe_ = nullptr;
  const int status = pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::error_code ec;
    fs::remove(tmp_, ec);
    throw std::runtime_error("ffmpeg failed to write " + path_ + " (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                             "; is ffmpeg installed with libx264?)");
  }
  fs::rename(tmp_, path_);
}

}  // namespace diffloco::viz
