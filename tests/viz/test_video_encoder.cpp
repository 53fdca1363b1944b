#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/scratch_dir.h"
#include "viz/video_encoder.h"

namespace diffloco::viz {
namespace {

namespace fs = std::filesystem;

// A path in a folder that the test process removes when it ends.
std::string tempPath(const std::string& name) {
  static const diffloco::testing::ScratchDir dir("diffloco_test_video");
  return (dir / name).string();
}

std::string head(const std::string& path, size_t n) {
  std::ifstream f(path, std::ios::binary);
  std::string s(n, '\0');
  f.read(s.data(), static_cast<std::streamsize>(n));
  return s;
}

void writeFrames(const std::string& path) {
  VideoEncoder video(path, 32, 16, 10);
  for (int k = 0; k < 10; ++k)
    video.write(Image(32, 16, {static_cast<std::uint8_t>(20 * k), 0, 0}));
  video.finish();
}

TEST(VideoEncoder, WritesMp4AndGifAndNoTemporaryFile) {
  const std::string mp4 = tempPath("a.mp4"), gif = tempPath("a.gif");
  writeFrames(mp4);
  writeFrames(gif);
  EXPECT_EQ(head(mp4, 12).substr(4, 4), "ftyp");  // the MP4 file-type box
  EXPECT_EQ(head(gif, 6), "GIF89a");
  EXPECT_FALSE(fs::exists(mp4 + ".tmp"));
  EXPECT_FALSE(fs::exists(gif + ".tmp"));
}

TEST(VideoEncoder, AnAbandonedVideoLeavesNothing) {
  const std::string path = tempPath("abandoned.mp4");
  fs::remove(path);
  {
    VideoEncoder video(path, 32, 16, 10);
    video.write(Image(32, 16));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(VideoEncoder, BadOutputsAreNamed) {
  try {
    VideoEncoder video("/nonexistent-folder/walk.mp4", 32, 16, 10);
    FAIL() << "no error for an unwritable output";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/walk.mp4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(videoFormatOf("walk.avi"), std::invalid_argument);
  VideoEncoder video(tempPath("size.mp4"), 32, 16, 10);
  EXPECT_THROW(video.write(Image(16, 16)), std::invalid_argument);
}

TEST(VideoEncoder, AMissingFfmpegIsReported) {
  setenv("DIFFLOCO_FFMPEG", "/nonexistent/ffmpeg", 1);
  bool failed = false;
  try {
    VideoEncoder video(tempPath("noffmpeg.mp4"), 320, 160, 10);
    // The shell reports the missing program; writing to it or closing it fails.
    for (int k = 0; k < 50; ++k) video.write(Image(320, 160));
    video.finish();
  } catch (const std::runtime_error& e) {
    failed = std::string(e.what()).find("ffmpeg") != std::string::npos;
  }
  unsetenv("DIFFLOCO_FFMPEG");
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace diffloco::viz
