// libFuzzer target: the actuator-fit joint log CSV (ident/actuator_fit.h).
#include "ident/actuator_fit.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "joint_log.csv");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::ident::readJointLog(path); });
  return 0;
}
