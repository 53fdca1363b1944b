#include "batch/batch_sim.h"

#include <stdexcept>

#include "batch/sim_names.h"
#include "sim/moreau_step.h"
#include "sim/moreau_step_vjp.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#ifdef DIFFLOCO_CUDA
#include "batch/cuda_batch.h"
#endif

namespace diffloco::batch {

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

// The model packed for the stages, or std::invalid_argument with the reason the model or the
// options do not fit them.
FixedModel packedModel(const sim::Model& model, const sim::SimOptions& options) {
  std::string why = sim::notInStepModel<sim::Quadruped>(model);
  if (why.empty()) why = sim::notInStepOptions(options);
  if (!why.empty()) throw std::invalid_argument("the batch simulator (the stages): " + why);
  return sim::toStepModel<sim::Quadruped>(model);
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
      path_(path),
      fixedModel_(std::make_unique<const FixedModel>(packedModel(model, opts))),
      pool_(threads),
      mu_(worlds, opts.contact.mu),
      strength_(worlds, 1.0),
      qNext_(model.nq(), worlds),
      vNext_(model.nv(), worlds) {
  for (int w = 0; w < worlds; ++w) q.col(w) = sim::neutralConfiguration(model);
  if (path != BatchPath::Cuda) return;
  if (const std::string why = cudaUnavailable(); !why.empty())
    throw std::runtime_error("the simulator on a CUDA device: " + why);
#ifdef DIFFLOCO_CUDA
  cuda_ = std::make_shared<CudaBatch>(*fixedModel_, sim::toStepOptions(options),
                                      sim::toView(options.contact.terrain.get()), worlds);
  deviceFailed_.assign(worlds, 0);
#endif
}

BatchSim::~BatchSim() = default;

FixedOptions BatchSim::worldOptions(int world, FixedOptions o) const {
  o.mu = mu_[world];
  o.kp *= strength_[world];
  o.kd *= strength_[world];
  return o;
}

const FixedModel& BatchSim::worldFixedModel(int world) const {
  return fixedModels_.empty() ? *fixedModel_ : fixedModels_[world];
}

bool BatchSim::stepWorld(int w, const FixedOptions& base, const HeightFieldView& ground) {
  return fixedStep(worldFixedModel(w), worldOptions(w, base), ground, q.col(w).data(),
                   v.col(w).data(), qTarget.col(w).data(), qNext_.col(w).data(),
                   vNext_.col(w).data());
}

int BatchSim::step() {
  if (cuda_) return stepOnDevice();
  std::atomic<int> nfailed{0};
  const FixedOptions base = sim::toStepOptions(options);
  const HeightFieldView ground = sim::toView(options.contact.terrain.get());
  pool_.parallelFor(
      worlds(),
      [&](int w, int) {
        const bool ok = stepWorld(w, base, ground);
        nfailed += !acceptStep(w, ok, q, v, qNext_, vNext_, failed);
      },
      16);
  return nfailed;
}

void BatchSim::setAddedBaseMass(int world, double dm) {
  // The base's inertia scaled as for a uniform change of density: its mass, first moment and
  // rotational inertia by s.
  const sim::Inertia& I0 = model_.bodies[0].inertia;
  const double s = (I0.m + dm) / I0.m;
  if (fixedModels_.empty()) fixedModels_.assign(worlds(), *fixedModel_);
  const sim::SInertia& from = fixedModel_->inertia[0];
  sim::SInertia& I = fixedModels_[world].inertia[0];
  I.m = I0.m * s;
  for (int r = 0; r < 3; ++r) I.h[r] = from.h[r] * s;
  for (int k = 0; k < 9; ++k) I.Io.e[k] = from.Io.e[k] * s;
  paramsChanged_ = true;
}

bool BatchSim::vjpWorld(int w, int worker, const FixedOptions& base, const HeightFieldView& ground,
                        const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
                        const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq,
                        sim::MatX& gv, sim::MatX& gqTarget) {
  const FixedModel& fm = worldFixedModel(w);
  const FixedOptions o = worldOptions(w, base);
  FixedAdjoint out;
  setZero(out);
  bool ok;
  if (base.model == FixedContact::Soft) {
    ok = fixedSoftStepVjp(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(),
                          qTargetIn.col(w).data(), gqNext.col(w).data(), gvNext.col(w).data(),
                          *softTapes_[worker], out);
  } else {
    FixedTape& t = *tapes_[worker];
    double qn[NQ], vn[NV];
    ok = fixedStepRecord(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(),
                         qTargetIn.col(w).data(), qn, vn, t);
    if (ok)
      fixedStepVjp(fm, o, ground, qIn.col(w).data(), vIn.col(w).data(), qTargetIn.col(w).data(), t,
                   gqNext.col(w).data(), gvNext.col(w).data(), out);
  }
  if (ok) {
    gq.col(w) = Eigen::Map<const sim::VecX>(out.q, NQ);
    gv.col(w) = Eigen::Map<const sim::VecX>(out.v, NV);
    gqTarget.col(w) = Eigen::Map<const sim::VecX>(out.qTarget, NJ);
  }
  return ok;
}

void BatchSim::stepVjp(const sim::MatX& qIn, const sim::MatX& vIn, const sim::MatX& qTargetIn,
                       const sim::MatX& gqNext, const sim::MatX& gvNext, sim::MatX& gq,
                       sim::MatX& gv, sim::MatX& gqTarget) {
  if (const std::string why = sim::notInStepVjp<sim::Quadruped>(options); !why.empty())
    throw std::invalid_argument("the batch simulator's VJP: " + why);
  const sim::Model& m = model_;
  gq.setZero(m.nq(), worlds());
  gv.setZero(m.nv(), worlds());
  gqTarget.setZero(m.nj(), worlds());
  // The model and ground the VJP differentiates (straight_through: the smoothed model; a
  // straight-through terrain: its smoothed copy).
  const FixedOptions base = sim::toStepOptionsBackward(options);
  const HeightFieldView ground = sim::backwardView(options);
  const bool device = cuda_ != nullptr;
  if (!device && tapes_.empty())
    for (int t = 0; t < pool_.size(); ++t) {
      tapes_.push_back(std::make_unique<FixedTape>());
      softTapes_.push_back(std::make_unique<FixedSoftTape>());
    }
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
        const bool stepped = device ? !deviceFailed_[w]
                                    : vjpWorld(w, worker, base, ground, qIn, vIn, qTargetIn, gqNext,
                                               gvNext, gq, gv, gqTarget);
        const bool ok = stepped && gq.col(w).allFinite() && gv.col(w).allFinite() &&
                        gqTarget.col(w).allFinite();
        failedVjp[w] = !ok;
        if (!ok) {
          gq.col(w).setZero();
          gv.col(w).setZero();
          gqTarget.col(w).setZero();
        }
      },
      8);
}

// The device's step of every world; a world it failed (a non-finite step) keeps its state.
int BatchSim::stepOnDevice() {
  std::atomic<int> nfailed{0};
#ifdef DIFFLOCO_CUDA
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
      [&](int w, int) {
        nfailed += !acceptStep(w, !deviceFailed_[w], q, v, qNext_, vNext_, failed);
      },
      16);
#endif
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

}  // namespace diffloco::batch
