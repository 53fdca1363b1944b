// The hand-written backward pass of a step (the stages' VJP, sim/moreau_step_vjp.h and
// sim/soft_step_vjp.h) against central finite differences of the stages' step (double precision).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "robots/robot.h"
#include "sim/terrain.h"
#include "tests/sim/stages.h"

using namespace diffloco;
using namespace diffloco::sim;
using test::StageAdjoint;
using Stages = test::Stages<Quadruped>;

namespace {

struct Case {
  Robot robot;
  SimOptions opt;
  VecX q, v, target;
};

// A robot in a generic state moving down onto the ground: feet 4 mm in (inContact) or 1 cm above
// it, where the smoothed model already acts (sigmoid(-3) = 0.05).
Case makeCase(const std::string& robot, ContactModel cm, bool inContact, unsigned seed,
              double slide = 0) {
  Case c{loadRobot(robot), {}, {}, {}, {}};
  for (auto& j : c.robot.model.joints) j.armature = 0.05;
  c.opt.dt = robot == "anymal" ? 0.005 : 0.01;
  c.opt.contact.model = cm;
  c.opt.contact.softSubsteps = 5;
  c.opt.actuator.kp = robot == "anymal" ? 85 : 20;
  c.opt.actuator.kd = robot == "anymal" ? 0.6 : 1;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  c.q = c.robot.standingConfiguration();
  c.q[2] += inContact ? -0.004 : 0.01;
  c.q[0] += 0.1 * n(rng);
  Quat rot = Quat(1, 0.02 * n(rng), 0.02 * n(rng), 0.05 * n(rng)).normalized();
  c.q[3] = rot.w(), c.q[4] = rot.x(), c.q[5] = rot.y(), c.q[6] = rot.z();
  for (int j = 0; j < 12; ++j) c.q[7 + j] += 0.05 * n(rng);
  c.v = VecX::Zero(c.robot.model.nv());
  for (int i = 0; i < c.robot.model.nv(); ++i) c.v[i] = 0.05 * n(rng);
  c.v[2] = -0.5;
  c.v[0] = slide;
  c.target = c.robot.defaultJointPos;
  for (int j = 0; j < 12; ++j) c.target[j] += 0.1 * n(rng);
  return c;
}

// ANYmal kneeling: thighs down, shanks folded level, lowered until its lowest sphere (a knee,
// sim::Model::legSpheres) is 12 mm in (every knee is in); the feet are 10 cm above the ground.
Case kneelingCase(ContactModel cm, unsigned seed, bool bumps,
                  Interpolant interpolant = Interpolant::CatmullRom) {
  Case c = makeCase("anymal", cm, true, seed);
  if (bumps) {  // 3 cm bumps at a 5 cm grid: curved ground under every sphere
    auto hf = std::make_shared<HeightField>();
    hf->spacing = 0.05, hf->nx = 61, hf->ny = 41, hf->originX = -1.5, hf->originY = -1;
    hf->interpolant = interpolant;
    for (int iy = 0; iy < hf->ny; ++iy)
      for (int ix = 0; ix < hf->nx; ++ix)
        hf->heights.push_back(0.03 * std::sin(4.1 * ix * hf->spacing) *
                              std::cos(3.3 * iy * hf->spacing));
    c.opt.contact.terrain = hf;
  }
  const Model& m = c.robot.model;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int leg = 0; leg < 4; ++leg) {
    c.q[7 + 3 * leg + 1] = 0.03 * n(rng);
    c.q[7 + 3 * leg + 2] = (leg < 2 ? -1.57 : 1.57) + 0.03 * n(rng);
  }
  c.target = c.q.tail(m.nj());
  const StepModel<Quadruped> fm = toStepModel<Quadruped>(m);
  const HeightFieldView ground = toView(c.opt.contact.terrain.get());
  double lowest = 1e9;
  for (int j = 0; j < m.nspheres(); ++j)
    lowest = std::min(lowest, -test::sphereContact(fm, ground, c.q, j).depth);
  c.q[2] -= lowest + 0.012;
  return c;
}

