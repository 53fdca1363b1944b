#include "sim/batch.h"

#include "sim/step.h"
#include "sim/step_vjp.h"

namespace diffloco::sim {

BatchSim::BatchSim(const Model& model, const SimOptions& opts, int worlds, int threads)
    : options(opts),
      q(model.nq(), worlds),
      v(MatX::Zero(model.nv(), worlds)),
      qTarget(MatX::Zero(model.nj(), worlds)),
      failed(worlds, 0),
      failedVjp(worlds, 0),
      model_(model),
      pool_(threads),
      mu_(worlds, opts.contact.mu),
      strength_(worlds, 1.0),
      qNext_(model.nq(), worlds),
      vNext_(model.nv(), worlds) {
  for (int w = 0; w < worlds; ++w) q.col(w) = neutralConfiguration(model);
  for (int t = 0; t < pool_.size(); ++t) data_.push_back(std::make_unique<Data>(model));
}

int BatchSim::step() {
  std::atomic<int> nfailed{0};
  pool_.parallelFor(
      worlds(),
      [&](int w, int worker) {
        const bool ok = sim::step(worldModel(w), worldOptions(w), *data_[worker], q.col(w), v.col(w),
                                  qTarget.col(w), qNext_.col(w), vNext_.col(w));
        failed[w] = !ok;
        if (ok) {
          q.col(w) = qNext_.col(w);
          v.col(w) = vNext_.col(w);
        } else {
          ++nfailed;
        }
      },
      16);
  return nfailed;
}

}  // namespace diffloco::sim

namespace diffloco::sim {

void BatchSim::setAddedBaseMass(int world, double dm) {
  if (models_.empty()) models_.assign(worlds(), model_);
  const Inertia& I0 = model_.bodies[0].inertia;
  const double s = (I0.m + dm) / I0.m;
  Inertia& I = models_[world].bodies[0].inertia;
  I.m = I0.m * s;
  I.h = I0.h * s;
  I.Io = I0.Io * s;
}

void BatchSim::stepVjp(const MatX& qIn, const MatX& vIn, const MatX& qTargetIn, const MatX& gqNext,
                       const MatX& gvNext, MatX& gq, MatX& gv, MatX& gqTarget) {
  const Model& m = model_;
  gq.setZero(m.nq(), worlds());
  gv.setZero(m.nv(), worlds());
  gqTarget.setZero(m.nj(), worlds());
  std::vector<StepAdjoint> adj(pool_.size(), StepAdjoint(m));
  pool_.parallelFor(
      worlds(),
      [&](int w, int worker) {
        StepAdjoint& a = adj[worker];
        a.setZero(m);
        sim::stepVjp(worldModel(w), worldOptions(w), *data_[worker], qIn.col(w), vIn.col(w),
                qTargetIn.col(w), gqNext.col(w), gvNext.col(w), a);
        const bool ok = a.q.allFinite() && a.v.allFinite() && a.qTarget.allFinite();
        failedVjp[w] = !ok;
        if (ok) {
          gq.col(w) = a.q;
          gv.col(w) = a.v;
          gqTarget.col(w) = a.qTarget;
        }
      },
      8);
}

}  // namespace diffloco::sim
