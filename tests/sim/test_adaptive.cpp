// Adaptive Dormand-Prince integration of the soft contact model (sim/adaptive.h): the spheres its
// contact stage takes, the forward against closed forms and against the stages' fixed
// sub-stepping, the step-size controller's limits, a model of no size class, and the backward
// pass (accepted step sizes frozen) against central finite differences of the same frozen-step
// integration and of the live one.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "robots/robot.h"
#include "sim/adaptive.h"
#include "sim/soft_dynamics.h"
#include "sim/terrain.h"
#include "sim/urdf.h"
#include "tests/sim/stages.h"

using namespace diffloco;
using namespace diffloco::sim;

namespace {

// A free sphere of mass m, radius r: one foot at the body origin.
Model sphereModel(double mass = 1.0, double radius = 0.05) {
  const double I = 0.4 * mass * radius * radius;
  char xml[1024];
  std::snprintf(xml, sizeof xml,
                "<robot name=\"ball\"><link name=\"base\"><inertial><origin xyz=\"0 0 0\"/>"
                "<mass value=\"%.17g\"/><inertia ixx=\"%.17g\" iyy=\"%.17g\" izz=\"%.17g\" "
                "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial><collision><origin xyz=\"0 0 0\"/>"
                "<geometry><sphere radius=\"%.17g\"/></geometry></collision></link></robot>",
                mass, I, I, I, radius);
  return parseUrdf(xml, "ball");
}

SimOptions adaptiveOptions(double dt, double rtol, double atol) {
  SimOptions o;
  o.dt = dt;
  o.contact.model = ContactModel::Soft;
  o.contact.integrator = Integrator::Adaptive;
  o.contact.softKp = 1e5;
  o.contact.adaptive.rtol = rtol;
  o.contact.adaptive.atol = atol;
  return o;
}

struct Case {
  Robot robot;
  SimOptions opt;
  VecX q, v, target;
};

// A robot pressing into stiff soft contact (feet ~4 mm in), moving down and sliding sideways.
Case robotCase(const std::string& name, double rtol, unsigned seed = 7) {
  Case c{loadRobot(name), adaptiveOptions(name == "anymal" ? 0.005 : 0.01, rtol, 1e-2 * rtol), {},
         {}, {}};
  for (auto& j : c.robot.model.joints) j.armature = 0.05;
  c.opt.actuator.kp = name == "anymal" ? 85 : 20;
  c.opt.actuator.kd = name == "anymal" ? 0.6 : 1;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  c.q = c.robot.standingConfiguration();
  c.q[2] -= 0.004;
  const Quat rot = Quat(1, 0.02 * n(rng), 0.02 * n(rng), 0.05 * n(rng)).normalized();
  c.q[3] = rot.w(), c.q[4] = rot.x(), c.q[5] = rot.y(), c.q[6] = rot.z();
  for (int j = 0; j < c.robot.model.nj(); ++j) c.q[7 + j] += 0.05 * n(rng);
  c.v = VecX::Zero(c.robot.model.nv());
  for (int i = 0; i < c.robot.model.nv(); ++i) c.v[i] = 0.05 * n(rng);
  c.v[2] = -0.3;
  c.v[0] = 1.0;  // feet slide: friction in its Coulomb branch (kf |v_t| > mu f_n)
  c.target = c.robot.defaultJointPos;
  for (int j = 0; j < c.robot.model.nj(); ++j) c.target[j] += 0.1 * n(rng);
  return c;
}

double relErr(const VecX& a, const VecX& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / std::max(1e-12, b.lpNorm<Eigen::Infinity>());
}

}  // namespace

TEST(Adaptive, IntegratorNamesAndDefaults) {
  EXPECT_EQ(parseIntegrator("fixed"), Integrator::Fixed);
  EXPECT_EQ(parseIntegrator("adaptive"), Integrator::Adaptive);
  EXPECT_STREQ(toString(Integrator::Adaptive), "adaptive");
  EXPECT_THROW(parseIntegrator("rk4"), std::invalid_argument);
  EXPECT_EQ(ContactOptions{}.integrator, Integrator::Fixed);  // nothing changes unless asked
}