// Loss = <wq, q'> + <wv, v'> with fixed random weights, (q', v') the stages' step.
struct Loss {
  VecX wq, wv;
  double operator()(const Case& c, const Model& m, const SimOptions& o, const VecX& q,
                    const VecX& v, const VecX& t) const {
    VecX qn, vn;
    Stages(m, o).step(q, v, t, qn, vn);
    return wq.dot(qn) + wv.dot(vn);
  }
};

double relErr(const VecX& a, const VecX& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / std::max(1e-9, b.lpNorm<Eigen::Infinity>());
}

void checkCase(const std::string& robot, ContactModel cm, bool inContact, double tol,
               double slide = 0, bool kneel = false, bool bumps = false, bool closest = false,
               Interpolant interpolant = Interpolant::CatmullRom) {
  Case c =
      kneel ? kneelingCase(cm, 7, bumps, interpolant) : makeCase(robot, cm, inContact, 7, slide);
  if (closest) c.opt.contact.terrainContact = TerrainContact::Closest;
  const Model& m = c.robot.model;
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  Loss L{VecX(m.nq()), VecX(m.nv())};
  for (int i = 0; i < m.nq(); ++i) L.wq[i] = n(rng);
  for (int i = 0; i < m.nv(); ++i) L.wv[i] = n(rng);

  const Stages st(m, c.opt);
  StageAdjoint adj;
  st.vjp(c.q, c.v, c.target, L.wq, L.wv, adj);

  const double eps = 1e-6;
  auto fd = [&](auto perturb) {
    return (perturb(+eps) - perturb(-eps)) / (2 * eps);
  };
  VecX gq(m.nq()), gv(m.nv()), gt(m.nj());
  for (int i = 0; i < m.nq(); ++i)
    gq[i] = fd([&](double e) { VecX q = c.q; q[i] += e; return L(c, m, c.opt, q, c.v, c.target); });
  for (int i = 0; i < m.nv(); ++i)
    gv[i] = fd([&](double e) { VecX v = c.v; v[i] += e; return L(c, m, c.opt, c.q, v, c.target); });
  for (int i = 0; i < m.nj(); ++i)
    gt[i] = fd([&](double e) { VecX t = c.target; t[i] += e; return L(c, m, c.opt, c.q, c.v, t); });
  VecX gmass(m.nbodies());
  for (int b = 0; b < m.nbodies(); ++b)
    gmass[b] = fd([&](double e) {
      Model mm = m;
      Inertia& I = mm.bodies[b].inertia;
      const double s = (I.m + e) / I.m;
      I.m *= s, I.h *= s, I.Io *= s;
      return L(c, mm, c.opt, c.q, c.v, c.target);
    });
  auto paramFd = [&](auto set) {
    return fd([&](double e) { SimOptions o = c.opt; set(o, e); return L(c, m, o, c.q, c.v, c.target); });
  };
  const double gmu = paramFd([](SimOptions& o, double e) { o.contact.mu += e; });
  const double gkappa = paramFd([](SimOptions& o, double e) { o.contact.kappa += e; });
  const double gkp = paramFd([](SimOptions& o, double e) { o.actuator.kp += e; });
  const double gkd = paramFd([](SimOptions& o, double e) { o.actuator.kd += e; });

  const std::string what = robot + " " + toString(cm) +
                           (kneel       ? (bumps ? " kneeling on bumps" : " kneeling")
                            : inContact ? " contact"
                                        : " distance");
  if (kneel) {  // leg spheres press into the ground, and no foot touches it
    int legs = 0, feet = 0;
    for (int j = 0; j < m.nspheres(); ++j) {
      const bool in = test::sphereContact(st.m, st.ground, c.q, j).depth >= 0;
      (j < m.nfeet() ? feet : legs) += in;
    }
    EXPECT_GE(legs, 2) << what;
    EXPECT_EQ(feet, 0) << what;
  }
  if (st.forward.model != FixedContact::Soft) {
    auto fc = std::make_unique<Contacts<Quadruped>>();
    VecX qn, vn;
    st.step(c.q, c.v, c.target, qn, vn, *fc);
    const VecX p = test::sphereImpulses(*fc, m.nspheres());
    std::printf("active %d, normal impulses %.3g %.3g %.3g %.3g\n", fc->nc, p[0], p[3], p[6],
                p[9]);
  }
  std::printf("%-28s q %.1e v %.1e target %.1e mass %.1e | mu %.2e/%.2e kappa %.2e/%.2e kp "
              "%.2e/%.2e kd %.2e/%.2e\n",
              what.c_str(), relErr(adj.q, gq), relErr(adj.v, gv), relErr(adj.qTarget, gt),
              relErr(adj.params.mass, gmass), adj.params.mu, gmu, adj.params.kappa, gkappa,
              adj.params.kp, gkp, adj.params.kd, gkd);
  EXPECT_LT(relErr(adj.q, gq), tol) << what;
  EXPECT_LT(relErr(adj.v, gv), tol) << what;
  EXPECT_LT(relErr(adj.qTarget, gt), tol) << what;
  EXPECT_LT(relErr(adj.params.mass, gmass), tol) << what;
  const double scale = std::max({std::abs(gmu), std::abs(gkappa), std::abs(gkp), std::abs(gkd),
                                 1e-3 * gq.lpNorm<Eigen::Infinity>()});
  EXPECT_NEAR(adj.params.mu, gmu, tol * scale) << what;
  EXPECT_NEAR(adj.params.kappa, gkappa, tol * scale) << what;
  EXPECT_NEAR(adj.params.kp, gkp, tol * scale) << what;
  EXPECT_NEAR(adj.params.kd, gkd, tol * scale) << what;

  // Shape and inertia (system identification of geometry, ident/sysid.h): every foot's offset in
  // its body's frame, and every body's inertia entries m, h and Io (Io perturbed symmetrically, so
  // its adjoint pairs as Ib(r, c) + Ib(c, r)); the soft model's penalty coefficients, perturbed
  // relative to their size.
  auto withModel = [&](auto edit) {
    return fd([&](double e) { Model mm = m; edit(mm, e); return L(c, mm, c.opt, c.q, c.v, c.target); });
  };
  VecX gOff(3 * m.nspheres()), vOff(3 * m.nspheres());
  for (int f = 0; f < m.nspheres(); ++f)
    for (int k = 0; k < 3; ++k) {
      gOff[3 * f + k] = withModel([&](Model& mm, double e) {
        (f < mm.nfeet() ? mm.feet[f] : mm.legSpheres[f - mm.nfeet()]).offset[k] += e;
      });
      vOff[3 * f + k] = adj.params.footOffset[f][k];
    }
  const int pairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  VecX gIn(10 * m.nbodies()), vIn(10 * m.nbodies());
  for (int b = 0; b < m.nbodies(); ++b) {
    const InertiaBar& Ib = adj.params.inertia[b];
    gIn[10 * b] = withModel([&](Model& mm, double e) { mm.bodies[b].inertia.m += e; });
    vIn[10 * b] = Ib.m;
    for (int k = 0; k < 3; ++k) {
      gIn[10 * b + 1 + k] = withModel([&](Model& mm, double e) { mm.bodies[b].inertia.h[k] += e; });
      vIn[10 * b + 1 + k] = Ib.h[k];
    }
    for (int k = 0; k < 6; ++k) {
      const int r = pairs[k][0], cc = pairs[k][1];
      gIn[10 * b + 4 + k] = withModel([&](Model& mm, double e) {
        mm.bodies[b].inertia.Io(r, cc) += e;
        if (r != cc) mm.bodies[b].inertia.Io(cc, r) += e;
      });
      vIn[10 * b + 4 + k] = Ib.Io(r, cc) + (r != cc ? Ib.Io(cc, r) : 0.0);
    }
  }
  auto scaledFd = [&](auto set, double size) {
    const double h = eps * size;
    SimOptions op = c.opt, om = c.opt;
    set(op, h);
    set(om, -h);
    return (L(c, m, op, c.q, c.v, c.target) - L(c, m, om, c.q, c.v, c.target)) / (2 * h);
  };
  const double gsKp = scaledFd([](SimOptions& o, double e) { o.contact.softKp += e; }, c.opt.contact.softKp);
  const double gsKd = scaledFd([](SimOptions& o, double e) { o.contact.softKd += e; }, c.opt.contact.softKd);
  const double gsKf = scaledFd([](SimOptions& o, double e) { o.contact.softKf += e; }, c.opt.contact.softKf);
  std::printf("%-28s foot offsets %.1e (|g| %.2e), inertia %.1e (|g| %.2e) | soft kp %.3e/%.3e "
              "kd %.3e/%.3e kf %.3e/%.3e\n",
              what.c_str(), relErr(vOff, gOff), gOff.lpNorm<Eigen::Infinity>(), relErr(vIn, gIn),
              gIn.lpNorm<Eigen::Infinity>(), adj.params.softKp, gsKp, adj.params.softKd, gsKd,
              adj.params.softKf, gsKf);
  EXPECT_LT(relErr(vOff, gOff), tol) << what;
  EXPECT_LT(relErr(vIn, gIn), tol) << what;
  EXPECT_NEAR(adj.params.softKp, gsKp, tol * std::max(std::abs(gsKp), 1e-12)) << what;
  EXPECT_NEAR(adj.params.softKd, gsKd, tol * std::max(std::abs(gsKd), 1e-12)) << what;
  EXPECT_NEAR(adj.params.softKf, gsKf, tol * std::max(std::abs(gsKf), 1e-12)) << what;
  if (cm == ContactModel::Soft && inContact) {
    EXPECT_GT(std::abs(gsKp), 0.0) << what;
  }
  if (inContact) {
    EXPECT_GT(gOff.lpNorm<Eigen::Infinity>(), 0.0) << what;
  }
}

}  // namespace

