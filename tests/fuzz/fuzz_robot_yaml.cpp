// libFuzzer target: the robot YAML (robots/robot.h). The input is the YAML; its `urdf:` key may
// name configs/robots/anymal.urdf, which is copied beside it once.
#include <filesystem>

#include "robots/robot.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const std::string path = diffloco::fuzz::writeInput(data, size, "robot.yaml");
  static const bool copied = [&] {
    std::error_code ec;
    fs::copy_file(fs::path(diffloco::configDir()) / "robots" / "anymal.urdf",
                  fs::path(path).parent_path() / "anymal.urdf",
                  fs::copy_options::overwrite_existing, ec);
    return true;
  }();
  (void)copied;
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::loadRobot(path); });
  return 0;
}
