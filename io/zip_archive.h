// Checks a zip archive's structure and every record's CRC-32 before a torch archive (policy.pt,
// checkpoints, exported TorchScript) reaches LibTorch's reader: that reader trusts the bytes it is
// given, and an edited TorchScript code record can crash it inside its parser (a SIGSEGV found by
// fuzzing, docs/hardening.md). A truncated, bit-flipped or edited file fails here with an error
// naming it and the record; a file crafted with matching CRCs is not caught (torch archives, like
// pickles, are not safe to load from untrusted sources). Torch-free.
#pragma once

#include <string>
#include <string_view>

namespace diffloco::io {

// Throws std::runtime_error "<name>: not a valid archive (<what>)" unless `bytes` is a zip archive
// (zip64 or not, no encryption, records stored or deflated) whose central directory, local headers
// and record CRCs all agree.
void checkZipArchive(const std::string& name, std::string_view bytes);

// The file's bytes (io::readFile), checked with checkZipArchive: load the archive from these bytes,
// not from the path again, so that what was checked is what is read.
std::string readCheckedZipArchive(const std::string& path);

}  // namespace diffloco::io