TEST(StepVjp, MatchesFiniteDifferencesOneStep) {
  for (const char* robot : {"anymal", "quadruped"})
    for (ContactModel cm : {ContactModel::Smoothed, ContactModel::Soft, ContactModel::Hard})
      for (bool inContact : {true, false}) checkCase(robot, cm, inContact, 1e-5);
}

// Feet sliding at 2 m/s: the friction-cone branch of the solver and the mu gradient.
TEST(StepVjp, MatchesFiniteDifferencesWhileSliding) {
  for (const char* robot : {"anymal", "quadruped"})
    for (ContactModel cm : {ContactModel::Smoothed, ContactModel::Soft, ContactModel::Hard})
      checkCase(robot, cm, true, 1e-5, 2.0);
}

// straight_through: the forward pass is the hard model's, bit for bit.
TEST(StraightThrough, ForwardIsTheHardModel) {
  Robot r = loadRobot("anymal");
  for (auto& j : r.model.joints) j.armature = 0.1;
  SimOptions hard;
  hard.dt = 0.005;
  hard.contact.model = ContactModel::Hard;
  hard.actuator.kp = 85;
  hard.actuator.kd = 0.6;
  SimOptions st = hard;
  st.contact.model = ContactModel::StraightThrough;
  const Stages s1(r.model, hard), s2(r.model, st);
  auto fc1 = std::make_unique<Contacts<Quadruped>>(), fc2 = std::make_unique<Contacts<Quadruped>>();
  VecX q1 = r.standingConfiguration(), v1 = VecX::Zero(r.model.nv());
  q1[2] += 0.05;
  VecX q2 = q1, v2 = v1, qn(q1.size()), vn(v1.size());
  for (int k = 0; k < 300; ++k) {
    s1.step(q1, v1, r.defaultJointPos, qn, vn, *fc1);
    q1 = qn, v1 = vn;
    s2.step(q2, v2, r.defaultJointPos, qn, vn, *fc2);
    q2 = qn, v2 = vn;
  }
  EXPECT_EQ(q1, q2);
  EXPECT_EQ(v1, v2);
  EXPECT_GT(fc1->nc, 0);  // it did land
}

