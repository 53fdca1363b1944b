// libFuzzer target: the task YAML (envs/task_config.h), with its robot's task defaults (the
// `robot:` key may name configs/robots/anymal.yaml, quadruped.yaml or go_like.yaml).
#include "envs/task_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "task.yaml");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::envs::loadTaskConfig(path); });
  return 0;
}
