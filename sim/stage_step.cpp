#include "sim/stage_step.h"

#include <stdexcept>
#include <string>

#include "sim/moreau_step.h"
#include "sim/pack.h"

namespace diffloco::sim {

struct StageStepper::Impl {
  virtual ~Impl() = default;
  // fixedStep from (q, v, qTarget) into (qNext, vNext), each sphere's impulse into impulse.
  virtual bool step(const double* q, const double* v, const double* qTarget, double* qNext,
                    double* vNext, double* impulse) = 0;
};

namespace {

template <class D>
class Sized final : public StageStepper::Impl {
 public:
  Sized(const Model& model, const SimOptions& opt)
      : m_(toStepModel<D>(model)),
        o_(toStepOptions(opt)),
        terrain_(opt.contact.terrain),
        ground_(toView(terrain_.get())),
        d_(std::make_unique<StepData<D>>()),
        fc_(std::make_unique<Contacts<D>>()) {}

  bool step(const double* q, const double* v, const double* qTarget, double* qNext, double* vNext,
            double* impulse) override {
    for (int k = 0; k < 3 * m_.nspheres; ++k) impulse[k] = 0;
    ImpulseObserver observer{o_, impulse};
    return fixedStep<D>(m_, o_, ground_, q, v, qTarget, qNext, vNext, *d_, *fc_, nullptr,
                        observer);
  }

 private:
  // Each sphere's contact impulse: the hard and smoothed step's from the solver; the soft
  // model's, the penalty forces each sub-step applied (softContactForce: at its contacts, from
  // the velocity it started with) times its length.
  struct ImpulseObserver {
    const FixedOptions& o;
    double* impulse;
    void beforeSubstep(const double*, const double*) {}
    void afterSubstep(const Contacts<D>& fc, const GsTape<D>*, const double* v, double h) {
      if (o.model != FixedContact::Soft) {
        for (int a = 0; a < fc.nc; ++a)
          for (int r = 0; r < 3; ++r) impulse[3 * fc.active[a] + r] = fc.impulse[3 * a + r];
        return;
      }
      for (int a = 0; a < fc.nc; ++a) {
        const double depth = fc.contact[a].depth;
        if (depth < 0) continue;
        V3 vc;
        for (int r = 0; r < 3; ++r) {
          double c = 0;
          for (int k = 0; k < D::NV; ++k) c += fc.Jc[3 * a + r][k] * v[k];
          vc[r] = c;
        }
        const V3 f = softForce(o, depth, vc);
        for (int r = 0; r < 3; ++r) impulse[3 * fc.active[a] + r] += h * f[r];
      }
    }
  };

  const StepModel<D> m_;
  const FixedOptions o_;
  const std::shared_ptr<const HeightField> terrain_;  // the view's heights
  const HeightFieldView ground_;
  const std::unique_ptr<StepData<D>> d_;
  const std::unique_ptr<Contacts<D>> fc_;
};

}  // namespace

StageStepper::StageStepper(const Model& model, const SimOptions& opt)
    : nq_(model.nq()),
      nv_(model.nv()),
      nj_(model.nj()),
      impulse_(VecX::Zero(3 * model.nspheres())) {
  if (const std::string why = notInStepOptions(opt); !why.empty())
    throw std::invalid_argument("the stages: " + why);
  const std::string quadruped = notInStepModel<Quadruped>(model);
  if (quadruped.empty()) {
    impl_ = std::make_unique<Sized<Quadruped>>(model, opt);
    return;
  }
  const std::string singleBody = notInStepModel<SingleBody>(model);
  if (singleBody.empty()) {
    impl_ = std::make_unique<Sized<SingleBody>>(model, opt);
    return;
  }
  throw std::invalid_argument("the stages have no size class for this model: Quadruped: " +
                              quadruped + "; SingleBody: " + singleBody);
}

StageStepper::~StageStepper() = default;

bool StageStepper::step(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                        const Eigen::Ref<const VecX>& qTarget, VecX& qNext, VecX& vNext) {
  if (q.size() != nq_ || v.size() != nv_ || qTarget.size() != nj_)
    throw std::invalid_argument("StageStepper::step: the state's sizes are not the model's");
  qNext.resize(nq_);
  vNext.resize(nv_);
  return impl_->step(q.data(), v.data(), qTarget.data(), qNext.data(), vNext.data(),
                     impulse_.data());
}

}  // namespace diffloco::sim
