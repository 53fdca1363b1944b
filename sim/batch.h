// Many independent worlds of one Model stepped in parallel. States are stored one column per world.
// A world whose step produces a non-finite state keeps its previous state and is flagged in
// `failed`; stepping never throws for it. The owner (an environment) resets flagged worlds.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/data.h"
#include "sim/options.h"
#include "sim/thread_pool.h"

namespace diffloco::sim {

class BatchSim {
 public:
  BatchSim(const Model& model, const SimOptions& options, int worlds, int threads);

  int worlds() const { return static_cast<int>(q.cols()); }
  const Model& model() const { return model_; }
  SimOptions options;

  MatX q;        // nq x worlds
  MatX v;        // nv x worlds
  MatX qTarget;  // nj x worlds: actuator input
  std::vector<std::uint8_t> failed;  // set by step() for worlds that went non-finite

  // One step of every world; returns how many worlds failed in this step.
  int step();
  ThreadPool& pool() { return pool_; }

 private:
  const Model& model_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Data>> data_;  // one per worker
  MatX qNext_, vNext_;
};

}  // namespace diffloco::sim
