// libFuzzer target: the URDF loader (sim/urdf.h).
#include "sim/urdf.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "robot.urdf");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::sim::loadUrdf(path); });
  return 0;
}
