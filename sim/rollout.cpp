#include "sim/rollout.h"

#include "sim/step.h"

namespace diffloco::sim {

Rollout rollout(const Model& model, const SimOptions& opt, Data& data, const VecX& q0,
                const VecX& v0, const MatX& targets) {
  const int H = static_cast<int>(targets.cols());
  Rollout r;
  r.q.assign(H + 1, q0);
  r.v.assign(H + 1, v0);
  r.modes.assign(H, 0);
  for (int t = 0; t < H; ++t) {
    r.finite = step(model, opt, data, r.q[t], r.v[t], targets.col(t), r.q[t + 1], r.v[t + 1]) &&
               r.finite;
    r.modes[t] = data.mode;
  }
  return r;
}

RolloutAdjoint rolloutVjp(const Model& model, const SimOptions& opt, Data& data, const Rollout& r,
                          const MatX& targets, const VecX& gqFinal, const VecX& gvFinal) {
  const int H = static_cast<int>(targets.cols());
  std::vector<VecX> gq(H + 1), gv(H + 1);
  gq[H] = gqFinal;
  gv[H] = gvFinal;
  return rolloutVjp(model, opt, data, r, targets, gq, gv);
}

RolloutAdjoint rolloutVjp(const Model& model, const SimOptions& opt, Data& data, const Rollout& r,
                          const MatX& targets, const std::vector<VecX>& gq,
                          const std::vector<VecX>& gv) {
  const int H = static_cast<int>(targets.cols());
  RolloutAdjoint out = startRolloutAdjoint(model, H, gq, gv);
  StepAdjoint adj(model);
  for (int t = H - 1; t >= 0; --t) {
    adj.setZero(model);
    stepVjp(model, opt, data, r.q[t], r.v[t], targets.col(t), out.q0, out.v0, adj);
    out.q0 = adj.q;
    out.v0 = adj.v;
    out.targets.col(t) = adj.qTarget;
    out.params += adj.params;
    addDirectAdjoint(out, t, gq, gv);
  }
  return out;
}

}  // namespace diffloco::sim
