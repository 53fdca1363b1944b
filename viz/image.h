// An RGB image, 8 bits per channel, rows top to bottom: what the renderer draws into and what the
// video encoder reads (ffmpeg's rawvideo rgb24 layout, so a frame is written as it is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace diffloco::viz {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3

  Image() = default;
  Image(int w, int h, Rgb fill = {})
      : width(w), height(h), rgb(static_cast<std::size_t>(w) * h * 3) {
    for (std::size_t i = 0; i < rgb.size(); i += 3)
      rgb[i] = fill.r, rgb[i + 1] = fill.g, rgb[i + 2] = fill.b;
  }
  std::uint8_t* at(int x, int y) { return &rgb[(static_cast<std::size_t>(y) * width + x) * 3]; }
  const std::uint8_t* at(int x, int y) const {
    return &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
  }
};

// Box filter by an integer factor: the supersampled render becomes the anti-aliased frame.
Image downsample(const Image& src, int factor);

}  // namespace diffloco::viz
