// The stages (sim/moreau_step.h, sim/moreau_step_vjp.h, sim/soft_step_vjp.h) driven from the host
// objects for the tests of tests/sim: a sim::Model and sim::SimOptions packed for size class D
// (sim/pack.h), one step on Eigen vectors, the contact problem it solved, its VJP with the
// parameters' adjoints as a sim::ParamGrad (as sim::stageRolloutVjp forms them), and what the
// rigid-body stages give at a state: the mass matrix, bias forces, points, Jacobians and energy.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/pack.h"
#include "sim/soft_step_vjp.h"

namespace diffloco::test {

using sim::MatX;
using sim::Vec3;
using sim::VecX;

inline Vec3 toVec3(const sim::V3& a) { return Vec3(a[0], a[1], a[2]); }
inline sim::V3 toV3(const Vec3& a) { return sim::v3(a.x(), a.y(), a.z()); }

// The adjoints of one step's inputs (q, v, qTarget) and of the parameters.
struct StageAdjoint {
  VecX q, v, qTarget;
  sim::ParamGrad params;
};

// A model and options packed for size class D: the forward's options and ground, and those its
// VJP differentiates (straight_through: the smoothed model; a contact.backwardTerrain: that
// ground). Holds a copy of both, so that the height fields outlive the views.
template <class D>
class Stages {
 public:
  Stages(const sim::Model& model, const sim::SimOptions& opt)
      : model_(model),
        opt_(opt),
        m(sim::toStepModel<D>(model_)),
        forward(sim::toStepOptions(opt_)),
        backward(sim::toStepOptionsBackward(opt_)),
        ground(sim::toView(opt_.contact.terrain.get())),
        backGround(sim::backwardView(opt_)) {}

  const sim::Model& model() const { return model_; }
  const sim::SimOptions& options() const { return opt_; }

  // One step (sim::fixedStep) into (qn, vn), resized. False when the new state is not finite.
  bool step(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
            const Eigen::Ref<const VecX>& target, VecX& qn, VecX& vn) const {
    checkSizes(q, v, target);
    qn.resize(D::NQ);
    vn.resize(D::NV);
    return sim::fixedStep(m, forward, ground, q.data(), v.data(), target.data(), qn.data(),
                          vn.data());
  }

  // The hard or smoothed step of fixedStep, keeping its contact problem in fc (the spheres in it,
  // their impulses over the step, the smoothed model's scaled). The soft model has none.
  bool step(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
            const Eigen::Ref<const VecX>& target, VecX& qn, VecX& vn,
            sim::Contacts<D>& fc) const {
    if (forward.model == sim::FixedContact::Soft)
      throw std::invalid_argument("the soft model solves no contact problem");
    checkSizes(q, v, target);
    qn.resize(D::NQ);
    vn.resize(D::NV);
    auto d = std::make_unique<sim::StepData<D>>();
    sim::NoStepObserver none;
    return sim::fixedStep<D>(m, forward, ground, q.data(), v.data(), target.data(), qn.data(),
                             vn.data(), *d, fc, nullptr, none);
  }

  // The adjoints of (q, v, target) and of the parameters given those of the step's outputs (gq,
  // gv), as sim::stageRolloutVjp forms one step's. False when a state on the way is not finite.
  bool vjp(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
           const Eigen::Ref<const VecX>& target, const Eigen::Ref<const VecX>& gq,
           const Eigen::Ref<const VecX>& gv, StageAdjoint& out) const {
    if (const std::string why = sim::notInStepVjp<D>(opt_); !why.empty())
      throw std::invalid_argument("the stages' VJP: " + why);
    checkSizes(q, v, target);
    if (gq.size() != D::NQ || gv.size() != D::NV)
      throw std::invalid_argument("the seeds' sizes are not the model's");
    sim::StateAdjoint<D> a;
    sim::setZero(a);
    auto p = std::make_unique<sim::ParamBar<D>>();
    sim::setZero(*p);
    bool finite;
    if (backward.model == sim::FixedContact::Soft) {
      auto tape = std::make_unique<sim::SoftTape<D>>();
      finite = sim::fixedSoftStepVjp(m, backward, backGround, q.data(), v.data(), target.data(),
                                     gq.data(), gv.data(), *tape, a, *p);
    } else {
      auto tape = std::make_unique<sim::StepTape<D>>();
      double qn[D::NQ], vn[D::NV];
      finite = sim::fixedStepRecord(m, backward, backGround, q.data(), v.data(), target.data(), qn,
                                    vn, *tape);
      sim::fixedStepVjp(m, backward, backGround, q.data(), v.data(), target.data(), *tape,
                        gq.data(), gv.data(), a, *p);
    }
    out.q = Eigen::Map<const VecX>(a.q, D::NQ);
    out.v = Eigen::Map<const VecX>(a.v, D::NV);
    out.qTarget = Eigen::Map<const VecX>(a.qTarget, D::NJ);
    out.params = sim::toParamGrad(model_, *p);
    return finite && out.q.allFinite() && out.v.allFinite() && out.qTarget.allFinite();
  }

 private:
  static void checkSizes(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                         const Eigen::Ref<const VecX>& target) {
    if (q.size() != D::NQ || v.size() != D::NV || target.size() != D::NJ)
      throw std::invalid_argument("the state's sizes are not the size class's");
  }

