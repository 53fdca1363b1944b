// Text for the video overlay: a built-in 5x7 pixel font (upper case, digits, a little
// punctuation; lower case is drawn as upper case), so that frames need no font library.
#pragma once

#include <string>

#include "viz/image.h"

namespace diffloco::viz {

// Draws `text` with its top-left corner at (x, y), each font pixel `scale` x `scale` image
// pixels. Characters the font lacks are drawn as blanks.
void drawText(Image& image, int x, int y, const std::string& text, Rgb color, int scale = 2);

// Width and height in pixels of `text` as drawText draws it.
int textWidth(const std::string& text, int scale = 2);
inline int textHeight(int scale = 2) {
  return 7 * scale;
}

// Darkens a rectangle (clipped to the image) so text over any background stays readable.
void darkenRect(Image& image, int x, int y, int w, int h, double keep = 0.45);

}  // namespace diffloco::viz
