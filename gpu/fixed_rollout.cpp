#include "gpu/fixed_rollout.h"

#include <memory>

#include "gpu/sim_names.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#include "sim/step.h"

namespace diffloco::gpu {

using sim::addTo;
using sim::FixedAdjoint;
using sim::FixedParamBar;
using sim::fixedSoftStepVjp;
using sim::FixedSoftTape;
using sim::fixedStep;
using sim::fixedStepRecord;
using sim::fixedStepVjp;
using sim::FixedTape;
using sim::setZero;

sim::Rollout fixedRollout(const sim::Model& model, const sim::SimOptions& opt, sim::Data& data,
                          const sim::VecX& q0, const sim::VecX& v0, const sim::MatX& targets) {
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(model);
  const FixedOptions fo = sim::toStepOptions(opt);
  const HeightFieldView ground = sim::toView(opt.contact.terrain.get());
  const int H = static_cast<int>(targets.cols());
  sim::Rollout r;
  r.q.assign(H + 1, q0);
  r.v.assign(H + 1, v0);
  for (int t = 0; t < H; ++t) {
    bool ok = fixedStep(fm, fo, ground, r.q[t].data(), r.v[t].data(), targets.col(t).data(),
                        r.q[t + 1].data(), r.v[t + 1].data());
    // A contact set larger than the fixed arrays (a non-finite step fails here again).
    if (!ok)
      ok = sim::step(model, opt, data, r.q[t], r.v[t], targets.col(t), r.q[t + 1], r.v[t + 1]);
    r.finite = ok && r.finite;
  }
  return r;
}

sim::RolloutAdjoint fixedRolloutVjp(const sim::Model& model, const sim::SimOptions& opt,
                                    sim::Data& data, const sim::Rollout& r,
                                    const sim::MatX& targets, const std::vector<sim::VecX>& gq,
                                    const std::vector<sim::VecX>& gv) {
  const FixedModel fm = sim::toStepModel<sim::Quadruped>(model);
  // The model and ground the VJP differentiates (straight_through: the smoothed model; a
  // straight-through terrain: its smoothed copy), as sim::stepVjp.
  const FixedOptions fo = sim::toStepOptionsBackward(opt);
  const HeightFieldView ground = sim::backwardView(opt);
  const int H = static_cast<int>(targets.cols());
  sim::RolloutAdjoint out{
      sim::VecX::Zero(model.nq()), sim::VecX::Zero(model.nv()), sim::MatX::Zero(model.nj(), H), {}};
  out.params.setZero(model);
  auto addDirect = [&](int t) {
    if (t < static_cast<int>(gq.size()) && gq[t].size() > 0) out.q0 += gq[t];
    if (t < static_cast<int>(gv.size()) && gv[t].size() > 0) out.v0 += gv[t];
  };
  addDirect(H);
  const bool soft = fo.model == FixedContact::Soft;
  auto tape = soft ? nullptr : std::make_unique<FixedTape>();
  auto softTape = soft ? std::make_unique<FixedSoftTape>() : nullptr;
  FixedParamBar params;
  setZero(params);
  sim::StepAdjoint fallback(model);
  for (int t = H - 1; t >= 0; --t) {
    const double *q = r.q[t].data(), *v = r.v[t].data(), *target = targets.col(t).data();
    FixedAdjoint a;
    setZero(a);
    FixedParamBar p;
    setZero(p);
    bool done;
    if (soft) {
      done = fixedSoftStepVjp(fm, fo, ground, q, v, target, out.q0.data(), out.v0.data(), *softTape,
                              a, p);
    } else {
      double qn[NQ], vn[NV];
      done = fixedStepRecord(fm, fo, ground, q, v, target, qn, vn, *tape);
      if (done)
        fixedStepVjp(fm, fo, ground, q, v, target, *tape, out.q0.data(), out.v0.data(), a, p);
    }
    if (done) {
      out.q0 = Eigen::Map<const sim::VecX>(a.q, NQ);
      out.v0 = Eigen::Map<const sim::VecX>(a.v, NV);
      out.targets.col(t) = Eigen::Map<const sim::VecX>(a.qTarget, NJ);
      addTo(params, p);
    } else {  // a contact set or tape larger than the fixed arrays, or a non-finite step
      fallback.setZero(model);
      sim::stepVjp(model, opt, data, r.q[t], r.v[t], targets.col(t), out.q0, out.v0, fallback);
      out.q0 = fallback.q;
      out.v0 = fallback.v;
      out.targets.col(t) = fallback.qTarget;
      out.params += fallback.params;
    }
    addDirect(t);
  }
  out.params += sim::toParamGrad(model, params);
  return out;
}

}  // namespace diffloco::gpu
