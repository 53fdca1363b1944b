// Training-iteration benchmarks for `diffloco bench` (experiments/bench.cpp calls benchTraining).
#pragma once

#include <map>
#include <string>

namespace diffloco::experiments {

// Adds to `out`, for each shipped SHAC config (walk = configs/walk_quadruped_shac.yaml, velocity =
// configs/velocity_anymal_shac.yaml, velocity_rough = configs/velocity_anymal_rough_shac.yaml,
// its first iterations on the terrain curriculum), built as `diffloco train` builds it (its envs,
// horizon, networks, simulator and torch threads; the environment and algorithm only, no run
// folder):
//   shac_iteration_s_<task>                    median wall time of one SHAC iteration (rollout,
//                                              actor backward, critic fit on its second thread)
//   shac_iteration_<task>_rollout_s, _actor_backward_s, _critic_s   its parts (medians)
// after two warm-up iterations, over max(3, 10 x `seconds`) iterations (a count, so that every
// build times the same iterations). Where a CUDA device is (batch::cudaUnavailable() empty), the
// rough config also runs on it (EnvOptions::simPath = batch::BatchPath::Cuda), its iterations
// alternated with the CPU's: shac_iteration_s_velocity_rough_cuda, _rollout_s_cuda,
// _actor_backward_s_cuda, shac_iteration_velocity_rough_cuda_over_fixed.
// roughFrom: a checkpoint of the rough config whose networks (train::warmStart) its runs start
// from, a trained state ("": fresh networks).
void benchTraining(std::map<std::string, double>& out, double seconds,
                   const std::string& roughFrom = "");

// One minibatch step of SHAC's critic fit, loss and gradient only (64 per walk iteration), for
// the walk config's critic and minibatch (512 of 2048 rows), one thread: the fused pass
// (policies/mlp_regression.h) and torch's autograd on the same network and rows, in alternating
// blocks so that both see the same machine:
//   critic_step_us_fused, critic_step_us_autograd     medians per step [us]
//   critic_step_autograd_over_fused                   their ratio
void benchCriticStep(std::map<std::string, double>& out, double seconds);

}  // namespace diffloco::experiments
