#include "experiments/gradcheck.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/moreau_step.h"
#include "sim/pack.h"
#include "sim/stage_rollout.h"
#include "sim/terrain.h"

namespace diffloco {
using sim::MatX;
using sim::VecX;

sim::SimOptions defaultSimOptions(Robot& robot, sim::ContactModel cm) {
  robot.applyArmature(robot.model);
  return robot.simOptions(cm);
}

const std::vector<std::string>& gradcheckTerrains() {
  static const std::vector<std::string> names{"flat", "slope", "bump", "step"};
  return names;
}

namespace {

constexpr double kSlope = 0.15;  // "slope": dh/dx

// A 4 m x 4 m height field around the origin, 5 cm grid.
std::shared_ptr<const sim::HeightField> makeTerrain(const std::string& name) {
  if (name == "flat") return nullptr;
  auto hf = std::make_shared<sim::HeightField>();
  hf->spacing = 0.05;
  hf->nx = hf->ny = 81;
  hf->originX = hf->originY = -2.0;
  hf->heights.resize(hf->nx * hf->ny);
  for (int iy = 0; iy < hf->ny; ++iy)
    for (int ix = 0; ix < hf->nx; ++ix) {
      const double x = hf->originX + ix * hf->spacing, y = hf->originY + iy * hf->spacing;
      double h = 0;
      if (name == "slope") {
        h = kSlope * x;
      } else if (name == "bump") {
        h = 0.03 * std::sin(2 * M_PI * (x - 0.1) / 0.7) * std::cos(2 * M_PI * (y + 0.05) / 0.9);
      } else if (name == "step") {
        // The edge's steep cell spans [0.25, 0.30]: the front feet (x ~ 0.28-0.35 for both robots
        // standing) sit on it or just past it.
        h = x >= 0.299 ? 0.03 : 0.0;
      } else {
        throw std::invalid_argument("gradcheck: unknown terrain '" + name +
                                    "' (expected flat, slope, bump or step)");
      }
      hf->heights[iy * hf->nx + ix] = h;
    }
  sim::validateHeightField(*hf, "gradcheck terrain");
  hf->finalize();
  return hf;
}

// The perturbed scenario: the initial state, every step's joint targets and the loss's random
// weights on the final state.
struct Scenario {
  VecX q0, v0;
  MatX targets;
  VecX wq, wv;
};

// The feet's clearances above the surface under them, summed (the stages' kinematics; the feet
// are the first spheres).
template <class D>
double footClearance(const sim::Model& model, const sim::HeightField* terrain, const VecX& q0) {
  const auto m = std::make_unique<sim::StepModel<D>>(sim::toStepModel<D>(model));
  const auto d = std::make_unique<sim::StepData<D>>();
  sim::forwardKinematics(*m, *d, q0.data());
  double clearance = 0;
  for (int j = 0; j < model.nfeet(); ++j) {
    const sim::V3 c = sim::sphereCentre(*m, *d, j);
    clearance += c[2] - m->footRadius[j] - sim::groundHeight(terrain, c[0], c[1]);
  }
  return clearance;
}

// Scenario: standing pose, perturbed, moving down onto the ground.
template <class D>
Scenario makeScenario(const Robot& robot, const sim::SimOptions& opt, const GradcheckOptions& o) {
  const sim::Model& model = robot.model;
  const int H = o.horizon, nq = model.nq(), nv = model.nv(), nj = model.nj();
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> n(0.0, 1.0);
  const double pitch = o.terrain == "slope" ? std::atan(kSlope) : 0.0;  // nose up the slope

  VecX q0 = robot.standingConfiguration();
  q0[2] += o.state == "contact" ? -0.015 : 0.02;
  const sim::Quat rot =
      sim::Quat(Eigen::AngleAxisd(-pitch, sim::Vec3::UnitY())) *
      sim::Quat(1, 0.005 * n(rng), 0.005 * n(rng), 0.05 * n(rng)).normalized();
  q0.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
  for (int j = 0; j < nj; ++j) q0[7 + j] += 0.01 * n(rng);
  VecX v0(nv);
  for (int i = 0; i < nv; ++i) v0[i] = 0.05 * n(rng);
  v0[2] = o.state == "contact" ? -0.2 : -0.5;
  // The slide is along the surface: up the slope on "slope", forward elsewhere.
  v0[0] += o.slide * std::cos(pitch);
  v0[2] += o.slide * std::sin(pitch);
  if (opt.contact.terrain) {  // lift or lower the robot onto the surface under its feet
    const double clearance = footClearance<D>(model, opt.contact.terrain.get(), q0);
    q0[2] += (o.state == "contact" ? -0.015 : 0.02) - clearance / model.nfeet();
  }
  MatX targets(nj, H);
  for (int t = 0; t < H; ++t)
    for (int j = 0; j < nj; ++j) targets(j, t) = robot.defaultJointPos[j] + 0.1 * n(rng);
  VecX wq(nq), wv(nv);
  for (int i = 0; i < nq; ++i) wq[i] = n(rng);
  for (int i = 0; i < nv; ++i) wv[i] = n(rng);
  return {std::move(q0), std::move(v0), std::move(targets), std::move(wq), std::move(wv)};
}

// One step of the stages' forward (sim::fixedStep, observed) with a fingerprint of the piecewise
// branches it took: each joint's actuator regime (free, clipped below or above), the spheres in
// the contact problem and each Gauss-Seidel update's branch (stick, separate, slide inside the
// cone, slide onto it), and per sub-step the soft model's penalty regime at each contact. Two
// steps with the same fingerprint are on the same smooth piece.
template <class D>
class FingerprintedStep {
 public:
  FingerprintedStep(const sim::Model& model, const sim::SimOptions& opt)
      : m_(std::make_unique<sim::StepModel<D>>(sim::toStepModel<D>(model))),
        o_(sim::toStepOptions(opt)),
        ground_(sim::toView(opt.contact.terrain.get())) {
    // The solver's branches are read from its tape.
    if (o_.model != sim::FixedContact::Soft && o_.iterations > D::MAXGSITER)
      throw std::invalid_argument("gradcheck: " + sim::notInStepVjp<D>(opt));
  }

