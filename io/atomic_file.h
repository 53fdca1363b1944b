// Output files that never harm what they replace. Every file the program writes (checkpoints,
// policies, configs, logs of experiments, CSV, plots) goes through here, so that
// - a reader (or a resumed run after a crash or SIGKILL) sees the old file or the complete new
//   one, never a part: the content goes to a temporary file next to the target (same file
//   system, so the rename is atomic), is flushed and fsync'ed, then renamed over the target;
// - nothing but the named file is touched: a target that is a directory or a special file (a
//   device, FIFO or socket) is refused before anything is written (a rename over /dev/null, as
//   root, would replace the device node by a regular file); a symbolic link is followed and its
//   target replaced, the link stays;
// - a failure (unwritable folder, full disk) is an error naming the path, and the temporary
//   file is removed.
// Torch-free and dependency-free: the lowest layer, usable by every other.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace diffloco::io {

// Writes `content` to `path` atomically (see above). Throws std::runtime_error naming the path.
void writeFileAtomic(const std::string& path, std::string_view content);

// For writers that stream to a file name of their own (torch::save, a gnuplot script's output,
// an ofstream loop): `write(tmp)` writes the complete file at `tmp`, which is then renamed over
// `path`. If `write` throws, the temporary file is removed and the exception propagates.
void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& tmp)>& write);

// Throws std::runtime_error("PATH: ...") if `path` may not be replaced by a regular file: it is
// a directory or a special file, or its folder does not exist.
void checkReplaceable(const std::string& path);

// The temporary name used for `path`: unique per process and call, ending in ".tmp" (listings
// such as runs::listCheckpoints ignore it).
std::string temporaryPathFor(const std::string& path);

}  // namespace diffloco::io
