// Many independent worlds of one Model stepped in parallel on the CPU, through the stages that the
// GPU runs (sim/moreau_step.h, sim/moreau_step_vjp.h, sim/soft_step_vjp.h), so that every test and
// bar of the environments exercises the GPU's code. States are stored one column per world. A
// world whose step produces a non-finite state keeps its previous state and is flagged in
// `failed`; stepping never throws for it. The owner (an environment) resets flagged worlds.
//
// The model must fit sim::Quadruped and the options the stages (sim::notInStepModel and
// sim::notInStepOptions in sim/pack.h; not: the soft model's adaptive integrator): the constructor
// throws std::invalid_argument with the reason otherwise. stepVjp throws it for options whose VJP
// the tape does not hold (sim::notInStepVjp: more Gauss-Seidel sweeps or soft sub-steps).
//
// BatchPath::Cuda runs the same functions on a CUDA device (batch::CudaBatch, one thread per world):
// every step() and stepVjp() copies the worlds' matrices to the device and the results back, so
// the results and failure flags are those of BatchPath::Fixed to rounding.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/options.h"
#include "sim/thread_pool.h"

namespace diffloco::sim {

// The fixed-size functions' types (sim/step_model.h), kept out of this header: it reaches the
// environments and the trainer, which need none of them.
struct Quadruped;
template <class D>
struct StepModel;
template <class D>
struct StepTape;  // sim/moreau_step_vjp.h
template <class D>
struct SoftTape;  // sim/soft_step_vjp.h
using FixedModel = StepModel<Quadruped>;
using FixedTape = StepTape<Quadruped>;
using FixedSoftTape = SoftTape<Quadruped>;
struct FixedOptions;
struct HeightFieldView;
}  // namespace diffloco::sim

namespace diffloco::batch {

class CudaBatch;

// Where a BatchSim steps its worlds with the stages.
enum class BatchPath {
  Fixed,  // sim::fixedStep and its VJP on the CPU's thread pool
  Cuda,   // the same functions on the first CUDA device
};

// "" when BatchPath::Cuda can run here, else why not (this build has no CUDA, or no device).
std::string cudaUnavailable();

class BatchSim {
 public:
  // Throws std::invalid_argument when the model or the options do not fit the stages, and
  // BatchPath::Cuda std::runtime_error when cudaUnavailable() says why.
  BatchSim(const sim::Model& model, const sim::SimOptions& options, int worlds, int threads,
           BatchPath path = BatchPath::Fixed);
  ~BatchSim();

  int worlds() const { return static_cast<int>(q.cols()); }
  const sim::Model& model() const { return model_; }
  sim::SimOptions options;  // read at every step() and stepVjp(); must stay the stages'

  sim::MatX q;                       // nq x worlds
  sim::MatX v;                       // nv x worlds
  sim::MatX qTarget;                 // nj x worlds: actuator input
  std::vector<std::uint8_t> failed;  // set by step() for worlds that went non-finite

  // One step of every world; returns how many worlds failed in this step.
  int step();

  // Adjoints of one batched step that started from (qIn, vIn, qTargetIn) (the values q, v, qTarget
  // had before that step()), given the adjoints of its results. Outputs are resized; column per
  // world. The forward is recomputed per world. A world whose recomputed step or adjoints are not
  // finite gets zero adjoints and is flagged in failedVjp. Throws std::invalid_argument with
  // sim::notInStepVjp's reason for options whose VJP the tape does not hold.
  void stepVjp(const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
               const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq, sim::MatX& gv,
               sim::MatX& gqTarget);
  std::vector<std::uint8_t> failedVjp;

  BatchPath path() const { return path_; }

  // Per-world randomisation: friction coefficient (default options.contact.mu) and a mass added to
  // the base (its inertia scales with it, as for a uniform change of density).
  void setFriction(int world, double mu) {
    mu_[world] = mu;
    paramsChanged_ = true;
  }
  double friction(int world) const { return mu_[world]; }
  void setAddedBaseMass(int world, double dm);
  // Motor strength: the PD law's gains kp and kd scaled by s in this world (legged_gym's
  // motor_strength: a weaker or stronger drive; the torque limits stay).
  void setMotorStrength(int world, double s) {
    strength_[world] = s;
    paramsChanged_ = true;
  }

  sim::ThreadPool& pool() { return pool_; }

 private:
  sim::FixedOptions worldOptions(int world, sim::FixedOptions o) const;
  const sim::FixedModel& worldFixedModel(int world) const;
  // One world's step and VJP on the CPU. The step writes qNext_, vNext_ and returns whether the new
  // state is finite; the VJP writes column w of the adjoints and returns whether its recomputed
  // step was finite (false: the columns are left alone).
  bool stepWorld(int w, const sim::FixedOptions& base, const sim::HeightFieldView& ground);
  bool vjpWorld(int w, int worker, const sim::FixedOptions& base,
                const sim::HeightFieldView& ground, const sim::MatX& qIn, const sim::MatX& vIn,
                const sim::MatX& qTargetIn, const sim::MatX& gqNext, const sim::MatX& gvNext,
                sim::MatX& gq, sim::MatX& gv, sim::MatX& gqTarget);
  // The Cuda path: the device's step and VJP of every world.
  int stepOnDevice();
  void uploadWorldParams();

  const sim::Model& model_;
  BatchPath path_;
  std::unique_ptr<const sim::FixedModel> fixedModel_;
  sim::ThreadPool pool_;
  std::vector<std::unique_ptr<sim::FixedTape>> tapes_;  // one per worker, made on the first VJP
  std::vector<std::unique_ptr<sim::FixedSoftTape>> softTapes_;
  std::vector<double> mu_, strength_;
  std::vector<sim::FixedModel>
      fixedModels_;  // per-world copies, made on the first setAddedBaseMass
  sim::MatX qNext_, vNext_;
  // The Cuda path's device worlds (shared_ptr: its deleter comes with it, so a build without
  // CUDA needs no CudaBatch).
  std::shared_ptr<CudaBatch> cuda_;
  std::vector<int> deviceFailed_;
  bool paramsChanged_ = true;  // the per-world parameters are not on the device yet
};

}  // namespace diffloco::batch
