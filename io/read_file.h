// Reading a whole file: the counterpart of io/atomic_file.h for inputs that are read at once
// (checkpoints sent to other ranks, resolved configs). Torch-free.
#pragma once

#include <string>

namespace diffloco::io {

// The file's bytes; throws std::runtime_error "<path>: cannot read" when it cannot be opened.
std::string readFile(const std::string& path);

}  // namespace diffloco::io
