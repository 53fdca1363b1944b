#include "sim/batch.h"

#include "sim/step.h"

namespace diffloco::sim {

BatchSim::BatchSim(const Model& model, const SimOptions& opts, int worlds, int threads)
    : options(opts),
      q(model.nq(), worlds),
      v(MatX::Zero(model.nv(), worlds)),
      qTarget(MatX::Zero(model.nj(), worlds)),
      failed(worlds, 0),
      model_(model),
      pool_(threads),
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
        const bool ok = sim::step(model_, options, *data_[worker], q.col(w), v.col(w),
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