// Free flight is a quadratic in time, which a 5th-order method integrates exactly, in few steps;
// a spinning body keeps a unit quaternion.
TEST(Adaptive, FreeFlightIsExact) {
  const Model m = sphereModel();
  AdaptiveData d(m);
  const SimOptions opt = adaptiveOptions(0.01, 1e-6, 1e-8);
  VecX q = neutralConfiguration(m), v = VecX::Zero(6), qn(7), vn(6);
  q[2] = 2.0;
  v << 0.3, 0, 1.0, 2.0, -1.0, 3.0;
  ASSERT_TRUE(adaptiveStep(m, opt, d, q, v, VecX::Zero(0), qn, vn));
  const double g = 9.81, T = 0.01;
  EXPECT_NEAR(qn[2], 2.0 + T - 0.5 * g * T * T, 1e-13);
  EXPECT_NEAR(qn[0], 0.3 * T, 1e-14);
  EXPECT_NEAR(vn[2], 1.0 - g * T, 1e-12);
  EXPECT_NEAR(qn.segment<4>(3).norm(), 1.0, 1e-15);
  EXPECT_LE(d.adaptive.accepted, 3);
  EXPECT_EQ(d.adaptive.rejected, 0);
  EXPECT_FALSE(d.adaptive.capHit);
  // The rotation about a fixed axis (a sphere spins freely): exp of the body-frame rotation vector.
  const Quat expect = Quat(1, 0, 0, 0) * Quat(Eigen::AngleAxisd(v.segment<3>(3).norm() * T,
                                                                v.segment<3>(3).normalized()));
  EXPECT_NEAR(std::abs(Quat(qn[3], qn[4], qn[5], qn[6]).dot(expect)), 1.0, 1e-12);
}

// An elastic bounce (k = 1e5, no damping, no gravity) of a point mass: exact contact time pi / w
// and exit speed = entry speed; the adaptive step resolves it to its tolerance.
TEST(Adaptive, ElasticBounceMatchesClosedForm) {
  Model m = sphereModel(1.0, 0.05);
  m.gravity.setZero();
  AdaptiveData d(m);
  SimOptions opt = adaptiveOptions(0.01, 1e-8, 1e-10);
  opt.contact.softKd = 0;
  VecX q = neutralConfiguration(m), v = VecX::Zero(6), qn(7), vn(6);
  q[2] = 0.05 + 0.002;  // 2 mm above the ground
  v[2] = -1.0;
  const double w = std::sqrt(1e5), tc = M_PI / w;  // contact lasts 9.93 ms
  int env = 0;
  for (; env < 3; ++env) {
    ASSERT_TRUE(adaptiveStep(m, opt, d, q, v, VecX::Zero(0), qn, vn));
    q = qn, v = vn;
  }
  // After 30 ms: 2 ms of approach, the bounce, then flight up at 1 m/s.
  const double T = 0.03, zExpect = 0.05 + (T - 0.002 - tc) * 1.0;
  EXPECT_NEAR(v[2], 1.0, 1e-6);
  EXPECT_NEAR(q[2], zExpect, 1e-7);
}

