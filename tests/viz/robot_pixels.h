// Finds the robot in a rendered frame by its base colour (viz::kBaseColor, shaded): the tests'
// way to say where the robot is drawn.
#pragma once

#include "viz/image.h"

namespace diffloco::viz::testing {

struct PixelBlob {
  int count = 0;
  double x = 0, y = 0;  // centroid
};

inline bool isBaseColored(const std::uint8_t* p) {
  // Orange at any shade: red well above green, green above blue. Ground and legs are grey, the
  // sky blue.
  return p[0] > p[1] + 30 && p[1] > p[2] + 15;
}

inline PixelBlob basePixels(const Image& image) {
  PixelBlob b;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      if (isBaseColored(image.at(x, y))) {
        ++b.count;
        b.x += x;
        b.y += y;
      }
  if (b.count) b.x /= b.count, b.y /= b.count;
  return b;
}

}  // namespace diffloco::viz::testing
