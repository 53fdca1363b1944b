// Questions about a path that never throw: std::filesystem's exists() and is_regular_file()
// throw on a name the system refuses (too long, a component that is not a folder), and the
// readers ask them about names taken from user files. Such a path is reported as missing, so the
// reader's own "not found" message, which names the file that referred to it, is what the user
// sees.
#pragma once

#include <filesystem>
#include <system_error>

namespace diffloco::io {

inline bool exists(const std::filesystem::path& p) noexcept {
  std::error_code ec;
  return std::filesystem::exists(p, ec) && !ec;
}

inline bool isRegularFile(const std::filesystem::path& p) noexcept {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && !ec;
}

}  // namespace diffloco::io
