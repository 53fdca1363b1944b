#include "sim/data.h"

#include "sim/workspace.h"

namespace diffloco::sim {

Data::Data(const Model& model)
    : X(model.nbodies()),
      R(model.nbodies(), Mat3::Identity()),
      p(model.nbodies(), Vec3::Zero()),
      vel(model.nbodies()),
      acc(model.nbodies()),
      f(model.nbodies()),
      tau(VecX::Zero(model.nv())),
      Ic(model.nbodies()),
      H(MatX::Zero(model.nv(), model.nv())),
      LD(MatX::Zero(model.nv(), model.nv())),
      footCentre(model.nspheres(), Vec3::Zero()),
      depth(VecX::Zero(model.nspheres())),
      footContact(model.nspheres()),
      Jc(MatX::Zero(3 * model.nspheres(), model.nv())),
      Jpoint(3, model.nv()),
      Y(MatX::Zero(model.nv(), 3 * model.nspheres())),
      Yc(MatX::Zero(3 * model.nspheres(), model.nv())),
      G(MatX::Zero(3 * model.nspheres(), 3 * model.nspheres())),
      c(VecX::Zero(3 * model.nspheres())),
      impulse(VecX::Zero(3 * model.nspheres())),
      sigma(VecX::Ones(model.nspheres())),
      Ginv(MatX::Zero(3 * model.nspheres(), 3)),
      footImpulse(VecX::Zero(3 * model.nspheres())),
      qMid(VecX::Zero(model.nq())),
      u(VecX::Zero(model.nv())),
      tauJoint(VecX::Zero(model.nj())),
      work(VecX::Zero(model.nv())) {
  active.reserve(model.nspheres());
  int chainLevels = 0;  // per joint body: its F and one entry per body on its path to the base
  for (int i = 1; i < model.nbodies(); ++i)
    for (int j = i; j > 0; j = model.bodies[j].parent) ++chainLevels;
  crbaF.resize(chainLevels + model.nbodies() - 1);
}

Data::~Data() = default;
Data::Data(Data&&) noexcept = default;
Data& Data::operator=(Data&&) noexcept = default;

Workspace& Data::workspace() {
  if (!workspace_) workspace_ = std::make_unique<Workspace>();
  return *workspace_;
}

}  // namespace diffloco::sim
