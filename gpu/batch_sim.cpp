#include "gpu/batch_sim.h"

#include <atomic>
#include <stdexcept>

#include "sim/moreau_step.h"
#include "sim/moreau_step_vjp.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#include "sim/step.h"
#include "sim/step_vjp.h"
#ifdef DIFFLOCO_CUDA
#include "gpu/cuda_batch.h"
#endif

namespace diffloco::gpu {

using sim::FixedAdjoint;
using sim::fixedSoftStepVjp;
using sim::FixedSoftTape;
using sim::fixedStep;
using sim::fixedStepRecord;
using sim::fixedStepVjp;
using sim::FixedTape;
using sim::setZero;

namespace {

// Flags world w and, when its step succeeded, takes (qNext, vNext) as its state.
bool acceptStep(int w, bool ok, sim::MatX& q, sim::MatX& v, const sim::MatX& qNext,
                const sim::MatX& vNext, std::vector<std::uint8_t>& failed) {
  failed[w] = !ok;
  if (ok) {
    q.col(w) = qNext.col(w);
    v.col(w) = vNext.col(w);
  }
  return ok;
}

}  // namespace

std::string cudaUnavailable() {
#ifdef DIFFLOCO_CUDA
  return cudaDeviceName().empty() ? "no CUDA device (or no usable driver)" : "";
#else
  return "this build has no CUDA (CMake found no CUDA compiler)";
#endif
}

BatchSim::BatchSim(const sim::Model& model, const sim::SimOptions& opts, int worlds, int threads,
                   BatchPath path)
    : options(opts),
      q(model.nq(), worlds),
      v(sim::MatX::Zero(model.nv(), worlds)),
      qTarget(sim::MatX::Zero(model.nj(), worlds)),
      failed(worlds, 0),
      failedVjp(worlds, 0),
      model_(model),
      requested_(path),
      modelMisfit_(sim::notInStepModel<sim::Quadruped>(model)),
      fixedModel_(std::make_unique<const FixedModel>(
          modelMisfit_.empty() ? sim::toStepModel<sim::Quadruped>(model) : FixedModel{})),
      pool_(threads),
      mu_(worlds, opts.contact.mu),
      strength_(worlds, 1.0),
      qNext_(model.nq(), worlds),
      vNext_(model.nv(), worlds) {
  for (int w = 0; w < worlds; ++w) q.col(w) = sim::neutralConfiguration(model);
  for (int t = 0; t < pool_.size(); ++t) data_.push_back(std::make_unique<sim::Data>(model));
  if (path != BatchPath::Cuda) return;
  std::string why = cudaUnavailable();
  if (why.empty()) why = modelMisfit_.empty() ? sim::notInStepOptions(options) : modelMisfit_;
  if (!why.empty()) throw std::runtime_error("the simulator on a CUDA device: " + why);
#ifdef DIFFLOCO_CUDA
  cuda_ = std::make_shared<CudaBatch>(*fixedModel_, sim::toStepOptions(options),
                                      sim::toView(options.contact.terrain.get()), worlds);
  deviceFailed_.assign(worlds, 0);
#endif
}

BatchSim::~BatchSim() = default;

sim::SimOptions BatchSim::worldOptions(int world) const {
  sim::SimOptions o = options;
  o.contact.mu = mu_[world];
  o.actuator.kp *= strength_[world];
  o.actuator.kd *= strength_[world];
  return o;
}

FixedOptions BatchSim::worldOptions(int world, FixedOptions o) const {
  o.mu = mu_[world];
  o.kp *= strength_[world];
  o.kd *= strength_[world];
  return o;
}

const FixedModel& BatchSim::worldFixedModel(int world) const {
  return fixedModels_.empty() ? *fixedModel_ : fixedModels_[world];
}

bool BatchSim::fixedPath() const {
  return requested_ != BatchPath::Dynamic && modelMisfit_.empty() &&
         sim::notInStepOptions(options).empty();
}

BatchPath BatchSim::path() const {
  return fixedPath() ? requested_ : BatchPath::Dynamic;
}

std::string BatchSim::whyDynamic() const {
  if (requested_ == BatchPath::Dynamic) return "";
  return modelMisfit_.empty() ? sim::notInStepOptions(options) : modelMisfit_;
}

bool BatchSim::stepWorld(int w, int worker, bool fixed, const FixedOptions& base,
                         const HeightFieldView& ground, std::atomic<int>& fallbacks) {
  bool ok = fixed && fixedStep(worldFixedModel(w), worldOptions(w, base), ground, q.col(w).data(),
                               v.col(w).data(), qTarget.col(w).data(), qNext_.col(w).data(),
                               vNext_.col(w).data());
  if (!ok) {
    // The dynamic step: the whole batch off the fixed path, or this world's contact set larger
    // than the fixed arrays (a non-finite step fails here again).
    if (fixed) ++fallbacks;
    ok = sim::step(worldModel(w), worldOptions(w), *data_[worker], q.col(w), v.col(w),
                   qTarget.col(w), qNext_.col(w), vNext_.col(w));
  }
  return ok;
}

int BatchSim::step() {
  if (cuda_ && fixedPath()) return stepOnDevice();
  std::atomic<int> nfailed{0}, fallbacks{0};
  const bool fixed = fixedPath();
  const FixedOptions base = fixed ? sim::toStepOptions(options) : FixedOptions{};
  const HeightFieldView ground = sim::toView(options.contact.terrain.get());
  pool_.parallelFor(
      worlds(),
      [&](int w, int worker) {
        const bool ok = stepWorld(w, worker, fixed, base, ground, fallbacks);
        nfailed += !acceptStep(w, ok, q, v, qNext_, vNext_, failed);
      },
      16);
  fallbacks_ = fallbacks;
  return nfailed;
}

void BatchSim::setAddedBaseMass(int world, double dm) {
  if (models_.empty()) models_.assign(worlds(), model_);
  const sim::Inertia& I0 = model_.bodies[0].inertia;
  const double s = (I0.m + dm) / I0.m;
  sim::Inertia& I = models_[world].bodies[0].inertia;
  I.m = I0.m * s;
  I.h = I0.h * s;
  I.Io = I0.Io * s;
  paramsChanged_ = true;
  if (!modelMisfit_.empty()) return;
  if (fixedModels_.empty()) fixedModels_.assign(worlds(), *fixedModel_);
  fixedModels_[world] = sim::toStepModel<sim::Quadruped>(models_[world]);
}

void BatchSim::vjpWorld(int w, int worker, bool fixed, const FixedOptions& base,
                        const HeightFieldView& ground, const sim::MatX& qIn, const sim::MatX& vIn,
                        const sim::MatX& qTargetIn, const sim::MatX& gqNext,
                        const sim::MatX& gvNext, sim::MatX& gq, sim::MatX& gv,
                        sim::MatX& gqTarget, std::vector<sim::StepAdjoint>& adj,
                        std::atomic<int>& fallbacks) {
  bool done = false;
  if (fixed) {
    const FixedModel& fm = worldFixedModel(w);
    const FixedOptions o = worldOptions(w, base);
    FixedAdjoint out;
    setZero(out);
    if (base.model == FixedContact::Soft) {
      done = fixedSoftStepVjp(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(),
                              qTargetIn.col(w).data(), gqNext.col(w).data(), gvNext.col(w).data(),
                              *softTapes_[worker], out);
    } else {
      FixedTape& t = *tapes_[worker];
      double qn[NQ], vn[NV];
      // A failed record (a contact set or sweeps beyond the tape, or a non-finite step) goes to
      // sim::stepVjp below.
      if (fixedStepRecord(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(),
                          qTargetIn.col(w).data(), qn, vn, t)) {
        fixedStepVjp(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(), qTargetIn.col(w).data(),
                     t, gqNext.col(w).data(), gvNext.col(w).data(), out);
        done = true;
      }
    }
    if (done) {
      gq.col(w) = Eigen::Map<const sim::VecX>(out.q, NQ);
      gv.col(w) = Eigen::Map<const sim::VecX>(out.v, NV);
      gqTarget.col(w) = Eigen::Map<const sim::VecX>(out.qTarget, NJ);
    } else {
      ++fallbacks;
    }
  }
  if (!done) {
    sim::StepAdjoint& a = adj[worker];
    a.setZero(model_);
    sim::stepVjp(worldModel(w), worldOptions(w), *data_[worker], qIn.col(w), vIn.col(w),
                 qTargetIn.col(w), gqNext.col(w), gvNext.col(w), a);
    gq.col(w) = a.q;
    gv.col(w) = a.v;
    gqTarget.col(w) = a.qTarget;
  }
}

void BatchSim::stepVjp(const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
                       const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq,
                       sim::MatX& gv, sim::MatX& gqTarget) {
  const sim::Model& m = model_;
  gq.setZero(m.nq(), worlds());
  gv.setZero(m.nv(), worlds());
  gqTarget.setZero(m.nj(), worlds());
  const bool fixed = fixedPath();
  // The model and ground the VJP differentiates (straight_through: the smoothed model; a
  // straight-through terrain: its smoothed copy).
  const FixedOptions base = fixed ? sim::toStepOptionsBackward(options) : FixedOptions{};
  const HeightFieldView ground = sim::backwardView(options);
  if (fixed && tapes_.empty())
    for (int t = 0; t < pool_.size(); ++t) {
      tapes_.push_back(std::make_unique<FixedTape>());
      softTapes_.push_back(std::make_unique<FixedSoftTape>());
    }
  std::vector<sim::StepAdjoint> adj(pool_.size(), sim::StepAdjoint(m));
  std::atomic<int> fallbacks{0}, cpuFallbacks{0};
  const bool device = cuda_ && fixed;
#ifdef DIFFLOCO_CUDA
  if (device) {
    cuda_->setVjp(base, ground);
    uploadWorldParams();
    cuda_->upload(qIn.data(), vIn.data(), qTargetIn.data());
    cuda_->uploadSeeds(gqNext.data(), gvNext.data());
    cuda_->vjp(CudaBatch::VjpKind::Fused);
    cuda_->downloadAdjoints(gq.data(), gv.data(), gqTarget.data());
    cuda_->downloadFailed(deviceFailed_.data());
  }
#endif
  pool_.parallelFor(
      worlds(),
      [&](int w, int worker) {
        // On the Cuda path a fallback is a world the device failed, whichever CPU path took it.
        if (device && deviceFailed_[w]) ++fallbacks;
        if (!device || deviceFailed_[w])
          vjpWorld(w, worker, fixed, base, ground, qIn, vIn, qTargetIn, gqNext, gvNext, gq, gv,
                   gqTarget, adj, device ? cpuFallbacks : fallbacks);
        const bool ok =
            gq.col(w).allFinite() && gv.col(w).allFinite() && gqTarget.col(w).allFinite();
        failedVjp[w] = !ok;
        if (!ok) {
          gq.col(w).setZero();
          gv.col(w).setZero();
          gqTarget.col(w).setZero();
        }
      },
      8);
  fallbacks_ = fallbacks;
}

// The device's step of every world; the worlds it failed (a contact set larger than MAXACTIVE, a
// non-finite step) stepped again on the CPU, as the Fixed path steps them.
int BatchSim::stepOnDevice() {
  std::atomic<int> nfailed{0}, fallbacks{0};
#ifdef DIFFLOCO_CUDA
  std::atomic<int> cpuFallbacks{0};
  const FixedOptions base = sim::toStepOptions(options);
  const HeightFieldView ground = sim::toView(options.contact.terrain.get());
  cuda_->setStep(base, ground);
  uploadWorldParams();
  cuda_->upload(q.data(), v.data(), qTarget.data());
  cuda_->step(1);
  cuda_->download(qNext_.data(), vNext_.data());
  cuda_->downloadFailed(deviceFailed_.data());
  pool_.parallelFor(
      worlds(),
      [&](int w, int worker) {
        bool ok = true;
        if (deviceFailed_[w]) {
          ++fallbacks;
          ok = stepWorld(w, worker, true, base, ground, cpuFallbacks);
        }
        nfailed += !acceptStep(w, ok, q, v, qNext_, vNext_, failed);
      },
      16);
#endif
  fallbacks_ = fallbacks;
  return nfailed;
}

void BatchSim::uploadWorldParams() {
#ifdef DIFFLOCO_CUDA
  if (!paramsChanged_) return;
  cuda_->setWorldParams(mu_.data(), strength_.data(),
                        fixedModels_.empty() ? nullptr : fixedModels_.data());
  paramsChanged_ = false;
#endif
}

}  // namespace diffloco::gpu
