// libFuzzer target: the archive check every torch archive passes before LibTorch reads it
// (io/zip_archive.h). Torch-free, so it runs at thousands of inputs per second.
#include "io/zip_archive.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "archive.pt");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::io::readCheckedZipArchive(path); });
  return 0;
}
