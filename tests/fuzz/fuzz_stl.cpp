// libFuzzer target: the STL mesh reader (io/stl.h), which robot init uses for mesh feet.
#include "io/stl.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "foot.stl");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::io::readStlVertices(path); });
  return 0;
}
