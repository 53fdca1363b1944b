// libFuzzer target: opening a checkpoint on --resume (train/checkpoint.h: the archive check,
// LibTorch's reader, then the algorithm's and the env's state). A small SHAC learner on the walk
// task is built once and every input is loaded into it. Run with DIFFLOCO_FUZZ_SEED_DIR set, it
// first writes there a valid checkpoint of that learner after one iteration, as a seed.
#include <cstdlib>
#include <memory>

#include "algorithms/shac.h"
#include "distributed/communicator.h"
#include "envs/locomotion_env.h"
#include "tests/fuzz/fuzz_input.h"
#include "train/checkpoint.h"
#include "train/config.h"

namespace {

const char* kConfig = R"(name: fuzz
algorithm: shac
task: walk
shac: {iterations: 2, num_envs: 1, horizon: 2, critic_iterations: 1, critic_minibatches: 1}
policy: {actor_hidden: [4], critic_hidden: [4]}
)";

struct Learner {
  diffloco::distributed::Communicator comm;
  diffloco::train::TrainConfig config = diffloco::train::parseTrainConfig(kConfig, "fuzz.yaml");
  std::unique_ptr<diffloco::envs::LocomotionEnv> env;
  std::unique_ptr<diffloco::algorithms::Shac> algo;
  Learner() {
    diffloco::envs::EnvOptions options;
    options.numEnvs = config.numEnvs();
    options.threads = 1;
    options.differentiable = true;
    options.printSummary = false;
    env = std::make_unique<diffloco::envs::LocomotionEnv>(config.task, options);
    algo = std::make_unique<diffloco::algorithms::Shac>(*env, config.shac, config.policy, 1);
  }
};

Learner& learner() {
  static Learner l;
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Learner& l = learner();
  if (const char* dir = std::getenv("DIFFLOCO_FUZZ_SEED_DIR")) {
    l.algo->iterate();  // optimiser moments and statistics that are not all zero
    diffloco::train::saveCheckpoint(l.comm, std::string(dir) + "/seed_checkpoint.pt", *l.algo,
                                    *l.env, diffloco::train::toYaml(l.config));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = diffloco::fuzz::writeInput(data, size, "model_1.pt");
  Learner& l = learner();
  diffloco::fuzz::expectNamedErrors(
      path, [&] { diffloco::train::loadCheckpoint(l.comm, path, *l.algo, *l.env); });
  return 0;
}
