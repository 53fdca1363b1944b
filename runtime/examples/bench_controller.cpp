// Per-tick cost of the robot-side controller (runtime/controller.h) for exported policies: one
// control tick in Policy mode = limit checks + observation from the robot state + the network
// (TorchScript forward) + the PD law in plain C++. Also each part on its own. One thread, as on a
// robot's control core; the state is a standing robot with small joint noise so that the network
// sees plausible inputs. Prints median and 99th percentile over the ticks, in microseconds.
//
//   diffloco_controller_bench POLICY.pt... [--ticks N] [--json]
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/controller.h"

namespace {

using Clock = std::chrono::steady_clock;
using diffloco::deploy::Controller;
using diffloco::deploy::ControllerConfig;
using diffloco::deploy::PolicyMetadata;
using diffloco::deploy::RobotState;

struct Timing {
  double median = 0, p99 = 0;
};

// Times `work` `ticks` times after 200 warm-up calls (TorchScript's profiling executor optimises
// the graph during its first calls).
Timing timeTicks(int ticks, const std::function<void()>& work) {
  for (int i = 0; i < 200; ++i) work();
  std::vector<double> us(ticks);
  for (int i = 0; i < ticks; ++i) {
    const auto t0 = Clock::now();
    work();
    us[i] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  std::sort(us.begin(), us.end());
  return {us[ticks / 2], us[std::min(ticks - 1, ticks * 99 / 100)]};
}

std::vector<std::string> jointNamesOf(const std::string& path) {
  torch::jit::Module m = torch::jit::load(path);
  return diffloco::deploy::parsePolicyMetadata(m.attr("metadata_json").toStringRef(), path)
      .jointNames;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> policies;
  int ticks = 20000;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ticks") && i + 1 < argc)
      ticks = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else
      policies.push_back(argv[i]);
  }
  if (policies.empty() || ticks < 100) {
    std::fprintf(stderr, "usage: %s POLICY.pt... [--ticks N >= 100] [--json]\n", argv[0]);
    return 2;
  }
  at::set_num_threads(1);
  try {
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (size_t p = 0; p < policies.size(); ++p) {
      const std::string& path = policies[p];
      ControllerConfig cfg;
      cfg.jointNames = jointNamesOf(path);
      Controller c(path, cfg);
      const PolicyMetadata& meta = c.metadata();
      const int nj = meta.numJoints();
      std::mt19937 rng(0);
      std::uniform_real_distribution<double> noise(-0.05, 0.05);
      RobotState s;
      s.jointPos = meta.defaultJointPos;
      s.jointVel.assign(nj, 0.0);
      for (int j = 0; j < nj; ++j) s.jointPos[j] += noise(rng), s.jointVel[j] = 10 * noise(rng);
      s.baseHeight = meta.defaultBaseHeight;
      s.baseLinVel = {0.5, 0, 0};
      s.command = {0.5, 0, 0};
      c.startPolicy();
      std::vector<float> obs = c.observation(s);
      std::vector<double> target = c.policyStep(s);
      const Timing tick = timeTicks(ticks, [&] {
        if (c.mode() != diffloco::deploy::Mode::Policy) c.startPolicy();
        c.tick(s);
      });
      const Timing observation = timeTicks(ticks, [&] { obs = c.observation(s); });
      const Timing network = timeTicks(ticks, [&] { c.policyAction(obs); });
      const Timing pd = timeTicks(ticks, [&] { c.actuatorTorque(target, s.jointPos, s.jointVel); });
      if (json) {
        results.push_back({{"policy", path},
                            {"num_obs", meta.numObs},
                            {"joints", nj},
                            {"ticks", ticks},
                            {"tick_us_median", tick.median},
                            {"tick_us_p99", tick.p99},
                            {"observation_us_median", observation.median},
                            {"network_us_median", network.median},
                            {"pd_us_median", pd.median}});
      } else {
        std::printf("%s (%d observations, %d joints, %d ticks, 1 thread)\n", path.c_str(),
                    meta.numObs, nj, ticks);
        std::printf("  tick (checks + observation + network + PD)  median %8.2f us  p99 %8.2f us\n",
                    tick.median, tick.p99);
        std::printf("  observation                                 median %8.2f us\n",
                    observation.median);
        std::printf("  network (TorchScript forward)               median %8.2f us\n",
                    network.median);
        std::printf("  PD law (plain C++)                          median %8.2f us\n", pd.median);
      }
    }
    if (json)
      std::printf("%s\n",
                  results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
