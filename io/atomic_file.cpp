#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace diffloco::io {

namespace fs = std::filesystem;

namespace {

std::runtime_error error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

std::string errnoText() {
  return std::strerror(errno);
}

// The file a path finally names (symbolic links followed), so that the rename replaces the
// link's target and keeps the link.
std::string resolved(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (!ec) return target.string();
  }
  return path;
}

// Flushes the file's content to the disk, so that the rename never publishes a file whose data
// a crash of the machine could still lose.
void syncFile(const std::string& tmp, const std::string& path) {
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw error(path, "cannot reopen the written temporary file " + tmp + ": " + errnoText());
  const int rc = ::fsync(fd);
  const int savedErrno = errno;
  ::close(fd);
  if (rc != 0) {
    errno = savedErrno;
    throw error(path, "writing failed (fsync: " + errnoText() + ")");
  }
}

}  // namespace

void checkReplaceable(const std::string& path) {
  if (path.empty()) throw std::runtime_error("an output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw error(path, "is a directory, expected a file name");
    if (!S_ISREG(st.st_mode))
      throw error(path,
                  "is a special file (device, FIFO or socket), not a regular file: refusing to "
                  "replace it");
  }
  const fs::path parent = fs::path(resolved(path)).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw error(path, "its folder " + parent.string() + " does not exist");
}

std::string temporaryPathFor(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return resolved(path) + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) +
         ".tmp";
}

void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& tmp)>& write) {
  checkReplaceable(path);
  const std::string target = resolved(path);
  const std::string tmp = temporaryPathFor(path);
  try {
    write(tmp);
    std::error_code ec;
    if (!fs::is_regular_file(tmp, ec)) throw error(path, "the writer produced no file");
    syncFile(tmp, path);
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      throw error(path, "cannot replace it: " + errnoText());
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
}

void writeFileAtomic(const std::string& path, std::string_view content) {
  writeAtomically(path, [&](const std::string& tmp) {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
      // Our pid and counter: the leftover of a killed process whose pid this one reuses.
      ::unlink(tmp.c_str());
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (fd < 0) throw error(path, "cannot write (" + errnoText() + ")");
    const char* p = content.data();
    size_t left = content.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = errnoText();
        ::close(fd);
        throw error(path, "writing failed after " + std::to_string(content.size() - left) + " of " +
                              std::to_string(content.size()) + " bytes (" + why + ")");
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    if (::close(fd) != 0) throw error(path, "writing failed (close: " + errnoText() + ")");
  });
}

}  // namespace diffloco::io
