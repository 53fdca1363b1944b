// `diffloco train`: builds the env and the algorithm from a training config, runs the iterations,
// and keeps the run folder (runs/run_dir.h): resolved config, git state, metrics.csv, TensorBoard
// events, checkpoints and the final policy; a console line per iteration.
//
// Resume (--resume RUN) continues from RUN's last checkpoint: weights, optimiser states, the
// normaliser, the iteration counter, the algorithm's random generator, the episode statistics and
// the env's state. The env's random draws are reseeded from (seed, iteration) at the start of
// every iteration, in every run, so a resumed run repeats an uninterrupted one exactly (with
// run.torch_threads = 1; tests/train/test_trainer.cpp checks it bit for bit).
//
// Non-finite losses or gradients skip that update (the algorithms do) and are logged here; after
// run.max_nan_iterations iterations in a row with one the run stops with an error. Ctrl-C ends
// the current iteration, writes a checkpoint and stops (a second Ctrl-C kills).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace diffloco::train {

struct TrainArgs {
  std::string config;              // training config; optional with resume
  std::vector<std::string> sets;   // "a.b.c=value"
  std::optional<std::int64_t> seed;
  std::string out = "runs";        // parent of the run folders
  std::string resume;              // run folder to continue
  bool verbose = false;
  int stopAfter = -1;              // stop after this many iterations of this session (tests)
  // Iteration (1-based, as printed) whose torch operations are recorded to
  // <run>/trace_iteration_<N>.json (Chrome trace format; tools/tables/trace_summary.py); 0: none.
  int traceIteration = 0;
};

struct TrainResult {
  std::string runDir;
  int iteration = 0;      // iterations done (in total)
  bool finished = false;  // reached the configured number of iterations
};

// Throws std::runtime_error with a message for the user on bad input or a stopped run.
TrainResult train(const TrainArgs& args);

}  // namespace diffloco::train
