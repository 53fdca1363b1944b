// The C++ side of tests/python/test_env.py's bit-for-bit comparison: the same env as
// diffloco.make_env(TASK, num_envs=N, seed=S, dtype=float64) driven by the actions in a file,
// writing the observations and rewards of every step.
//   env_rollout_reference TASK N SEED STEPS ACTIONS_IN OUT
// ACTIONS_IN: STEPS x N x nj float64 (native byte order); OUT: per step, obs [N, num_obs] then
// rewards [N] and dones [N] (as 0.0 / 1.0), float64.
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "envs/locomotion_env.h"
#include "train/config.h"

using namespace diffloco;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: env_rollout_reference TASK N SEED STEPS ACTIONS_IN OUT\n";
    return 2;
  }
  const int n = std::stoi(argv[2]), steps = std::stoi(argv[4]);
  envs::EnvOptions eo;
  eo.numEnvs = n;
  eo.seed = std::stoull(argv[3]);
  eo.dtype = torch::kFloat64;
  eo.printSummary = false;
  envs::LocomotionEnv env(train::loadTaskWithSets(argv[1], {}), eo);
  env.reset();
  const int nj = env.numActions();
  std::vector<double> actions(static_cast<size_t>(steps) * n * nj);
  std::ifstream in(argv[5], std::ios::binary);
  in.read(reinterpret_cast<char*>(actions.data()),
          static_cast<std::streamsize>(actions.size() * sizeof(double)));
  if (!in) {
    std::cerr << argv[5] << ": fewer than " << actions.size() << " doubles\n";
    return 1;
  }
  std::ofstream out(argv[6], std::ios::binary);
  auto write = [&](const torch::Tensor& t) {
    const torch::Tensor c = t.to(torch::kFloat64).contiguous();
    out.write(reinterpret_cast<const char*>(c.data_ptr<double>()),
              static_cast<std::streamsize>(c.numel() * sizeof(double)));
  };
  for (int k = 0; k < steps; ++k) {
    const torch::Tensor a = torch::from_blob(actions.data() + static_cast<size_t>(k) * n * nj,
                                             {n, nj}, torch::kFloat64);
    const envs::StepResult r = env.step(a);
    write(r.obs);
    write(r.rewards);
    write(torch::logical_or(r.terminated, r.truncated));
  }
  return out ? 0 : 1;
}