  // (q, v) -> (qn, vn) with joint targets `target`, which must not alias; returns the fingerprint.
  std::uint64_t operator()(const double* q, const double* v, const double* target, double* qn,
                           double* vn) {
    mode_ = 0;
    target_ = target;
    Scratch& w = *w_;
    sim::fixedStep<D>(*m_, o_, ground_, q, v, target, qn, vn, w.d, w.fc, &w.gs, *this);
    return mode_;
  }

  // sim::fixedStep's observer: each (sub-)step's actuator regimes from the state it starts from,
  // then the soft model's penalty regimes at its contacts, or the hard and smoothed step's
  // spheres in the problem and solver branches.
  void beforeSubstep(const double* q, const double* v) { mixActuators(q, v, target_); }
  void afterSubstep(const sim::Contacts<D>& fc, const sim::GsTape<D>*, const double* v, double) {
    if (o_.model == sim::FixedContact::Soft) {
      mixPenaltyRegimes(v);
      return;
    }
    for (int a = 0; a < fc.nc; ++a) mix(16 + fc.active[a]);
    mixSolverBranches();
  }

  // The spheres in the last (sub-)step's contact problem; the soft model's pressed in.
  int contacts() const {
    int n = 0;
    for (int a = 0; a < w_->fc.nc; ++a)
      n += o_.model != sim::FixedContact::Soft || w_->fc.contact[a].depth >= 0;
    return n;
  }

 private:
  struct Scratch {
    sim::StepData<D> d;
    sim::Contacts<D> fc;
    sim::GsTape<D> gs;
  };

  void mix(std::uint64_t value) { mode_ = (mode_ ^ value) * 0x100000001b3ull; }