// With tight tolerances the adaptive step and the stages' fixed sub-stepping (many sub-steps)
// approach the same solution of the same model: the penalty law is the same.
TEST(Adaptive, AgreesWithFineFixedSubsteps) {
  Case c = robotCase("quadruped", 1e-8);
  const Model& m = c.robot.model;
  AdaptiveData d(m);
  VecX qa(m.nq()), va(m.nv()), qf(m.nq()), vf(m.nv()), qf2(m.nq()), vf2(m.nv());
  ASSERT_TRUE(adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qa, va));
  EXPECT_GT(d.adaptive.accepted, 5);
  SimOptions fixed = c.opt;  // the stages' fixed sub-steps
  fixed.contact.integrator = Integrator::Fixed;
  fixed.contact.softSubsteps = 4000;
  test::Stages<Quadruped>(m, fixed).step(c.q, c.v, c.target, qf, vf);
  fixed.contact.softSubsteps = 2000;
  test::Stages<Quadruped>(m, fixed).step(c.q, c.v, c.target, qf2, vf2);
  const double dFixed = (vf - vf2).lpNorm<Eigen::Infinity>();  // the fixed scheme's own error scale
  std::printf("adaptive %d steps (%d rejected); |v_adaptive - v_fixed4000| %.2e, |v_fixed4000 - "
              "v_fixed2000| %.2e\n",
              d.adaptive.accepted, d.adaptive.rejected, (va - vf).lpNorm<Eigen::Infinity>(),
              dFixed);
  EXPECT_LT((va - vf).lpNorm<Eigen::Infinity>(), 3 * dFixed + 1e-9);
  // The fixed scheme is first order: its Richardson extrapolation lands much closer.
  const VecX vRich = 2 * vf - vf2;
  std::printf("|v_adaptive - Richardson(fixed)| %.2e\n", (va - vRich).lpNorm<Eigen::Infinity>());
  EXPECT_LT((va - vRich).lpNorm<Eigen::Infinity>(), 0.1 * dFixed);
  EXPECT_LT((qa - (2 * qf - qf2)).lpNorm<Eigen::Infinity>(), 1e-8);
}

// The adaptive integrator takes every sphere into the contact stage, in order (its penalty force
// switches on inside a step, where it locates the touchdown), whatever the ground: stairs and rough
// ground, the depth bound from the samples or a finalized field's cell bounds, vertical and
// closest-point contact, the robot crouched low enough that knees touch.
TEST(Adaptive, ContactStageTakesEverySphere) {
  const Robot robot = loadRobot("anymal");
  const Model& m = robot.model;
  ASSERT_GT(m.nspheres(), m.nfeet());
  std::mt19937 rng(11);
  const auto [hf, finalized] = test::stairsThenBumps(rng);  // the samples' bound, the cells'
  std::uniform_real_distribution<double> u(-1, 1);
  const std::shared_ptr<const HeightField> fields[] = {hf, finalized};
  const StepModel<Quadruped> sm = toStepModel<Quadruped>(m);
  auto data = std::make_unique<StepData<Quadruped>>();
  auto fc = std::make_unique<Contacts<Quadruped>>();
  for (const auto& field : fields)
    for (bool closest : {false, true})
      for (int k = 0; k < 200; ++k) {
        SimOptions opt;
        opt.contact.model = ContactModel::Soft;
        opt.contact.terrain = field;
        opt.contact.terrainContact = closest ? TerrainContact::Closest : TerrainContact::Vertical;
        VecX q = robot.standingConfiguration();
        q[0] = 0.9 * u(rng), q[1] = 0.9 * u(rng), q[2] = 0.25 + 0.25 * (u(rng) + 1);
        for (int i = 7; i < m.nq(); ++i) q[i] += 0.8 * u(rng);
        forwardKinematics(sm, *data, q.data());
        collectContacts(sm, everySphere(toStepOptions(opt)), *data, toView(field.get()), *fc);
        ASSERT_EQ(fc->nc, m.nspheres());
        for (int j = 0; j < m.nspheres(); ++j) ASSERT_EQ(fc->active[j], j);
      }
}

// A model that fits no size class of the stages is refused, naming why.
TEST(Adaptive, AModelOfNoSizeClassIsAnError) {
  Case c = robotCase("anymal", 1e-6);
  Model& m = c.robot.model;
  m.feet.pop_back();  // three feet and leg spheres: neither Quadruped nor SingleBody
  AdaptiveData d(m);
  VecX qn(m.nq()), vn(m.nv());
  try {
    adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qn, vn);
    FAIL() << "adaptiveStep accepted a model of no size class";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fits no size class"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Quadruped"), std::string::npos) << e.what();
  }
}

