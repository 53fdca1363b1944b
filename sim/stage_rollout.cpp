#include "sim/stage_rollout.h"

#include <memory>
#include <stdexcept>

#include "sim/pack.h"
#include "sim/soft_step_vjp.h"

namespace diffloco::sim {

RolloutAdjoint startRolloutAdjoint(const Model& model, int H, const std::vector<VecX>& gq,
                                   const std::vector<VecX>& gv) {
  RolloutAdjoint out{VecX::Zero(model.nq()), VecX::Zero(model.nv()), MatX::Zero(model.nj(), H), {}};
  out.params.setZero(model);
  addDirectAdjoint(out, H, gq, gv);
  return out;
}

void addDirectAdjoint(RolloutAdjoint& out, int t, const std::vector<VecX>& gq,
                      const std::vector<VecX>& gv) {
  if (t < static_cast<int>(gq.size()) && gq[t].size() > 0) out.q0 += gq[t];
  if (t < static_cast<int>(gv.size()) && gv[t].size() > 0) out.v0 += gv[t];
}

template <class D>
Rollout stageRollout(const Model& model, const SimOptions& opt, const VecX& q0, const VecX& v0,
                     const MatX& targets) {
  const StepModel<D> fm = toStepModel<D>(model);
  const FixedOptions fo = toStepOptions(opt);
  const HeightFieldView ground = toView(opt.contact.terrain.get());
  const int H = static_cast<int>(targets.cols());
  Rollout r;
  r.q.assign(H + 1, q0);
  r.v.assign(H + 1, v0);
  for (int t = 0; t < H; ++t) {
    const bool ok = fixedStep(fm, fo, ground, r.q[t].data(), r.v[t].data(), targets.col(t).data(),
                              r.q[t + 1].data(), r.v[t + 1].data());
    r.finite = ok && r.finite;
  }
  return r;
}

template <class D>
RolloutAdjoint stageRolloutVjp(const Model& model, const SimOptions& opt, const Rollout& r,
                               const MatX& targets, const std::vector<VecX>& gq,
                               const std::vector<VecX>& gv) {
  if (const std::string why = notInStepVjp<D>(opt); !why.empty())
    throw std::invalid_argument("the stages' rollout VJP: " + why);
  const StepModel<D> fm = toStepModel<D>(model);
  // The model and ground the VJP differentiates (straight_through: the smoothed model; a
  // straight-through terrain: its smoothed copy).
  const FixedOptions fo = toStepOptionsBackward(opt);
  const HeightFieldView ground = backwardView(opt);
  const int H = static_cast<int>(targets.cols());
  RolloutAdjoint out = startRolloutAdjoint(model, H, gq, gv);
  const bool soft = fo.model == FixedContact::Soft;
  auto tape = soft ? nullptr : std::make_unique<StepTape<D>>();
  auto softTape = soft ? std::make_unique<SoftTape<D>>() : nullptr;
  ParamBar<D> params;
  setZero(params);
  for (int t = H - 1; t >= 0; --t) {
    const double *q = r.q[t].data(), *v = r.v[t].data(), *target = targets.col(t).data();
    StateAdjoint<D> a;
    setZero(a);
    ParamBar<D> p;
    setZero(p);
    // A step that is not finite still forms its adjoints (not finite either).
    if (soft) {
      fixedSoftStepVjp(fm, fo, ground, q, v, target, out.q0.data(), out.v0.data(), *softTape, a, p);
    } else {
      double qn[D::NQ], vn[D::NV];
      fixedStepRecord(fm, fo, ground, q, v, target, qn, vn, *tape);
      fixedStepVjp(fm, fo, ground, q, v, target, *tape, out.q0.data(), out.v0.data(), a, p);
    }
    out.q0 = Eigen::Map<const VecX>(a.q, D::NQ);
    out.v0 = Eigen::Map<const VecX>(a.v, D::NV);
    out.targets.col(t) = Eigen::Map<const VecX>(a.qTarget, D::NJ);
    addTo(params, p);
    addDirectAdjoint(out, t, gq, gv);
  }
  out.params += toParamGrad(model, params);
  return out;
}

template Rollout stageRollout<Quadruped>(const Model&, const SimOptions&, const VecX&, const VecX&,
                                         const MatX&);
template Rollout stageRollout<SingleBody>(const Model&, const SimOptions&, const VecX&, const VecX&,
                                          const MatX&);
template RolloutAdjoint stageRolloutVjp<Quadruped>(const Model&, const SimOptions&, const Rollout&,
                                                   const MatX&, const std::vector<VecX>&,
                                                   const std::vector<VecX>&);
template RolloutAdjoint stageRolloutVjp<SingleBody>(const Model&, const SimOptions&, const Rollout&,
                                                    const MatX&, const std::vector<VecX>&,
                                                    const std::vector<VecX>&);

}  // namespace diffloco::sim