  // sim::actuatorTorque's regime per joint.
  void mixActuators(const double* q, const double* v, const double* target) {
    for (int j = 0; j < D::NJ; ++j) {
      const double tau = sim::actuatorTorque(o_, m_->effort[j], target[j], q[7 + j], v[6 + j]);
      const double free = o_.kp * (target[j] - q[7 + j]) - o_.kd * v[6 + j];
      mix(free == tau ? 32 : 33 + (tau > free));
    }
  }

  // sim::gaussSeidelUpdate's branch per update (0 stick, 1 separate, 2 inside the cone, 3 onto
  // it), from the impulse and s the tape holds.
  void mixSolverBranches() {
    const sim::Contacts<D>& fc = w_->fc;
    const sim::GsTape<D>& gs = w_->gs;
    int update = 0;
    for (int it = 0; it < o_.iterations; ++it)
      for (int j = 0; j < fc.nc; ++j, ++update) {
        if (gs.stick[update]) {
          mix(0);
          continue;
        }
        const sim::M3 G = sim::gBlock(fc, j, j);
        const double a = G(1, 1), b = G(1, 2), dd = G(2, 2);
        const double lmax = 0.5 * (a + dd) + std::sqrt(0.25 * (a - dd) * (a - dd) + b * b);
        const double rn = 1.0 / G(0, 0), rt = 1.0 / lmax;
        const sim::V3& p = gs.pOld[update];
        const sim::V3& sv = gs.s[update];
        const double z0 = p[0] - rn * sv[0], z1 = p[1] - rt * sv[1], z2 = p[2] - rt * sv[2];
        mix(z0 <= 0 ? 1 : sim::norm2(z1, z2) <= o_.mu * z0 ? 2 : 3);
      }
  }

  // The soft model's branches per contact at the sub-step's velocity v (sim::softForce's: 1 +
  // approaching + 2 viscous, 0 apart).
  void mixPenaltyRegimes(const double* v) {
    const sim::Contacts<D>& fc = w_->fc;
    for (int a = 0; a < fc.nc; ++a) {
      const double depth = fc.contact[a].depth;
      if (depth < 0) {
        mix(0);
        continue;
      }
      double vc[3];
      for (int r = 0; r < 3; ++r) {
        double s = 0;
        for (int k = 0; k < D::NV; ++k) s += fc.Jc[3 * a + r][k] * v[k];
        vc[r] = s;
      }
      const bool approaching = vc[0] < 0;
      const double fn = o_.softKp * depth - (approaching ? o_.softKd * vc[0] : 0.0);
      const bool viscous = o_.softKf * sim::norm2(vc[1], vc[2]) <= o_.mu * fn;
      mix(1 + approaching + 2 * viscous);
    }
  }