// A mass resting on the penalty wall: the foot impulse over the env step is m g dt.
TEST(Adaptive, FootImpulseOfRestingMass) {
  const Model m = sphereModel(2.0, 0.05);
  AdaptiveData d(m);
  SimOptions opt = adaptiveOptions(0.01, 1e-8, 1e-10);
  VecX q = neutralConfiguration(m), v = VecX::Zero(6), qn(7), vn(6);
  q[2] = 0.05 - 2.0 * 9.81 / 1e5;  // static penetration
  ASSERT_TRUE(adaptiveStep(m, opt, d, q, v, VecX::Zero(0), qn, vn));
  EXPECT_NEAR(d.footImpulse[0], 2.0 * 9.81 * 0.01, 1e-9);
  EXPECT_NEAR(vn.norm(), 0.0, 1e-9);
}

// The cap: with maxSteps = 3 the env step still reaches dt (its last step unchecked), the flag is
// set and the running count grows; the min-step limit likewise.
TEST(Adaptive, StepCapAndMinStepAreFlagged) {
  Case c = robotCase("anymal", 1e-6);
  const Model& m = c.robot.model;
  AdaptiveData d(m);
  VecX qn(m.nq()), vn(m.nv());
  c.opt.contact.adaptive.maxSteps = 3;
  std::vector<double> steps;
  adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qn, vn, &steps);
  EXPECT_TRUE(d.adaptive.capHit);
  EXPECT_EQ(d.adaptiveCapHits, 1);
  double total = 0;
  for (double h : steps) total += h;
  EXPECT_NEAR(total, c.opt.dt, 1e-15);
  adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qn, vn);
  EXPECT_EQ(d.adaptiveCapHits, 2);

  c.opt.contact.adaptive.maxSteps = 100000;
  c.opt.contact.adaptive.minStep = 1e-3;  // far above what k = 1e5 needs at rtol 1e-6
  adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qn, vn);
  EXPECT_TRUE(d.adaptive.minStepHit);
  EXPECT_FALSE(d.adaptive.capHit);
  EXPECT_EQ(d.adaptiveCapHits, 2);
}

// The frozen-step integration with the sizes an adaptive step accepted reproduces it, and the env
// step is a pure function of its inputs (the backward re-runs it).
TEST(Adaptive, FrozenStepsReproduceTheAdaptiveStep) {
  Case c = robotCase("anymal", 1e-5);
  const Model& m = c.robot.model;
  AdaptiveData d(m), d2(m);
  VecX qa(m.nq()), va(m.nv()), qb(m.nq()), vb(m.nv());
  std::vector<double> steps, steps2;
  adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qa, va, &steps);
  adaptiveStep(m, c.opt, d2, c.q, c.v, c.target, qb, vb);  // another AdaptiveData
  adaptiveStep(m, c.opt, d2, c.q, c.v, c.target, qb, vb, &steps2);
  EXPECT_EQ(steps, steps2);
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(va, vb);
  rkIntegrate(m, c.opt, d2, c.q, c.v, c.target, steps, qb, vb);
  EXPECT_LT((qa - qb).lpNorm<Eigen::Infinity>(), 1e-14);
  EXPECT_LT((va - vb).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_EQ(adaptiveCheckpointBytes(m, 10), 10u * (19 + 18 + 1) * 8);
}

