// train/checkpoint: a checkpoint loads into a fresh learner of the same problem as the learner
// that wrote it (networks and env state equal); a file that is missing, truncated, another kind of
// torch archive or written for other networks is an error naming it. (A resumed run repeating an
// uninterrupted one bit for bit: test_trainer.cpp; fuzzed: tests/fuzz/fuzz_checkpoint.cpp.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "algorithms/shac.h"
#include "distributed/communicator.h"
#include "envs/locomotion_env.h"
#include "policies/actor_critic.h"
#include "tests/support/scratch_dir.h"
#include "train/checkpoint.h"
#include "train/config.h"

using namespace diffloco;
namespace fs = std::filesystem;

namespace {

// A small SHAC learner on the walk task; `hidden` sizes both networks.
struct Learner {
  distributed::Communicator comm;
  train::TrainConfig config;
  std::unique_ptr<envs::LocomotionEnv> env;
  std::unique_ptr<algorithms::Shac> algo;
  Learner(int hidden, std::uint64_t seed) {
    const std::string h = std::to_string(hidden);
    config = train::parseTrainConfig(
        "name: t\nalgorithm: shac\ntask: walk\nshac: {iterations: 3, num_envs: 2, horizon: 4, "
        "critic_iterations: 1, critic_minibatches: 1}\npolicy: {actor_hidden: [" +
            h + "], critic_hidden: [" + h + "]}\nrun: {torch_threads: 1}\n",
        "t.yaml");
    envs::EnvOptions options;
    options.numEnvs = config.numEnvs();
    options.threads = 1;
    options.differentiable = true;
    options.printSummary = false;
    options.seed = seed;
    env = std::make_unique<envs::LocomotionEnv>(config.task, options);
    algo = std::make_unique<algorithms::Shac>(*env, config.shac, config.policy, seed);
  }
};

// A path in a folder that the test process removes when it ends.
std::string tempPath(const std::string& name) {
  static const diffloco::testing::ScratchDir dir("diffloco_checkpoint");
  return (dir / name).string();
}

// The message `load` throws ("" if none).
template <class F>
std::string errorOf(F&& load) {
  try {
    load();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Checkpoint, LoadsIntoAFreshLearnerOfTheSameProblem) {
  Learner a(8, 1), b(8, 2);
  a.algo->iterate();
  const std::string path = tempPath("model_1.pt");
  train::saveCheckpoint(a.comm, path, *a.algo, *a.env, train::toYaml(a.config));
  const auto differs = [&] {
    bool any = false;
    for (const auto& p : a.algo->actor()->named_parameters())
      any = any || !torch::equal(p.value(), b.algo->actor()->named_parameters()[p.key()]);
    return any;
  };
  ASSERT_TRUE(differs());  // another seed: other initial weights
  train::loadCheckpoint(b.comm, path, *b.algo, *b.env);
  EXPECT_FALSE(differs());
  EXPECT_EQ(b.algo->iteration(), 1);
  const auto ea = a.env->stateDict(), eb = b.env->stateDict();
  ASSERT_EQ(ea.size(), eb.size());
  for (const auto& [key, value] : ea) EXPECT_TRUE(torch::equal(value, eb.at(key))) << key;
}

TEST(Checkpoint, BadFilesAreErrorsNamingThem) {
  Learner a(8, 1), b(8, 2), wider(16, 2);
  const std::string good = tempPath("model_2.pt");
  train::saveCheckpoint(a.comm, good, *a.algo, *a.env, train::toYaml(a.config));
  const auto load = [&](Learner& into, const std::string& path) {
    return errorOf([&] { train::loadCheckpoint(into.comm, path, *into.algo, *into.env); });
  };
  const auto expectNamed = [](const std::string& e, const std::string& path,
                              const std::string& what) {
    EXPECT_EQ(e.rfind(path + ": ", 0), 0u) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };

  expectNamed(load(b, tempPath("missing.pt")), tempPath("missing.pt"), "");
  // Truncated: the archive check refuses it before LibTorch reads it.
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = tempPath("truncated.pt");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expectNamed(load(b, truncated), truncated, "not a valid archive");
  // A policy file is a torch archive, not a checkpoint.
  const std::string policy = tempPath("policy.pt");
  policies::savePolicy(policy, a.algo->actor(), {{"task", "walk"}});
  expectNamed(load(b, policy), policy, "not a diffloco checkpoint");
  // Written for other networks: the stored tensors do not fit.
  expectNamed(load(wider, good), good, "a damaged checkpoint");
}
