#include "experiments/bench_envs.h"

#include <torch/torch.h>

#include <chrono>

#include "envs/locomotion_env.h"

namespace diffloco::experiments {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

envs::EnvOptions envOptions(int n, bool differentiable) {
  envs::EnvOptions o;
  o.numEnvs = n;
  o.threads = 2;
  o.differentiable = differentiable;
  o.printSummary = false;
  return o;
}

}  // namespace

void benchEnvs(std::map<std::string, double>& out, double seconds) {
  // The env's tensors are small ([N, <= 49]): torch's intra-op threads would only compete with
  // the simulator's pool for the same cores.
  const int torchThreads = at::get_num_threads();
  envs::setTorchThreads(1);
  torch::NoGradGuard noGradOutside;  // only the SHAC window records a graph
  const envs::TaskConfig walk = envs::loadTaskConfig("walk");

  {
    envs::LocomotionEnv env(walk, envOptions(2048, false));
    torch::manual_seed(0);
    std::vector<torch::Tensor> actions;
    for (int i = 0; i < 16; ++i) actions.push_back(2 * torch::rand({2048, 12}) - 1);
    for (int i = 0; i < 20; ++i) env.step(actions[i % 16]);  // warm up
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      long steps = 0;
      const auto t0 = Clock::now();
      do {
        env.step(actions[steps % 16]);
        ++steps;
      } while (since(t0) < seconds / 5);
      best = std::max(best, 2048.0 * steps / since(t0));
    }
    out["env_steps_per_s"] = best;
  }

  {
    torch::AutoGradMode gradOn(true);
    const int n = 64, horizon = 32;
    envs::LocomotionEnv env(walk, envOptions(n, true));
    torch::manual_seed(0);
    torch::nn::Sequential actor(torch::nn::Linear(env.numObs(), 128), torch::nn::ELU(),
                                torch::nn::Linear(128, 64), torch::nn::ELU(),
                                torch::nn::Linear(64, 32), torch::nn::ELU(),
                                torch::nn::Linear(32, env.numActions()), torch::nn::Tanh());
    const torch::Tensor given =
        (0.6 * torch::rand({horizon, n, env.numActions()}) - 0.3).requires_grad_();
    for (bool withActor : {false, true}) {
      double bestFwd = 1e300, bestBwd = 1e300, best = 1e300;
      for (int rep = 0; rep < 5; ++rep) {
        double fwd = 0, bwd = 0;
        int windows = 0;
        const auto t0 = Clock::now();
        do {
          env.detach();
          const auto tf = Clock::now();
          torch::Tensor total = torch::zeros({});
          for (int t = 0; t < horizon; ++t) {
            const torch::Tensor a = withActor ? actor->forward(env.observations()) : given[t];
            total = total + env.step(a).rewards.sum();
          }
          const auto tb = Clock::now();
          fwd += std::chrono::duration<double>(tb - tf).count();
          total.backward();
          bwd += since(tb);
          ++windows;
        } while (since(t0) < seconds / 5);
        bestFwd = std::min(bestFwd, fwd / windows);
        bestBwd = std::min(bestBwd, bwd / windows);
        best = std::min(best, (fwd + bwd) / windows);
      }
      if (withActor) {
        out["shac_window_actor_s"] = best;
      } else {
        out["shac_window_s"] = best;
        out["shac_window_fwd_s"] = bestFwd;
        out["shac_window_bwd_s"] = bestBwd;
      }
    }
    // simStep keeps q, v by reference per sub-step and one qTarget per env step (sim_function.h),
    // plus one failure flag byte per sub-step.
    const auto& m = env.robot().model;
    const int d = walk.decimation();
    out["shac_saved_bytes_per_env_step"] = 8.0 * (d * (m.nq() + m.nv()) + m.nj()) + d;
  }
  envs::setTorchThreads(torchThreads);
}

}  // namespace diffloco::experiments