// The VJP of the adaptive env step (adaptiveStepVjp, step sizes frozen) against central differences of
// the same frozen-step integration, for every input and the soft parameters. Plain
// discretise-then-optimise here: with contact events located, step boundaries sit on the force's
// kinks by construction, where the frozen map has only one-sided derivatives (the next tests check
// that integrator against the continuous model instead).
TEST(Adaptive, StepVjpMatchesFiniteDifferencesOfFrozenSteps) {
  for (const char* name : {"anymal", "quadruped"}) {
    Case c = robotCase(name, 1e-5);
    c.opt.contact.adaptive.locateContacts = false;
    const Model& m = c.robot.model;
    AdaptiveData d(m);
    VecX qn(m.nq()), vn(m.nv());
    std::vector<double> steps;
    adaptiveStep(m, c.opt, d, c.q, c.v, c.target, qn, vn, &steps);
    const std::uint64_t mode = d.mode;
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0.0, 1.0);
    VecX wq(m.nq()), wv(m.nv());
    for (int i = 0; i < m.nq(); ++i) wq[i] = n(rng);
    for (int i = 0; i < m.nv(); ++i) wv[i] = n(rng);

    StepAdjoint adj(m);
    adaptiveStepVjp(m, c.opt, d, c.q, c.v, c.target, wq, wv, adj);

    int kinks = 0;
    auto L = [&](const SimOptions& o, const VecX& q, const VecX& v, const VecX& t) {
      AdaptiveData dd(m);
      VecX a(m.nq()), b(m.nv());
      rkIntegrate(m, o, dd, q, v, t, steps, a, b);
      kinks += dd.mode != mode;
      return wq.dot(a) + wv.dot(b);
    };
    const double eps = 1e-6;
    VecX gq(m.nq()), gv(m.nv()), gt(m.nj());
    for (int i = 0; i < m.nq(); ++i) {
      VecX a = c.q, b = c.q;
      a[i] += eps, b[i] -= eps;
      gq[i] = (L(c.opt, a, c.v, c.target) - L(c.opt, b, c.v, c.target)) / (2 * eps);
    }
    for (int i = 0; i < m.nv(); ++i) {
      VecX a = c.v, b = c.v;
      a[i] += eps, b[i] -= eps;
      gv[i] = (L(c.opt, c.q, a, c.target) - L(c.opt, c.q, b, c.target)) / (2 * eps);
    }
    for (int j = 0; j < m.nj(); ++j) {
      VecX a = c.target, b = c.target;
      a[j] += eps, b[j] -= eps;
      gt[j] = (L(c.opt, c.q, c.v, a) - L(c.opt, c.q, c.v, b)) / (2 * eps);
    }
    auto param = [&](auto set, double size) {
      SimOptions a = c.opt, b = c.opt;
      set(a, eps * size);
      set(b, -eps * size);
      return (L(a, c.q, c.v, c.target) - L(b, c.q, c.v, c.target)) / (2 * eps * size);
    };
    // Parameter steps large enough that the differences rise above the loss's rounding (their
    // gradients are small), small enough for the truncation error: 1e-4 relative, or more.
    const double gmu = param([](SimOptions& o, double e) { o.contact.mu += e; }, 100.0);
    const double gkp = param([](SimOptions& o, double e) { o.actuator.kp += e; }, 1e4);
    const double gsKp = param([](SimOptions& o, double e) { o.contact.softKp += e; }, 1e7);
    const double gsKd = param([](SimOptions& o, double e) { o.contact.softKd += e; }, 1e4);
    const double gsKf = param([](SimOptions& o, double e) { o.contact.softKf += e; }, 1e4);
    std::printf("%s: %zu accepted steps (h %.2e .. %.2e), %zu checkpoint bytes; rel. error q %.1e "
                "v %.1e target %.1e | mu %.6e/%.6e kp %.6e/%.6e softKp %.6e/%.6e softKd "
                "%.6e/%.6e softKf %.6e/%.6e; stencils on a kink %d\n",
                name, steps.size(), d.adaptive.minStep, d.adaptive.maxStep,
                adaptiveCheckpointBytes(m, static_cast<int>(steps.size())), relErr(adj.q, gq),
                relErr(adj.v, gv), relErr(adj.qTarget, gt), adj.params.mu, gmu, adj.params.kp,
                gkp, adj.params.softKp, gsKp, adj.params.softKd, gsKd, adj.params.softKf, gsKf,
                kinks);
    EXPECT_EQ(kinks, 0);
    EXPECT_GT(steps.size(), 5u) << name;
    EXPECT_LT(relErr(adj.q, gq), 1e-6) << name;
    EXPECT_LT(relErr(adj.v, gv), 1e-6) << name;
    EXPECT_LT(relErr(adj.qTarget, gt), 1e-6) << name;
    // 1e-6 relative, above an absolute floor of 1e-10: the rounding of the differences of an O(10)
    // loss, which the small parameter gradients (1e-5 for softKd) come close to.
    EXPECT_NEAR(adj.params.mu, gmu, 1e-6 * std::abs(gmu) + 1e-10) << name;
    EXPECT_NEAR(adj.params.kp, gkp, 1e-6 * std::abs(gkp) + 1e-10) << name;
    EXPECT_NEAR(adj.params.softKp, gsKp, 1e-6 * std::abs(gsKp) + 1e-10) << name;
    EXPECT_NEAR(adj.params.softKd, gsKd, 1e-6 * std::abs(gsKd) + 1e-10) << name;
    EXPECT_NEAR(adj.params.softKf, gsKf, 1e-6 * std::abs(gsKf) + 1e-10) << name;
  }
}