  std::unique_ptr<sim::StepModel<D>> m_;
  sim::FixedOptions o_;
  sim::HeightFieldView ground_;  // of the options' terrain, which the caller keeps
  std::unique_ptr<Scratch> w_ = std::make_unique<Scratch>();
  const double* target_ = nullptr;  // the step's, for the actuator regimes
  std::uint64_t mode_ = 0;
};

// sim::stageRollout with each step's fingerprint in Rollout::modes; firstContacts: the spheres in
// the first step's contact problem (FingerprintedStep::contacts).
template <class D>
sim::Rollout fingerprintedRollout(const sim::Model& model, const sim::SimOptions& opt,
                                  const VecX& q0, const VecX& v0, const MatX& targets,
                                  int* firstContacts = nullptr) {
  FingerprintedStep<D> step(model, opt);
  const int H = static_cast<int>(targets.cols());
  sim::Rollout r;
  r.q.assign(H + 1, q0);
  r.v.assign(H + 1, v0);
  r.modes.assign(H, 0);
  for (int t = 0; t < H; ++t) {
    r.modes[t] = step(r.q[t].data(), r.v[t].data(), targets.col(t).data(), r.q[t + 1].data(),
                      r.v[t + 1].data());
    r.finite = r.q[t + 1].allFinite() && r.v[t + 1].allFinite() && r.finite;
    if (t == 0 && firstContacts) *firstContacts = step.contacts();
  }
  return r;
}

// Whether two rollouts of one scenario agree to round-off (1e-9 relative to max(1, |x|): the same
// code inlined into two callers may contract its products into fused multiply-adds differently),
// or are both not finite.
bool sameStates(const sim::Rollout& a, const sim::Rollout& b) {
  if (a.finite != b.finite || a.q.size() != b.q.size()) return false;
  if (!a.finite) return true;
  auto close = [](const VecX& x, const VecX& y) {
    return x.size() == y.size() &&
           ((x - y).array().abs() <= 1e-9 * x.array().abs().max(1.0)).all();
  };
  for (size_t t = 0; t < a.q.size(); ++t)
    if (!close(a.q[t], b.q[t]) || !close(a.v[t], b.v[t])) return false;
  return true;
}

using Eval = std::function<sim::Rollout(double)>;

struct Pending {
  std::string name;
  VecX vjp, fd;
  std::vector<char> skip;
};

// The finite-difference side of the check, one group of coordinates at a time, each kept with
// its slice of the VJP, each evaluation a fingerprinted stage rollout.
template <class D>
struct FdCheck {
  const sim::Model& model;
  const sim::SimOptions& opt;
  const VecX& q0;
  const VecX& v0;
  const MatX& targets;
  const VecX& wq;
  const VecX& wv;
  const sim::Rollout& nominal;
  const GradcheckOptions& o;
  int H;
  std::vector<Pending> groups;

  // One central difference. A stencil that straddles a kink (a contact switch, a solver or
  // penalty branch, an actuator clip: see FingerprintedStep) measures no derivative; the step shrinks
  // tenfold up to three times to get off the kink, else the coordinate is excluded and counted.
  double central(const Eval& f, bool& switched, double scale) const {
    double eps = o.eps * scale;
    for (int tries = 0; tries < 4; ++tries, eps /= 10) {
      const sim::Rollout a = f(eps), b = f(-eps);
      switched = a.modes != nominal.modes || b.modes != nominal.modes;
      if (!switched)
        return (wq.dot(a.q[H]) + wv.dot(a.v[H]) - wq.dot(b.q[H]) - wv.dot(b.v[H])) / (2 * eps);
    }
    return 0.0;
  }

  void group(const std::string& name, const VecX& vjp, int size,
             const std::function<Eval(int)>& perturb, double scale = 1) {
    Pending p{name, vjp, VecX::Zero(size), std::vector<char>(size, 0)};
    for (int i = 0; i < size; ++i) {
      bool sw = false;
      p.fd[i] = central(perturb(i), sw, scale);
      p.skip[i] = sw;
    }
    groups.push_back(std::move(p));
  }

  std::function<Eval(int)> withState(int offset, bool velocity) const {
    return [this, offset, velocity](int i) -> Eval {
      return [this, offset, velocity, i](double e) {
        VecX q = q0, v = v0;
        (velocity ? v : q)[offset + i] += e;
        return fingerprintedRollout<D>(model, opt, q, v, targets);
      };
    };
  }

  // The initial state and every step's joint targets.
  void addInputGroups(const sim::RolloutAdjoint& adj) {
    const int nv = model.nv(), nj = model.nj();
    group("q0.base_position", adj.q0.head(3), 3, withState(0, false));
    group("q0.base_quaternion", adj.q0.segment(3, 4), 4, withState(3, false));
    group("q0.joints", adj.q0.tail(nj), nj, withState(7, false));
    group("v0", adj.v0, nv, withState(0, true));
    group("targets", Eigen::Map<const VecX>(adj.targets.data(), nj * H), nj * H,
          [&](int i) -> Eval {
            return [&, i](double e) {
              MatX t = targets;
              t.data()[i] += e;
              return fingerprintedRollout<D>(model, opt, q0, v0, t);
            };
          });
  }

