// How error messages quote input: a bad value or line is shown by its first kMaxExcerpt bytes and
// "...", so that a huge line (a file of 100 000 brackets, a name of a megabyte) gives a message
// of one readable line. The cut keeps UTF-8 characters whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace diffloco::io {

inline constexpr std::size_t kMaxExcerpt = 80;

// `text` itself when it has at most `max` bytes, else its first `max` bytes (fewer when that
// would split a UTF-8 character) followed by "...".
inline std::string excerpt(std::string_view text, std::size_t max = kMaxExcerpt) {
  if (text.size() <= max) return std::string(text);
  std::size_t n = max;
  // A continuation byte (10xxxxxx) at the cut belongs to the character before it.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n)) + "...";
}

}  // namespace diffloco::io
