#include "experiments/bench_training.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/shac.h"
#include "envs/locomotion_env.h"
#include "policies/actor_critic.h"
#include "policies/mlp_regression.h"
#include "robots/robot.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/curriculum.h"

namespace diffloco::experiments {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void benchTraining(std::map<std::string, double>& out, double seconds,
                   const std::string& roughFrom) {
  const int torchThreads = at::get_num_threads();
  const std::pair<const char*, const char*> configs[] = {
      {"walk", "/walk_quadruped_shac.yaml"},
      {"velocity", "/velocity_anymal_shac.yaml"},
      {"velocity_rough", "/velocity_anymal_rough_shac.yaml"}};
  // A run of a config's first iterations on one of the batch runner's devices.
  struct Run {
    std::unique_ptr<envs::LocomotionEnv> env;
    std::unique_ptr<algorithms::Shac> shac;
    std::vector<double> total, rollout, backward, critic;
  };
  for (const auto& [task, name] : configs) {
    const std::string file = configDir() + name;
    const train::TrainConfig cfg = train::loadTrainConfig(file);
    envs::setTorchThreads(cfg.run.torchThreads);  // as the trainer sets them
    const bool rough = std::string(task) == "velocity_rough";
    auto start = [&](batch::BatchPath path) {
      envs::EnvOptions eo;
      eo.numEnvs = cfg.shac.numEnvs;
      eo.threads = cfg.run.simThreads;
      eo.dtype = torch::kFloat32;
      eo.differentiable = true;
      eo.seed = 1;
      eo.printSummary = false;
      eo.simPath = path;
      Run r;
      r.env =
          std::make_unique<envs::LocomotionEnv>(train::trainedTask(cfg.curriculum, cfg.task), eo);
      train::applyCurriculum(cfg.curriculum, 0, *r.env, true);
      r.shac = std::make_unique<algorithms::Shac>(*r.env, cfg.shac, cfg.policy, 1);
      if (rough && !roughFrom.empty()) {
        const auto level = spdlog::get_level();  // its info line would break --json's output
        spdlog::set_level(spdlog::level::warn);
        train::warmStart(roughFrom, *r.shac);
        spdlog::set_level(level);
      }
      for (int i = 0; i < 2; ++i) r.shac->iterate();  // warm-up: allocations, the pool's threads
      return r;
    };
    auto iterate = [](Run& r) {
      const auto ti = std::chrono::steady_clock::now();
      const algorithms::IterationStats s = r.shac->iterate();
      r.total.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - ti).count());
      r.rollout.push_back(s.collectionS);
      r.backward.push_back(s.scalars.at("Perf/actor_backward_time"));
      r.critic.push_back(s.scalars.at("Perf/critic_time"));
    };
    Run fixed = start(batch::BatchPath::Fixed);
    // The rough task also on a CUDA device where there is one (the worlds copied there and back
    // every step), its iterations alternated with the CPU's: the two runs start alike and drift
    // apart as any two builds do.
    const bool onDevice = rough && batch::cudaUnavailable().empty();
    Run device = onDevice ? start(batch::BatchPath::Cuda) : Run{};
    // A count, not a time: every build times the same iterations (the robots' contacts, and so an
    // iteration's cost, change from one iteration to the next).
    const int iterations = std::max(3, static_cast<int>(std::lround(10 * seconds)));
    for (int i = 0; i < iterations; ++i) {
      iterate(fixed);
      if (onDevice) iterate(device);
    }
    const std::string k = std::string("shac_iteration_") + task;
    out["shac_iteration_s_" + std::string(task)] = median(fixed.total);
    out[k + "_rollout_s"] = median(fixed.rollout);
    out[k + "_actor_backward_s"] = median(fixed.backward);
    out[k + "_critic_s"] = median(fixed.critic);
    if (onDevice) {
      out["shac_iteration_s_" + std::string(task) + "_cuda"] = median(device.total);
      out[k + "_rollout_s_cuda"] = median(device.rollout);
      out[k + "_actor_backward_s_cuda"] = median(device.backward);
      out[k + "_cuda_over_fixed"] = median(device.total) / median(fixed.total);
    }
  }
  envs::setTorchThreads(torchThreads);
}

void benchCriticStep(std::map<std::string, double>& out, double seconds) {
  const train::TrainConfig cfg = train::loadTrainConfig(configDir() + "/walk_quadruped_shac.yaml");
  const int torchThreads = at::get_num_threads();
  envs::setTorchThreads(1);  // the critic thread's
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  const int64_t numObs = envs::LocomotionEnv(cfg.task, eo).numObs();
  const int64_t samples = cfg.shac.numEnvs * cfg.shac.horizon;
  const int64_t rows = samples / cfg.shac.criticMinibatches;
  torch::manual_seed(1);
  policies::Critic critic(numObs, cfg.policy);
  const torch::Tensor flat = algorithms::flattenParameters(critic->parameters());
  const torch::Tensor x = torch::randn({samples, numObs}), y = 10 * torch::randn({samples});
  const torch::Tensor idx = torch::randperm(samples, torch::kLong).narrow(0, 0, rows).contiguous();
  policies::MlpRegression fused(static_cast<int>(numObs), cfg.policy.criticHidden,
                                cfg.policy.activation, cfg.policy.layerNorm);
  torch::Tensor grad = torch::zeros_like(flat);
  auto fusedStep = [&] {
    grad.zero_();
    fused.lossAndGradient(flat.data_ptr<float>(), x.data_ptr<float>(), y.data_ptr<float>(),
                          idx.data_ptr<int64_t>(), rows, static_cast<double>(rows),
                          grad.data_ptr<float>());
  };
  auto autogradStep = [&] {
    for (auto& p : critic->parameters())
      if (p.grad().defined()) p.mutable_grad().zero_();
    ((critic->forward(x.index_select(0, idx)) - y.index_select(0, idx)).square().sum() /
     static_cast<double>(rows))
        .backward();
  };
  // Blocks of 20 steps, alternated, so that both see the same machine.
  std::vector<double> a, b;
  auto block = [](const auto& step) {
    const auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() / 20 * 1e6;
  };
  block(fusedStep), block(autogradStep);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  do {
    a.push_back(block(fusedStep));
    b.push_back(block(autogradStep));
  } while (a.size() < 5 ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
  out["critic_step_us_fused"] = median(a);
  out["critic_step_us_autograd"] = median(b);
  out["critic_step_autograd_over_fused"] = median(b) / median(a);
  envs::setTorchThreads(torchThreads);
}

}  // namespace diffloco::experiments