  // The bodies' masses, the feet's offsets and the bodies' inertia entries.
  void addBodyGroups(const sim::RolloutAdjoint& adj) {
    // Parameters are perturbed relative to their size (kappa = 300 would drown a 1e-6 step).
    group("mass", adj.params.mass, model.nbodies(), [&](int b) -> Eval {
      return [&, b](double e) {
        sim::Model m = model;
        sim::Inertia& I = m.bodies[b].inertia;
        const double s = (I.m + e) / I.m;
        I.m *= s, I.h *= s, I.Io *= s;
        return fingerprintedRollout<D>(m, opt, q0, v0, targets);
      };
    }, 10.0);
    // Shape: the feet's offsets in their bodies' frames; and the bodies' inertia entries (m, h, and
    // Io perturbed symmetrically: its adjoint pairs as Ib(r, c) + Ib(c, r)).
    VecX offsetVjp(3 * model.nfeet());
    for (int f = 0; f < model.nfeet(); ++f) offsetVjp.segment<3>(3 * f) = adj.params.footOffset[f];
    group("foot_offset", offsetVjp, 3 * model.nfeet(), [&](int i) -> Eval {
      return [&, i](double e) {
        sim::Model m = model;
        m.feet[i / 3].offset[i % 3] += e;
        return fingerprintedRollout<D>(m, opt, q0, v0, targets);
      };
    });
    static const int kPairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    VecX inertiaVjp(10 * model.nbodies());
    for (int b = 0; b < model.nbodies(); ++b) {
      const sim::InertiaBar& Ib = adj.params.inertia[b];
      inertiaVjp[10 * b] = Ib.m;
      inertiaVjp.segment<3>(10 * b + 1) = Ib.h;
      for (int k = 0; k < 6; ++k) {
        const int r = kPairs[k][0], c = kPairs[k][1];
        inertiaVjp[10 * b + 4 + k] = Ib.Io(r, c) + (r != c ? Ib.Io(c, r) : 0.0);
      }
    }
    group("inertia", inertiaVjp, 10 * model.nbodies(), [&](int i) -> Eval {
      return [&, i](double e) {
        sim::Model m = model;
        sim::Inertia& I = m.bodies[i / 10].inertia;
        const int k = i % 10;
        if (k == 0) {
          I.m += e;
        } else if (k < 4) {
          I.h[k - 1] += e;
        } else {
          const int r = kPairs[k - 4][0], c = kPairs[k - 4][1];
          I.Io(r, c) += e;
          if (r != c) I.Io(c, r) += e;
        }
        return fingerprintedRollout<D>(m, opt, q0, v0, targets);
      };
    });
  }

  void param(const std::string& name, double vjp, double value,
             std::function<void(sim::SimOptions&, double)> set) {
    group(name, VecX::Constant(1, vjp), 1, [&, set](int) -> Eval {
      return [&, set](double e) {
        sim::SimOptions p = opt;
        set(p, e);
        return fingerprintedRollout<D>(model, p, q0, v0, targets);
      };
    }, std::max(1.0, std::abs(value)));
  }