// straight_through's backward is the smoothed model's derivative at the hard trajectory's state:
// before touchdown the hard model sees no ground, straight_through does.
TEST(StraightThrough, GradientSeesTheGroundBeforeContact) {
  Case c = makeCase("quadruped", ContactModel::Hard, false, 5);
  const Model& m = c.robot.model;
  // Loss: the base's vertical velocity after the step; input: its height.
  VecX gq = VecX::Zero(m.nq()), gv = VecX::Zero(m.nv());
  gv[2] = 1;
  auto dvz_dz = [&](ContactModel cm) {
    SimOptions o = c.opt;
    o.contact.model = cm;
    StageAdjoint a;
    Stages(m, o).vjp(c.q, c.v, c.target, gq, gv, a);
    return a.q[2];
  };
  const double hard = dvz_dz(ContactModel::Hard);
  const double st = dvz_dz(ContactModel::StraightThrough);
  const double smoothed = dvz_dz(ContactModel::Smoothed);
  std::printf("d vz'/d z: hard %.3e, straight_through %.3e, smoothed %.3e\n", hard, st, smoothed);
  EXPECT_NEAR(hard, 0.0, 1e-12);  // in flight: height does not change the velocity
  EXPECT_LT(st, -1e-3);           // lower start -> more upward push from the ground ahead
  EXPECT_EQ(st, smoothed);
}

