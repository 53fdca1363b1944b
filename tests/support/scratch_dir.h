// A fresh folder for a test's files, removed with everything in it when the object goes out of
// scope. ctest -j runs the tests in parallel processes: the name carries the process id and a
// counter so that no two folders collide, and nothing may be left behind in the temporary
// directory.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace diffloco::testing {

class ScratchDir {
 public:
  // temp_directory_path()/<prefix>_<pid>_<n>, made empty; a name already taken is skipped.
  explicit ScratchDir(const std::string& prefix = "diffloco_test") {
    namespace fs = std::filesystem;
    static std::atomic<unsigned long> counter{0};
    const fs::path base = fs::temp_directory_path();
    for (;;) {
      path_ = base / (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
      std::error_code ec;
      if (fs::create_directory(path_, ec)) return;
      if (ec && !fs::exists(path_))
        throw fs::filesystem_error("cannot create a test folder", path_, ec);
    }
  }
  ~ScratchDir() {
    std::error_code ec;  // a destructor must not throw: a folder that cannot go is left
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  // Moved: the new object owns the folder, the old one owns nothing.
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string string() const { return path_.string(); }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace diffloco::testing