namespace {

// A short drop: feet 5 mm up, landing at 0.5 m/s while sliding (touchdowns, friction regime
// changes, lift-offs of the bouncing feet) over `steps` env steps.
struct Drop {
  Case c;
  MatX targets;
  VecX wq, wv;
};

Drop makeDrop(const std::string& name, int steps, double rtol) {
  Drop d{robotCase(name, rtol, 11), MatX(), VecX(), VecX()};
  const Model& m = d.c.robot.model;
  d.c.q[2] += 0.009;  // the case has the feet ~4 mm in: now ~5 mm up
  d.c.v[2] = -0.5;
  d.c.v[0] = 0.3;
  d.c.opt.contact.adaptive.maxSteps = 100000;
  std::mt19937 rng(2);
  std::normal_distribution<double> n(0.0, 1.0);
  d.targets.resize(m.nj(), steps);
  for (int t = 0; t < steps; ++t) d.targets.col(t) = d.c.target;
  d.wq.resize(m.nq());
  d.wv.resize(m.nv());
  for (int i = 0; i < m.nq(); ++i) d.wq[i] = n(rng);
  for (int i = 0; i < m.nv(); ++i) d.wv[i] = n(rng);
  return d;
}

double dropLoss(const Drop& d, const SimOptions& opt, const VecX& q, const VecX& v) {
  const Model& m = d.c.robot.model;
  AdaptiveData data(m);
  VecX qa = q, va = v, qb(m.nq()), vb(m.nv());
  for (int t = 0; t < d.targets.cols(); ++t) {
    adaptiveStep(m, opt, data, qa, va, d.targets.col(t), qb, vb);
    qa = qb, va = vb;
  }
  return d.wq.dot(qa) + d.wv.dot(va);
}

// Gradient of dropLoss with respect to (q0, v0) by the VJP over the rollout.
VecX dropGradient(const Drop& d, const SimOptions& opt, int* touchdowns = nullptr) {
  const Model& m = d.c.robot.model;
  const int H = static_cast<int>(d.targets.cols());
  AdaptiveData data(m);
  std::vector<VecX> q(H + 1, d.c.q), v(H + 1, d.c.v);
  int events = 0;
  for (int t = 0; t < H; ++t) {
    adaptiveStep(m, opt, data, q[t], v[t], d.targets.col(t), q[t + 1], v[t + 1]);
    events += data.adaptive.events;
  }
  if (touchdowns) *touchdowns = events;
  VecX gq = d.wq, gv = d.wv;
  for (int t = H - 1; t >= 0; --t) {
    StepAdjoint adj(m);
    adaptiveStepVjp(m, opt, data, q[t], v[t], d.targets.col(t), gq, gv, adj);
    gq = adj.q, gv = adj.v;
  }
  VecX g(m.nq() + m.nv());
  g << gq, gv;
  return g;
}

}  // namespace

