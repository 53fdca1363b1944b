// Environment benchmarks for `diffloco bench` (experiments/bench.cpp calls benchEnvs).
#pragma once

#include <map>
#include <string>

namespace diffloco::experiments {

// Adds to `out`:
//   env_steps_per_s       sampling mode (no autograd), walk task, 2048 envs, 2 simulator threads,
//                         uniform random actions in [-1, 1] (falls and resets included)
//   shac_window_s         differentiable mode, walk task, 64 envs x 32 steps: forward with autograd
//                         plus backward of the summed reward, actions given (the env's share of a
//                         SHAC actor window); shac_window_fwd_s, shac_window_bwd_s: its two parts
//   shac_window_actor_s   the same with the actions from an MLP actor on the observations
//                         (128, 64, 32, ELU, tanh: Table 6), i.e. a whole SHAC actor window
//   shac_saved_bytes_per_env_step   bytes the simulator's autograd nodes keep per world and env
//   step
// Each figure is the best of 5 repeats of at least seconds / 5. Torch (and OpenBLAS) run
// single-threaded during the measurement (envs::setTorchThreads(1)), as the small tensors need.
void benchEnvs(std::map<std::string, double>& out, double seconds);

}  // namespace diffloco::experiments
