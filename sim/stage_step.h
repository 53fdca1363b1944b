// One world stepped on the stages (sim/moreau_step.h) from the host objects, for the callers that
// step a single robot by itself (`diffloco sim`, the robot tools' standing test). The size class
// is picked from the model: Quadruped when notInStepModel<Quadruped> (sim/pack.h) is "", else
// SingleBody when that fits. The model and options are packed once; every step is fixedStep's and
// also keeps each sphere's contact impulse over the step.
#pragma once

#include <memory>

#include "sim/model.h"
#include "sim/options.h"

namespace diffloco::sim {

class StageStepper {
 public:
  // Throws std::invalid_argument naming why when the options are not the stages'
  // (notInStepOptions) or the model fits no size class (each class's notInStepModel reason).
  // Keeps its own reference to the options' height field.
  StageStepper(const Model& model, const SimOptions& opt);
  ~StageStepper();
  StageStepper(const StageStepper&) = delete;
  StageStepper& operator=(const StageStepper&) = delete;

  // (qNext, vNext), resized, one step of opt.dt from (q, v) with the joints driven to qTarget.
  // False when the new state is not finite. qNext and vNext must not alias q and v.
  bool step(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
            const Eigen::Ref<const VecX>& qTarget, VecX& qNext, VecX& vNext);

  // 3 per sphere, the feet first (normal, tangent 1, tangent 2): the contact impulse of the last
  // step, zero for a sphere out of contact and before the first step. The soft model's is its
  // penalty forces times the sub-step summed over the sub-steps.
  const VecX& sphereImpulse() const { return impulse_; }

  struct Impl;  // one size class's packed model and scratch (sim/stage_step.cpp)

 private:
  std::unique_ptr<Impl> impl_;
  int nq_, nv_, nj_;
  VecX impulse_;
};

}  // namespace diffloco::sim