// Straight-through terrain: the forward runs on the terrain, the backward is the step's derivative
// on the smoothed copy at the same state; near a step edge the two derivatives differ.
TEST(StraightThroughTerrain, BackwardIsTheSmoothedTerrainsDerivative) {
  Robot r = loadRobot("anymal");
  for (auto& j : r.model.joints) j.armature = 0.1;
  auto sharp = std::make_shared<HeightField>();
  sharp->nx = sharp->ny = 81, sharp->spacing = 0.05, sharp->originX = sharp->originY = -2;
  for (int iy = 0; iy < 81; ++iy)
    for (int ix = 0; ix < 81; ++ix) sharp->heights.push_back(-2 + ix * 0.05 >= 0.35 ? 0.08 : 0.0);
  auto smooth = std::make_shared<const HeightField>(smoothHeightField(*sharp, 0.1));
  SimOptions forward;
  forward.dt = 0.005;
  forward.contact.model = ContactModel::Smoothed;
  forward.contact.terrain = sharp;
  forward.actuator.kp = 85;
  forward.actuator.kd = 0.6;
  SimOptions st = forward, onSmooth = forward;
  st.contact.backwardTerrain = smooth;
  onSmooth.contact.terrain = smooth;
  VecX q = r.standingConfiguration(), v = VecX::Zero(r.model.nv());
  q[2] += 0.02;
  const Stages sForward(r.model, forward), sSt(r.model, st), sOnSmooth(r.model, onSmooth);
  VecX qa(q.size()), va(v.size()), qb(q.size()), vb(v.size());
  sForward.step(q, v, r.defaultJointPos, qa, va);
  sSt.step(q, v, r.defaultJointPos, qb, vb);
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(va, vb);
  const VecX gq = VecX::Ones(q.size()), gv = VecX::Ones(v.size());
  StageAdjoint a, b, c;
  sSt.vjp(q, v, r.defaultJointPos, gq, gv, a);
  sOnSmooth.vjp(q, v, r.defaultJointPos, gq, gv, b);
  sForward.vjp(q, v, r.defaultJointPos, gq, gv, c);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(a.qTarget, b.qTarget);
  EXPECT_GT((a.q - c.q).norm(), 1e-3 * c.q.norm());
}

// The knees and shank tubes on the ground, flat and bumpy: the leg spheres' rows of the contact
// problem, their contact frames on a height field and their offsets' adjoints.
TEST(StepVjp, MatchesFiniteDifferencesKneeling) {
  for (bool bumps : {false, true})
    for (ContactModel cm : {ContactModel::Smoothed, ContactModel::Soft, ContactModel::Hard})
      checkCase("anymal", cm, true, 1e-5, 0, true, bumps);
}

// The same on the bumps with each sphere touching the surface at its closest point
// (sim::TerrainContact::Closest): the touch point's adjoint through the minimum.
TEST(StepVjp, MatchesFiniteDifferencesKneelingClosestPoint) {
  for (ContactModel cm : {ContactModel::Smoothed, ContactModel::Soft, ContactModel::Hard})
    checkCase("anymal", cm, true, 1e-5, 0, true, true, true);
}

// The same on the bumps joined by the monotone interpolant (its limited slopes, zero cross
// derivative), with the sphere touching under its centre and at its closest point.
TEST(StepVjp, MatchesFiniteDifferencesKneelingMonotoneSurface) {
  for (bool closest : {false, true})
    for (ContactModel cm : {ContactModel::Smoothed, ContactModel::Soft, ContactModel::Hard})
      checkCase("anymal", cm, true, 1e-5, 0, true, true, closest, Interpolant::Monotone);
}
