#include "experiments/gradcheck.h"

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>

#include "sim/kinematics.h"
#include "sim/rollout.h"
#include "sim/step.h"
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

// The feet's clearances above the surface under them, summed.
double footClearance(const sim::Model& model, const sim::HeightField* terrain, const VecX& q0) {
  sim::Data d(model);
  sim::forwardKinematics(model, d, q0);
  double clearance = 0;
  for (const sim::Foot& ft : model.feet) {
    const sim::Vec3 c = sim::worldPoint(d, ft.body, ft.offset);
    clearance += c.z() - ft.radius - sim::groundHeight(terrain, c.x(), c.y());
  }
  return clearance;
}

// Scenario: standing pose, perturbed, moving down onto the ground.
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
    const double clearance = footClearance(model, opt.contact.terrain.get(), q0);
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

using Eval = std::function<sim::Rollout(double)>;

struct Pending {
  std::string name;
  VecX vjp, fd;
  std::vector<char> skip;
};

// The finite-difference side of the check, one group of coordinates at a time, each kept with
// its slice of the VJP.
struct FdCheck {
  const sim::Model& model;
  const sim::SimOptions& opt;
  sim::Data& data;
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
  // penalty branch, an actuator clip: see Data::mode) measures no derivative; the step shrinks
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
        return sim::rollout(model, opt, data, q, v, targets);
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
              return sim::rollout(model, opt, data, q0, v0, t);
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
        sim::Data d(m);
        return sim::rollout(m, opt, d, q0, v0, targets);
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
        sim::Data d(m);
        return sim::rollout(m, opt, d, q0, v0, targets);
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
        sim::Data d(m);
        return sim::rollout(m, opt, d, q0, v0, targets);
      };
    });
  }

  void param(const std::string& name, double vjp, double value,
             std::function<void(sim::SimOptions&, double)> set) {
    group(name, VecX::Constant(1, vjp), 1, [&, set](int) -> Eval {
      return [&, set](double e) {
        sim::SimOptions p = opt;
        set(p, e);
        return sim::rollout(model, p, data, q0, v0, targets);
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

// Contacts in the first step.
int firstStepContacts(const sim::Model& model, const sim::SimOptions& opt, const Scenario& sc) {
  sim::Data d(model);
  VecX qn(model.nq()), vn(model.nv());
  sim::step(model, opt, d, sc.q0, sc.v0, sc.targets.col(0), qn, vn);
  int active = 0;
  for (int a : d.active) active += opt.contact.model != sim::ContactModel::Soft || d.depth[a] >= 0;
  return active;
}

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

}  // namespace

GradcheckReport gradcheck(const Robot& robot, const sim::SimOptions& flatOpt,
                          const GradcheckOptions& o) {
  const sim::Model& model = robot.model;
  sim::SimOptions opt = flatOpt;
  opt.contact.terrain = makeTerrain(o.terrain);
  const Scenario sc = makeScenario(robot, opt, o);

  sim::Data data(model);
  const sim::Rollout nominal = sim::rollout(model, opt, data, sc.q0, sc.v0, sc.targets);
  const sim::RolloutAdjoint adj =
      sim::rolloutVjp(model, opt, data, nominal, sc.targets, sc.wq, sc.wv);

  FdCheck fd{model, opt, data, sc.q0, sc.v0, sc.targets, sc.wq, sc.wv, nominal, o, o.horizon, {}};
  fd.addInputGroups(adj);
  fd.addBodyGroups(adj);
  fd.addOptionGroups(adj);

  GradcheckReport report;
  report.activeContacts = firstStepContacts(model, opt, sc);
  scoreGroups(fd.groups, report);
  return report;
}

}  // namespace diffloco