  sim::Model model_;
  sim::SimOptions opt_;

 public:
  sim::StepModel<D> m;
  sim::FixedOptions forward, backward;
  sim::HeightFieldView ground, backGround;
};

// 3 entries a sphere (normal, t1, t2): the impulse of fc's contact problem on each of the model's
// nspheres spheres, zero on those not in it (sim::Data::footImpulse's layout).
template <class D>
VecX sphereImpulses(const sim::Contacts<D>& fc, int nspheres) {
  VecX p = VecX::Zero(3 * nspheres);
  for (int a = 0; a < fc.nc; ++a)
    for (int r = 0; r < 3; ++r) p[3 * fc.active[a] + r] = fc.impulse[3 * a + r];
  return p;
}

// The rigid-body stages at one state: forward kinematics, and on request H (CRBA) and the bias
// forces (RNEA at zero acceleration, the joint torques zero).
template <class D>
struct Kinematics {
  const sim::StepModel<D>& m;
  sim::StepData<D> d;
  Kinematics(const sim::StepModel<D>& model, const Eigen::Ref<const VecX>& q) : m(model) {
    sim::forwardKinematics(m, d, q.data());
  }
  // A point given in body i's frame, in the world.
  Vec3 worldPoint(int body, const Vec3& offset) const {
    return toVec3(sim::mul(d.R[body], toV3(offset)) + d.p[body]);
  }
  Vec3 sphereCentre(int j) const { return toVec3(sim::sphereCentre(m, d, j)); }
  // The full joint-space inertia (armature included): the stages keep its lower triangle on the
  // dof tree, every other entry is zero.
  MatX massMatrix() {
    sim::crba(m, d);
    MatX H = MatX::Zero(D::NV, D::NV);
    for (int k = 0; k < D::NV; ++k) {
      H(k, k) = d.LD[k * D::NV + k];
      for (int i = m.dofParent[k]; i >= 0; i = m.dofParent[i])
        H(k, i) = H(i, k) = d.LD[k * D::NV + i];
    }
    return H;
  }
  VecX biasForces(const Eigen::Ref<const VecX>& v) {
    sim::biasForces(m, d, v.data());
    return Eigen::Map<const VecX>(d.tau, D::NV);
  }
  // The 3 x NV Jacobian of sphere j's centre (world axes), as the contact rows see it.
  MatX sphereJacobian(int j) const {
    auto fc = std::make_unique<sim::Contacts<D>>();
    fc->nc = 1;
    fc->active[0] = j;
    fc->contact[0].point = sim::sphereCentre(m, d, j);
    fc->contact[0].frame = sim::identity3();
    sim::contactJacobians(m, d, *fc);
    MatX J(3, D::NV);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < D::NV; ++k) J(r, k) = fc->Jc[r][k];
    return J;
  }
};

// Kinetic plus gravitational potential energy at (q, v) from the rigid-body stages (H with the
// armature, as the step integrates it).
template <class D>
double mechanicalEnergy(const sim::StepModel<D>& m, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v) {
  Kinematics<D> k(m, q);
  double potential = 0;
  for (int i = 0; i < D::NB; ++i) {
    const sim::SInertia& I = m.inertia[i];
    if (!(I.m > 0)) continue;  // a massless body (sim::Inertia::com)
    const Vec3 com = k.worldPoint(i, toVec3(I.h) / I.m);
    potential -= I.m * toVec3(m.gravity).dot(com);
  }
  return 0.5 * v.dot(k.massMatrix() * v) + potential;
}

// The contact of sphere j of the model at configuration q against the ground, through the stages'
// geometry (sim/ground.h): its depth, along the vertical or at the closest surface point.
template <class D>
sim::FixedSphereContact sphereContact(const sim::StepModel<D>& m, const sim::HeightFieldView& ground,
                                      const Eigen::Ref<const VecX>& q, int j, bool closest = false) {
  const Kinematics<D> k(m, q);
  return sim::sphereContact(ground, sim::sphereCentre(m, k.d, j), m.footRadius[j], closest);
}

// The grounds of the leg-sphere selection tests: 61 x 61 samples 5 cm apart from (-1.5, -1.5),
// 12 cm stairs up to x = 0 and +-4 cm bumps drawn from `rng` beyond, as it is (the depth bound
// from the samples) and finalized (from its cell bounds).
inline std::pair<std::shared_ptr<sim::HeightField>, std::shared_ptr<sim::HeightField>>
stairsThenBumps(std::mt19937& rng) {
  auto hf = std::make_shared<sim::HeightField>();
  hf->nx = hf->ny = 61;
  hf->spacing = 0.05;
  hf->originX = hf->originY = -1.5;
  std::uniform_real_distribution<double> bump(-0.04, 0.04);
  for (int iy = 0; iy < hf->ny; ++iy)
    for (int ix = 0; ix < hf->nx; ++ix)
      hf->heights.push_back(ix < 30 ? 0.12 * std::floor(ix / 6.0) : bump(rng));
  auto finalized = std::make_shared<sim::HeightField>(*hf);
  finalized->finalize();
  return {hf, finalized};
}

}  // namespace diffloco::test
