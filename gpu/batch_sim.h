// Many independent worlds of one Model stepped in parallel on the CPU, through the same fixed-size
// functions that the GPU runs (sim/moreau_step.h, sim/moreau_step_vjp.h, sim/soft_step_vjp.h), so
// that every test and bar of the environments exercises the GPU's code. States are stored one
// column per world. A world whose step produces a non-finite state keeps its previous state and
// is flagged in `failed`; stepping never throws for it. The owner (an environment) resets flagged
// worlds.
//
// sim::step and sim::stepVjp (the dynamic sizes) take over where the fixed path cannot: a robot of
// other sizes or options it does not have (sim::notInStepModel, sim::notInStepOptions in
// sim/pack.h), for the whole batch; and a single world whose contact set is larger than the fixed
// arrays (MAXACTIVE spheres) or whose VJP needs more Gauss-Seidel sweeps or soft sub-steps than
// its tape holds.
//
// BatchPath::Cuda runs the same functions on a CUDA device (gpu::CudaBatch, one thread per world):
// every step() and stepVjp() copies the worlds' matrices to the device and the results back, and
// the worlds that the device fails go through the CPU path above, so the results and failure
// flags are those of BatchPath::Fixed to rounding.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/data.h"
#include "sim/options.h"
#include "sim/thread_pool.h"

namespace diffloco::sim {
struct StepAdjoint;

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

namespace diffloco::gpu {

class CudaBatch;

// Which functions a BatchSim steps its worlds with.
enum class BatchPath {
  Fixed,    // sim::fixedStep and its VJP where the model and options fit, else Dynamic
  Dynamic,  // sim::step and sim::stepVjp
  Cuda,     // the fixed functions on the first CUDA device (the CPU for the worlds it fails)
};

// "" when BatchPath::Cuda can run here, else why not (this build has no CUDA, or no device).
std::string cudaUnavailable();

class BatchSim {
 public:
  // BatchPath::Cuda throws (std::runtime_error) when cudaUnavailable() says why, or when the
  // model or the options do not fit the fixed functions.
  BatchSim(const sim::Model& model, const sim::SimOptions& options, int worlds, int threads,
           BatchPath path = BatchPath::Fixed);
  ~BatchSim();

  int worlds() const { return static_cast<int>(q.cols()); }
  const sim::Model& model() const { return model_; }
  sim::SimOptions options;  // read at every step() and stepVjp()

  sim::MatX q;                       // nq x worlds
  sim::MatX v;                       // nv x worlds
  sim::MatX qTarget;                 // nj x worlds: actuator input
  std::vector<std::uint8_t> failed;  // set by step() for worlds that went non-finite

  // One step of every world; returns how many worlds failed in this step.
  int step();

  // Adjoints of one batched step that started from (qIn, vIn, qTargetIn) (the values q, v, qTarget
  // had before that step()), given the adjoints of its results. Outputs are resized; column per
  // world. The forward is recomputed per world (sim/step_vjp.h). Non-finite adjoints are zeroed and
  // the world is flagged in failedVjp.
  void stepVjp(const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
               const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq, sim::MatX& gv,
               sim::MatX& gqTarget);
  std::vector<std::uint8_t> failedVjp;

  // The functions the next step() and stepVjp() run with the current options (Fixed or Cuda as
  // asked, Dynamic when the options do not fit them), and why not the fixed ones when it is
  // Dynamic ("" otherwise, and when Dynamic was asked for).
  BatchPath path() const;
  std::string whyDynamic() const;
  // Worlds that the last step() or stepVjp() handed to sim::step or sim::stepVjp on the fixed
  // path (a contact set or tape too large for the fixed arrays); on the Cuda path, the worlds the
  // device failed and the CPU stepped.
  int lastFallbacks() const { return fallbacks_; }

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
  const sim::Model& worldModel(int world) const {
    return models_.empty() ? model_ : models_[world];
  }

  sim::ThreadPool& pool() { return pool_; }

 private:
  sim::SimOptions worldOptions(int world) const;
  sim::FixedOptions worldOptions(int world, sim::FixedOptions o) const;
  const sim::FixedModel& worldFixedModel(int world) const;
  bool fixedPath() const;
  // One world's step and VJP on the CPU (the fixed functions where `fixed`, sim::step and
  // sim::stepVjp where they fail or not `fixed`); fallbacks counts the worlds the fixed functions
  // failed. The step writes qNext_, vNext_ and returns whether it succeeded; the VJP writes
  // column w of the adjoints.
  bool stepWorld(int w, int worker, bool fixed, const sim::FixedOptions& base,
                 const sim::HeightFieldView& ground, std::atomic<int>& fallbacks);
  void vjpWorld(int w, int worker, bool fixed, const sim::FixedOptions& base,
                const sim::HeightFieldView& ground, const sim::MatX& qIn, const sim::MatX& vIn,
                const sim::MatX& qTargetIn, const sim::MatX& gqNext, const sim::MatX& gvNext,
                sim::MatX& gq, sim::MatX& gv, sim::MatX& gqTarget,
                std::vector<sim::StepAdjoint>& adj, std::atomic<int>& fallbacks);
  // The Cuda path: the device's step and VJP of every world, then stepWorld / vjpWorld for the
  // worlds it failed.
  int stepOnDevice();
  void stepVjpOnDevice(const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
                       const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq,
                       sim::MatX& gv, sim::MatX& gqTarget);
  void uploadWorldParams();

  const sim::Model& model_;
  BatchPath requested_;
  std::string modelMisfit_;  // sim::notInStepModel<sim::Quadruped>(model)
  std::unique_ptr<const sim::FixedModel> fixedModel_;
  sim::ThreadPool pool_;
  std::vector<std::unique_ptr<sim::Data>> data_;        // one per worker
  std::vector<std::unique_ptr<sim::FixedTape>> tapes_;  // one per worker, made on the first VJP
  std::vector<std::unique_ptr<sim::FixedSoftTape>> softTapes_;
  std::vector<double> mu_, strength_;
  std::vector<sim::Model> models_;  // per-world copies, made on the first setAddedBaseMass
  std::vector<sim::FixedModel> fixedModels_;
  sim::MatX qNext_, vNext_;
  int fallbacks_ = 0;
  // The Cuda path's device worlds (shared_ptr: its deleter comes with it, so a build without
  // CUDA needs no CudaBatch).
  std::shared_ptr<CudaBatch> cuda_;
  std::vector<int> deviceFailed_;
  bool paramsChanged_ = true;  // the per-world parameters are not on the device yet
};

}  // namespace diffloco::gpu
