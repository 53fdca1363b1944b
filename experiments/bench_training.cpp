#include "experiments/bench_training.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "algorithms/shac.h"
#include "envs/locomotion_env.h"
#include "robots/robot.h"
#include "train/config.h"
#include "train/curriculum.h"

namespace diffloco::experiments {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void benchTraining(std::map<std::string, double>& out, double seconds) {
  const int torchThreads = at::get_num_threads();
  for (const char* task : {"walk", "velocity"}) {
    const std::string file =
        configDir() +
        (task == std::string("walk") ? "/walk_quadruped_shac.yaml" : "/velocity_anymal_shac.yaml");
    const train::TrainConfig cfg = train::loadTrainConfig(file);
    envs::setTorchThreads(cfg.run.torchThreads);  // as the trainer sets them
    envs::EnvOptions eo;
    eo.numEnvs = cfg.shac.numEnvs;
    eo.threads = cfg.run.simThreads;
    eo.dtype = torch::kFloat32;
    eo.differentiable = true;
    eo.seed = 1;
    eo.printSummary = false;
    envs::LocomotionEnv env(cfg.task, eo);
    train::applyCurriculum(cfg.curriculum, 0, env, true);
    algorithms::Shac shac(env, cfg.shac, cfg.policy, 1);
    std::vector<double> total, rollout, backward, critic;
    for (int i = 0; i < 2; ++i) shac.iterate();  // warm-up: allocations, the pool's threads
    const auto t0 = std::chrono::steady_clock::now();
    do {
      const auto ti = std::chrono::steady_clock::now();
      const algorithms::IterationStats s = shac.iterate();
      total.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - ti).count());
      rollout.push_back(s.collectionS);
      backward.push_back(s.scalars.at("Perf/actor_backward_time"));
      critic.push_back(s.scalars.at("Perf/critic_time"));
    } while (total.size() < 3 ||
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() <
                 seconds);
    const std::string k = std::string("shac_iteration_") + task;
    out["shac_iteration_s_" + std::string(task)] = median(total);
    out[k + "_rollout_s"] = median(rollout);
    out[k + "_actor_backward_s"] = median(backward);
    out[k + "_critic_s"] = median(critic);
  }
  envs::setTorchThreads(torchThreads);
}

}  // namespace diffloco::experiments
