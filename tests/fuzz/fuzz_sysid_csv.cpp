// libFuzzer target: the system-identification trajectory CSV (ident/sysid.h), read against the
// quadruped's model.
#include "ident/sysid.h"
#include "robots/robot.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const diffloco::Robot robot = diffloco::loadRobot("quadruped");
  const std::string path = diffloco::fuzz::writeInput(data, size, "trajectory.csv");
  diffloco::fuzz::expectNamedErrors(
      path, [&] { diffloco::sysid::readTrajectories(path, robot.model); });
  return 0;
}