// With contact events located (and the touchdown saltation), the VJP is the derivative of the
// continuous model: it matches central differences of the live adaptive integration (tight
// tolerance; its step sizes follow the perturbation) along random directions, through touchdowns
// with the approach damping's force jump, friction regime changes and lift-offs. Without the
// saltation term it does not (the damping's jump at touchdown).
TEST(Adaptive, VjpIsTheDerivativeOfTheContinuousModel) {
  Drop d = makeDrop("quadruped", 6, 1e-10);
  const Model& m = d.c.robot.model;
  int events = 0;
  const VecX g = dropGradient(d, d.c.opt, &events);
  SimOptions noSalt = d.c.opt;
  noSalt.contact.adaptive.saltation = false;
  const VecX gNoSalt = dropGradient(d, noSalt);
  std::mt19937 rng(9);
  std::normal_distribution<double> n(0.0, 1.0);
  double worst = 0, worstNoSalt = 0;
  for (int k = 0; k < 3; ++k) {
    VecX dir(m.nq() + m.nv());
    for (int i = 0; i < dir.size(); ++i) dir[i] = n(rng);
    dir.normalize();
    // 1e-5: the live integration's loss carries a tolerance-sized roughness (its step sizes and
    // event steps follow the perturbation) that smaller steps would amplify.
    const double e = 1e-5;
    const double fd = (dropLoss(d, d.c.opt, d.c.q + e * dir.head(m.nq()), d.c.v + e * dir.tail(m.nv())) -
                       dropLoss(d, d.c.opt, d.c.q - e * dir.head(m.nq()), d.c.v - e * dir.tail(m.nv()))) /
                      (2 * e);
    worst = std::max(worst, std::abs(g.dot(dir) - fd) / std::abs(fd));
    worstNoSalt = std::max(worstNoSalt, std::abs(gNoSalt.dot(dir) - fd) / std::abs(fd));
    std::printf("direction %d: VJP %.8e, without saltation %.8e, central differences %.8e\n", k,
                g.dot(dir), gNoSalt.dot(dir), fd);
  }
  std::printf("%d event steps; worst relative error %.1e (without the saltation %.1e)\n", events,
              worst, worstNoSalt);
  EXPECT_GT(events, 4);
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(worstNoSalt, 10 * worst);
}

// The point mass of DiffMJX's Figure 4 (no gravity, no damping: exact answer dz_T/dh0 = -1 after
// the bounce): with events located the adaptive gradient is right to ~1e-5 at rtol 1e-6; a stage
// straddling the contact kink (events off) leaves a first-order error.
TEST(Adaptive, PointMassBounceGradientIsExact) {
  Model m = sphereModel(1.0, 0.05);
  m.gravity.setZero();
  SimOptions opt = adaptiveOptions(0.01, 1e-6, 1e-8);
  opt.contact.softKd = 0;
  double worst = 0, worstOff = 0;
  for (double h0 : {0.0615, 0.064, 0.0712, 0.0833, 0.1}) {
    for (bool events : {true, false}) {
      opt.contact.adaptive.locateContacts = events;
      AdaptiveData d(m);
      std::vector<VecX> q(11, neutralConfiguration(m)), v(11, VecX::Zero(6));
      q[0][2] = h0;
      v[0][2] = -1;
      for (int k = 0; k < 10; ++k)
        adaptiveStep(m, opt, d, q[k], v[k], VecX::Zero(0), q[k + 1], v[k + 1]);
      ASSERT_GT(v[10][2], 0.99);  // bounced
      VecX gq = VecX::Zero(7), gv = VecX::Zero(6);
      gq[2] = 1;
      for (int k = 9; k >= 0; --k) {
        StepAdjoint adj(m);
        adaptiveStepVjp(m, opt, d, q[k], v[k], VecX::Zero(0), gq, gv, adj);
        gq = adj.q, gv = adj.v;
      }
      (events ? worst : worstOff) = std::max(events ? worst : worstOff, std::abs(gq[2] + 1));
    }
  }
  std::printf("|dz_T/dh0 + 1|: events located %.1e, not located %.1e\n", worst, worstOff);
  EXPECT_LT(worst, 1e-4);
  EXPECT_GT(worstOff, 10 * worst);
}
