#include "sim/pack.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace diffloco::sim {

namespace {

V3 fromEigen(const Vec3& a) { return v3(a.x(), a.y(), a.z()); }

Vec3 toEigen(const V3& a) {
  return Vec3(a[0], a[1], a[2]);
}

M3 fromEigen(const Mat3& a) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(i, j);
  return r;
}

// "1 body", "13 bodies".
std::string count(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

template <class D>
std::string notInStepModel(const Model& model) {
  const std::string who = "model '" + model.name + "' has ";
  if (model.nbodies() != D::NB)
    return who + count(model.nbodies(), "body", "bodies") + ", the fixed path " +
           count(D::NB, "body", "bodies");
  const int legs = static_cast<int>(model.legSpheres.size());
  if (model.nfeet() > D::NFEET || (model.nfeet() < D::NFEET && legs > 0))
    return who + count(model.nfeet(), "foot", "feet") + " and " +
           count(legs, "leg sphere", "leg spheres") + ", the fixed path " +
           count(D::NFEET, "foot", "feet") + " (fewer only without leg spheres)";
  if (legs > D::MAXLEG)
    return who + count(legs, "leg sphere", "leg spheres") + ", the fixed path at most " +
           std::to_string(D::MAXLEG);
  return "";
}

std::string notInStepOptions(const SimOptions& opt) {
  const ContactOptions& c = opt.contact;
  if (c.model == ContactModel::Soft && c.integrator != Integrator::Fixed)
    return "the soft model's adaptive integrator is not in";
  return "";
}

template <class D>
std::string notInStepVjp(const SimOptions& opt) {
  if (std::string why = notInStepOptions(opt); !why.empty()) return why;
  const ContactOptions& c = opt.contact;
  if (c.model == ContactModel::Soft) {
    if (c.softSubsteps > D::MAXSOFTSUBSTEPS)
      return count(c.softSubsteps, "soft sub-step", "soft sub-steps") +
             " (contact.softSubsteps), the VJP's tape holds at most " +
             std::to_string(D::MAXSOFTSUBSTEPS);
  } else if (c.iterations > D::MAXGSITER) {
    return count(c.iterations, "Gauss-Seidel sweep", "Gauss-Seidel sweeps") +
           " (contact.iterations), the VJP's tape holds at most " + std::to_string(D::MAXGSITER);
  }
  return "";
}

template std::string notInStepVjp<Quadruped>(const SimOptions&);
template std::string notInStepVjp<SingleBody>(const SimOptions&);

template <class D>
StepModel<D> toStepModel(const Model& model) {
  if (const std::string why = notInStepModel<D>(model); !why.empty())
    throw std::invalid_argument("fixed-size step: " + why);
  StepModel<D> f{};
  for (int i = 0; i < D::NB; ++i) {
    const Body& b = model.bodies[i];
    f.parent[i] = b.parent;
    f.treeE[i] = fromEigen(b.tree.E);
    f.treeR[i] = fromEigen(b.tree.r);
    f.axis[i] = fromEigen(b.axis);
    f.inertia[i] = {b.inertia.m, fromEigen(b.inertia.h), fromEigen(b.inertia.Io)};
  }
  for (int j = 0; j < D::NJ; ++j) {
    f.damping[j] = model.joints[j].damping;
    f.armature[j] = model.joints[j].armature;
    f.effort[j] = model.joints[j].effort;
  }
  for (int k = 0; k < D::NV; ++k) f.dofParent[k] = model.dofParent[k];
  f.nspheres = model.nspheres();
  for (int a = 0; a < f.nspheres; ++a) {
    const Foot& ft = model.sphere(a);
    f.footBody[a] = ft.body;
    f.footOffset[a] = fromEigen(ft.offset);
    f.footRadius[a] = ft.radius;
    const auto& path = model.footDofs[a];
    f.footDofCount[a] = static_cast<unsigned char>(path.size());
    for (size_t t = 0; t < path.size(); ++t) f.footDofs[a][t] = static_cast<unsigned char>(path[t]);
    for (int b = 0; b < f.nspheres; ++b)
      f.footCommon[a][b] = static_cast<unsigned char>(model.footCommonDofs[a][b]);
  }
  f.gravity = fromEigen(model.gravity);
  return f;
}

template std::string notInStepModel<Quadruped>(const Model&);
template std::string notInStepModel<SingleBody>(const Model&);
template StepModel<Quadruped> toStepModel<Quadruped>(const Model&);
template StepModel<SingleBody> toStepModel<SingleBody>(const Model&);

FixedOptions toStepOptions(const SimOptions& opt) {
  const ContactOptions& c = opt.contact;
  FixedOptions f{};
  f.dt = opt.dt;
  switch (c.model) {
    case ContactModel::Hard: f.model = FixedContact::Hard; break;
    case ContactModel::Smoothed: f.model = FixedContact::Smoothed; break;
    case ContactModel::Soft: f.model = FixedContact::Soft; break;
    case ContactModel::StraightThrough:
      f.model = FixedContact::Hard;
      break;  // its forward
  }
  if (const std::string why = notInStepOptions(opt); !why.empty())
    throw std::invalid_argument("fixed-size step: " + why);
  f.mu = c.mu;
  f.iterations = c.iterations;
  f.kappa = c.kappa;
  f.cutoff = c.cutoff;
  // The depth from which a sphere enters the contact problem: the smoothed model's force at a
  // distance reaches to -cutoff (a leg sphere's only while sigmoid(kappa depth) >= 1e-6); every
  // other model's contacts are those at or below the ground.
  switch (c.model) {
    case ContactModel::Smoothed:
      f.footEntry = -c.cutoff;
      f.legEntry = -std::min(c.cutoff, std::log(1e6) / c.kappa);
      break;
    default:
      f.footEntry = f.legEntry = 0.0;
      break;
  }
  f.softKp = c.softKp;
  f.softKd = c.softKd;
  f.softKf = c.softKf;
  f.softSubsteps = c.softSubsteps;
  f.closestTerrain = c.terrainContact == TerrainContact::Closest;
  f.kp = opt.actuator.kp;
  f.kd = opt.actuator.kd;
  f.effort = opt.actuator.effort;
  f.saturation = opt.actuator.saturation;
  f.velocityLimit = opt.actuator.velocityLimit;
  return f;
}

FixedOptions toStepOptionsBackward(const SimOptions& opt) {
  if (opt.contact.model != ContactModel::StraightThrough) return toStepOptions(opt);
  SimOptions smoothed = opt;
  smoothed.contact.model = ContactModel::Smoothed;
  return toStepOptions(smoothed);
}

HeightFieldView backwardView(const SimOptions& opt) {
  return toView(opt.contact.backwardTerrain ? opt.contact.backwardTerrain.get()
                                            : opt.contact.terrain.get());
}

HeightFieldView toView(const HeightField* hf) {
  if (!hf) return HeightFieldView{0, 0, 1, 0, 0, nullptr, nullptr, false};
  static_assert(sizeof(CellBound) == 2 * sizeof(float) && offsetof(CellBound, top) == 0 &&
                offsetof(CellBound, minNormalZ) == sizeof(float));
  const float* bounds =
      hf->finalized() ? reinterpret_cast<const float*>(hf->cellBounds.data()) : nullptr;
  return HeightFieldView{
      hf->originX, hf->originY,        hf->spacing, hf->nx,
      hf->ny,      hf->heights.data(), bounds,      hf->interpolant == Interpolant::Monotone};
}

void ParamGrad::addInertia(const Model& model, const std::vector<InertiaBar>& bar) {
  for (int i = 0; i < model.nbodies(); ++i) {
    const Inertia& I = model.bodies[i].inertia;
    const InertiaBar& Ib = bar[i];
    if (I.m > 0) mass[i] += (Ib.m * I.m + Ib.h.dot(I.h) + Ib.Io.cwiseProduct(I.Io).sum()) / I.m;
    inertia[i].m += Ib.m;
    inertia[i].h += Ib.h;
    inertia[i].Io += Ib.Io;
  }
}

template <class D>
ParamGrad toParamGrad(const Model& model, const ParamBar<D>& p) {
  ParamGrad g;
  g.setZero(model);
  g.mu = p.mu, g.kappa = p.kappa, g.kp = p.kp, g.kd = p.kd;
  g.softKp = p.softKp, g.softKd = p.softKd, g.softKf = p.softKf;
  for (int j = 0; j < model.nspheres(); ++j) g.footOffset[j] = toEigen(p.footOffset[j]);
  std::vector<InertiaBar> bar(model.nbodies());
  for (int i = 0; i < model.nbodies(); ++i) {
    bar[i].m = p.inertia[i].m;
    bar[i].h = toEigen(p.inertia[i].h);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) bar[i].Io(r, c) = p.inertia[i].Io(r, c);
  }
  g.addInertia(model, bar);
  return g;
}

template ParamGrad toParamGrad<Quadruped>(const Model&, const ParamBar<Quadruped>&);
template ParamGrad toParamGrad<SingleBody>(const Model&, const ParamBar<SingleBody>&);

}  // namespace diffloco::sim
