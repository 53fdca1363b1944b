#include "viz/image.h"

#include <stdexcept>

namespace diffloco::viz {

Image downsample(const Image& src, int factor) {
  if (factor < 1 || src.width % factor || src.height % factor)
    throw std::invalid_argument("downsample: the factor must divide the image size");
  if (factor == 1) return src;
  Image out(src.width / factor, src.height / factor);
  const int n = factor * factor;
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) {
      int sum[3] = {0, 0, 0};
      for (int dy = 0; dy < factor; ++dy)
        for (int dx = 0; dx < factor; ++dx) {
          const std::uint8_t* p = src.at(x * factor + dx, y * factor + dy);
          for (int c = 0; c < 3; ++c) sum[c] += p[c];
        }
      std::uint8_t* q = out.at(x, y);
      for (int c = 0; c < 3; ++c) q[c] = static_cast<std::uint8_t>((sum[c] + n / 2) / n);
    }
  return out;
}

}  // namespace diffloco::viz
