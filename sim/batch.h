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

  // Adjoints of one batched step that started from (qIn, vIn, qTargetIn) (the values q, v, qTarget
  // had before that step()), given the adjoints of its results. Outputs are resized; column per
  // world. The forward is recomputed per world (sim/step_vjp.h). Non-finite adjoints are zeroed and
  // the world is flagged in failedVjp.
  void stepVjp(const MatX& qIn, const MatX& vIn, const MatX& qTargetIn, const MatX& gqNext,
               const MatX& gvNext, MatX& gq, MatX& gv, MatX& gqTarget);
  std::vector<std::uint8_t> failedVjp;

  // Per-world randomisation: friction coefficient (default options.contact.mu) and a mass added to
  // the base (its inertia scales with it, as for a uniform change of density).
  void setFriction(int world, double mu) { mu_[world] = mu; }
  double friction(int world) const { return mu_[world]; }
  void setAddedBaseMass(int world, double dm);
  // Motor strength: the PD law's gains kp and kd scaled by s in this world (legged_gym's
  // motor_strength: a weaker or stronger drive; the torque limits stay).
  void setMotorStrength(int world, double s) { strength_[world] = s; }
  const Model& worldModel(int world) const { return models_.empty() ? model_ : models_[world]; }

  ThreadPool& pool() { return pool_; }

 private:
  SimOptions worldOptions(int world) const {
    SimOptions o = options;
    o.contact.mu = mu_[world];
    o.actuator.kp *= strength_[world];
    o.actuator.kd *= strength_[world];
    return o;
  }
  const Model& model_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Data>> data_;  // one per worker
  std::vector<double> mu_, strength_;
  std::vector<Model> models_;  // per-world copies, made on the first setAddedBaseMass
  MatX qNext_, vNext_;
};

}  // namespace diffloco::sim
