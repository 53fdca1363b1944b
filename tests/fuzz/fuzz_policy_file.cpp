// libFuzzer target: the policy file (policy.pt: policies::loadPolicy), a torch archive. Run with
// DIFFLOCO_FUZZ_SEED_DIR set, it first writes a valid policy file there as a seed.
#include <cstdlib>
#include <filesystem>

#include "policies/actor_critic.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("DIFFLOCO_FUZZ_SEED_DIR")) {
    diffloco::policies::PolicyConfig c;
    c.actorHidden = {16, 8};
    c.layerNorm = true;
    diffloco::policies::Actor actor(7, 3, c);
    diffloco::policies::savePolicy(std::string(dir) + "/seed_policy.pt", actor,
                                   {{"task", "walk"}, {"obs", "7"}});
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "policy.pt");
  diffloco::fuzz::expectNamedErrors(path, [&] { diffloco::policies::loadPolicy(path); });
  return 0;
}