  // The contact and actuator parameters of the simulation options.
  void addOptionGroups(const sim::RolloutAdjoint& adj) {
    param("mu", adj.params.mu, opt.contact.mu,
          [](sim::SimOptions& p, double e) { p.contact.mu += e; });
    param("kappa", adj.params.kappa, opt.contact.kappa,
          [](sim::SimOptions& p, double e) { p.contact.kappa += e; });
    param("kp", adj.params.kp, opt.actuator.kp,
          [](sim::SimOptions& p, double e) { p.actuator.kp += e; });
    param("kd", adj.params.kd, opt.actuator.kd,
          [](sim::SimOptions& p, double e) { p.actuator.kd += e; });
    if (opt.contact.model == sim::ContactModel::Soft) {
      param("soft_kp", adj.params.softKp, opt.contact.softKp,
            [](sim::SimOptions& p, double e) { p.contact.softKp += e; });
      param("soft_kd", adj.params.softKd, opt.contact.softKd,
            [](sim::SimOptions& p, double e) { p.contact.softKd += e; });
      param("soft_kf", adj.params.softKf, opt.contact.softKf,
            [](sim::SimOptions& p, double e) { p.contact.softKf += e; });
    }
  }
};

// Each group's VJP against its finite differences, on the coordinates that were not excluded.
void scoreGroups(const std::vector<Pending>& groups, GradcheckReport& report) {
  double scale = 0;
  for (const auto& g : groups) scale = std::max(scale, g.fd.lpNorm<Eigen::Infinity>());
  for (const auto& g : groups) {
    GradcheckGroup r{g.name, static_cast<int>(g.fd.size())};
    double err = 0, norm = 0;
    for (int i = 0; i < g.fd.size(); ++i) {
      if (g.skip[i]) {
        ++r.excluded;
        continue;
      }
      err = std::max(err, std::abs(g.vjp[i] - g.fd[i]));
      norm = std::max(norm, std::abs(g.fd[i]));
    }
    r.gradNorm = norm;
    r.relError = err / std::max(norm, 1e-3 * scale);
    report.worst = std::max(report.worst, r.relError);
    report.groups.push_back(r);
  }
}

// The check on the stages of size class D: the VJP of sim::stageRolloutVjp against central
// differences of the stages' forward.
template <class D>
GradcheckReport gradcheckOn(const Robot& robot, const sim::SimOptions& flatOpt,
                            const GradcheckOptions& o) {
  const sim::Model& model = robot.model;
  sim::SimOptions opt = flatOpt;
  opt.contact.terrain = makeTerrain(o.terrain);
  if (const std::string why = sim::notInStepVjp<D>(opt); !why.empty())
    throw std::invalid_argument("gradcheck: the stages' VJP: " + why);
  const Scenario sc = makeScenario<D>(robot, opt, o);
  const int H = o.horizon;

  // The VJP along sim::stageRollout's trajectory; the stencils' fingerprints are compared with
  // those of the fingerprinted forward along the same trajectory.
  GradcheckReport report;
  const sim::Rollout nominal =
      fingerprintedRollout<D>(model, opt, sc.q0, sc.v0, sc.targets, &report.activeContacts);
  const sim::Rollout r = sim::stageRollout<D>(model, opt, sc.q0, sc.v0, sc.targets);
  if (!sameStates(nominal, r))
    throw std::logic_error("gradcheck: the fingerprinted forward left sim::fixedStep's");
  std::vector<VecX> gq(H + 1), gv(H + 1);  // the loss's weights on the final state alone
  gq[H] = sc.wq;
  gv[H] = sc.wv;
  const sim::RolloutAdjoint adj = sim::stageRolloutVjp<D>(model, opt, r, sc.targets, gq, gv);

  FdCheck<D> fd{model, opt, sc.q0, sc.v0, sc.targets, sc.wq, sc.wv, nominal, o, H, {}};
  fd.addInputGroups(adj);
  fd.addBodyGroups(adj);
  fd.addOptionGroups(adj);
  scoreGroups(fd.groups, report);
  return report;
}

}  // namespace

GradcheckReport gradcheck(const Robot& robot, const sim::SimOptions& opt,
                          const GradcheckOptions& o) {
  if (sim::notInStepModel<sim::Quadruped>(robot.model).empty())
    return gradcheckOn<sim::Quadruped>(robot, opt, o);
  if (sim::notInStepModel<sim::SingleBody>(robot.model).empty())
    return gradcheckOn<sim::SingleBody>(robot, opt, o);
  throw std::invalid_argument("gradcheck: the stages have no size class for this robot: " +
                              sim::notInStepModel<sim::Quadruped>(robot.model));
}

}  // namespace diffloco
