// The same height field in MuJoCo (an hfield geom built by mujoco/mujoco_model.h) and in our
// simulator (the stages, sim/moreau_step.h): the surface heights, and a robot holding its pose with the same PD law dropped onto
// an incline and onto bumps, which must follow the same trajectory up to the two contact models'
// difference (MuJoCo's soft constraints sink a few millimetres; ours do not) and come to rest at
// the same place.
#ifdef DIFFLOCO_WITH_MUJOCO

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "mujoco/joint_order.h"
#include "mujoco/mujoco_compat.h"
#include "mujoco/mujoco_model.h"
#include "robots/robot.h"
#include "sim/actuator.h"
#include "sim/terrain.h"
#include "tests/sim/stages.h"

namespace {

using namespace diffloco;
using sim::Vec3;
using sim::VecX;

std::shared_ptr<sim::HeightField> field(const std::function<double(double, double)>& h) {
  auto hf = std::make_shared<sim::HeightField>();
  hf->spacing = 0.05;
  hf->nx = 121, hf->ny = 81;
  hf->originX = -3, hf->originY = -2;
  for (int iy = 0; iy < hf->ny; ++iy)
    for (int ix = 0; ix < hf->nx; ++ix)
      hf->heights.push_back(h(hf->originX + ix * hf->spacing, hf->originY + iy * hf->spacing));
  return hf;
}

struct Trajectory {
  std::vector<Vec3> position;  // base position every 10 ms
  std::vector<double> pitch;   // base pitch [rad]
};

double pitchOf(const VecX& q) {
  const sim::Quat r(q[3], q[4], q[5], q[6]);
  const Vec3 x = r * Vec3::UnitX();
  return std::atan2(x.z(), x.head<2>().norm());
}

// The robot 5 cm above the surface under its base, tilted by `pitch0`, PD holding the default
// pose (or, `kneel`, thighs down and shanks folded level, its lowest sphere 1 cm above the
// surface: it lands on its knees and shank tubes, sim::Model::legSpheres), 3 s.
Trajectory run(const Robot& robot, const sim::HeightField& hf, double pitch0, bool mujoco,
               bool kneel = false) {
  sim::Model model = robot.model;
  for (auto& j : model.joints) j.armature = robot.armature;
  const double dt = 0.002;
  sim::SimOptions opt;
  opt.dt = dt;
  opt.contact.model = sim::ContactModel::Hard;
  opt.contact.iterations = 50;
  opt.contact.mu = 0.8;
  opt.actuator = robot.actuator;
  opt.actuator.kd = 4;  // well damped: the robot comes to rest within the run
  auto terrain = std::make_shared<sim::HeightField>(hf);
  opt.contact.terrain = terrain;

  VecX q = robot.standingConfiguration(), v = VecX::Zero(model.nv());
  const sim::Quat rot(Eigen::AngleAxisd(-pitch0, Vec3::UnitY()));
  q.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
  q[2] += sim::groundHeight(terrain.get(), q[0], q[1]) + 0.05;
  if (kneel) {
    for (int leg = 0; leg < 4; ++leg) {
      q[7 + 3 * leg + 1] = 0;
      q[7 + 3 * leg + 2] = leg < 2 ? -1.57 : 1.57;
    }
    const sim::StepModel<sim::Quadruped> fm = sim::toStepModel<sim::Quadruped>(model);
    const sim::HeightFieldView ground = sim::toView(terrain.get());
    double lowest = 1e9;
    for (int j = 0; j < model.nspheres(); ++j)
      lowest = std::min(lowest, -test::sphereContact(fm, ground, q, j).depth);
    q[2] += 0.01 - lowest;
  }
  const VecX target = q.tail(model.nj());

  Trajectory t;
  const int steps = static_cast<int>(std::lround(3.0 / dt));
  VecX tau(model.nj());
  if (!mujoco) {
    const test::Stages<sim::Quadruped> st(model, opt);
    VecX qn(q), vn(v);
    for (int k = 0; k < steps; ++k) {
      EXPECT_TRUE(st.step(q, v, target, qn, vn));
      q = qn, v = vn;
      if ((k + 1) % 5 == 0) t.position.push_back(q.head<3>()), t.pitch.push_back(pitchOf(q));
    }
    return t;
  }
  mj::MjcfOptions mo;
  mo.timestep = dt;
  mo.friction = opt.contact.mu;
  mo.terrain = terrain.get();
  // MuJoCo's hfield gives a foot one contact per triangle it touches; with the pyramidal cone
  // and its soft friction constraints, two or three contacts of slightly different normals let
  // the feet creep apart and the robot sinks (4.8 cm in 1.5 s on the bumps). The elliptic cone
  // with no-slip iterations holds them, as our Coulomb law does.
  mo.cone = "elliptic";
  mo.noslipIterations = 10;
  mj::MujocoModel mm(mj::toMjcf(model, mo));
  mj::loadHeightField(mm.m, *terrain);
  if (const char* dump = std::getenv("DEBUG_TERRAIN_DUMP")) {
    FILE* f = std::fopen(dump, "w");
    std::fputs(mj::toMjcf(model, mo).c_str(), f);
    std::fclose(f);
    f = std::fopen((std::string(dump) + ".h").c_str(), "w");
    for (double h : terrain->heights) std::fprintf(f, "%.17g\n", h);
    std::fclose(f);
    f = std::fopen((std::string(dump) + ".q").c_str(), "w");
    for (int i = 0; i < model.nq(); ++i) std::fprintf(f, "%.17g\n", q[i]);
    std::fclose(f);
  }
  const std::vector<int> order = mj::mujocoJointOrder(model);
  mj::toMujocoState(model, q, v, mm.d->qpos, mm.d->qvel);
  for (int k = 0; k < steps; ++k) {
    mj::fromMujocoState(model, mm.d->qpos, mm.d->qvel, q, v);
    sim::actuatorTorques(model, opt.actuator, target, q, v, tau);
    for (int j = 0; j < model.nj(); ++j) mm.d->qfrc_applied[6 + j] = tau[order[j]];
    mj_step(mm.m, mm.d);
    if ((k + 1) % 5 == 0) {
      mj::fromMujocoState(model, mm.d->qpos, mm.d->qvel, q, v);
      t.position.push_back(q.head<3>()), t.pitch.push_back(pitchOf(q));
    }
  }
  return t;
}

void expectSameTrajectory(const char* what, const Robot& robot, const sim::HeightField& hf,
                          double pitch0, bool kneel = false) {
  const Trajectory ours = run(robot, hf, pitch0, false, kneel),
                   theirs = run(robot, hf, pitch0, true, kneel);
  ASSERT_EQ(ours.position.size(), theirs.position.size());
  double dz = 0, dxy = 0, dpitch = 0;
  for (size_t k = 0; k < ours.position.size(); ++k) {
    dz = std::max(dz, std::abs(ours.position[k].z() - theirs.position[k].z()));
    dxy = std::max(dxy, (ours.position[k] - theirs.position[k]).head<2>().norm());
    dpitch = std::max(dpitch, std::abs(ours.pitch[k] - theirs.pitch[k]));
  }
  if (std::getenv("DEBUG_TERRAIN"))
    for (size_t k = 0; k < ours.position.size(); k += 10)
      std::printf("t %.2f ours %.4f %.4f %.4f %.2f  mj %.4f %.4f %.4f %.2f\n", (k + 1) * 0.01,
                  ours.position[k].x(), ours.position[k].y(), ours.position[k].z(),
                  ours.pitch[k] * 57.3, theirs.position[k].x(), theirs.position[k].y(),
                  theirs.position[k].z(), theirs.pitch[k] * 57.3);
  const Vec3 endOurs = ours.position.back(), endTheirs = theirs.position.back();
  std::printf("%s: base z %.4f (ours) %.4f (MuJoCo), max |dz| %.4f m, max |dxy| %.4f m, "
              "max |dpitch| %.2f deg; at rest xy moved %.4f / %.4f m in the last 0.5 s\n",
              what, endOurs.z(), endTheirs.z(), dz, dxy, dpitch * 180 / M_PI,
              (endOurs - ours.position[ours.position.size() - 51]).head<2>().norm(),
              (endTheirs - theirs.position[theirs.position.size() - 51]).head<2>().norm());
  EXPECT_LT(dz, 0.005) << what;
  EXPECT_LT(dxy, 0.005) << what;
  EXPECT_LT(dpitch, 0.25 * M_PI / 180) << what;
  // Both at rest (the feet stick: mu 0.8 is above every slope here), up to a slow sway.
  EXPECT_LT((endOurs - ours.position[ours.position.size() - 51]).norm(), 3e-3) << what;
  EXPECT_LT((endTheirs - theirs.position[theirs.position.size() - 51]).norm(), 3e-3) << what;
}

}  // namespace

// MuJoCo's surface (a ray cast down onto the hfield) against ours: equal at the samples, within
// the two interpolants' difference between them (MuJoCo: two triangles per cell).
TEST(MujocoTerrain, SurfaceHeightsMatchMujocoRays) {
  const auto hf = field([](double x, double y) {
    return 0.04 * std::sin(2 * M_PI * x / 1.6) * std::cos(2 * M_PI * y / 1.2) + 0.1 * x - 0.03 * y;
  });
  const Robot robot = loadRobot("anymal");
  mj::MjcfOptions mo;
  mo.terrain = hf.get();
  mj::MujocoModel mm(mj::toMjcf(robot.model, mo));
  mj::loadHeightField(mm.m, *hf);
  mj_forward(mm.m, mm.d);
  const mjtByte groups[6] = {1, 1, 1, 1, 1, 1};
  auto rayHeight = [&](double x, double y) {
    const mjtNum from[3] = {x, y, 5.0}, down[3] = {0, 0, -1};
    int geom = -1;
    const mjtNum dist = mj::ray(mm.m, mm.d, from, down, groups, true, -1, &geom);
    EXPECT_EQ(geom, mj_name2id(mm.m, mjOBJ_GEOM, "floor"));
    return 5.0 - dist;
  };
  double atSamples = 0, between = 0;
  for (int iy = 5; iy < hf->ny - 5; iy += 7)
    for (int ix = 5; ix < hf->nx - 5; ix += 9) {
      const double x = hf->originX + ix * hf->spacing, y = hf->originY + iy * hf->spacing;
      atSamples = std::max(atSamples, std::abs(rayHeight(x, y) - hf->at(ix, iy)));
      const double xm = x + 0.37 * hf->spacing, ym = y + 0.61 * hf->spacing;
      between = std::max(between, std::abs(rayHeight(xm, ym) - sim::groundHeight(hf.get(), xm, ym)));
    }
  std::printf("|MuJoCo ray - ours|: %.2e m at samples, %.2e m between them\n", atSamples, between);
  EXPECT_LT(atSamples, 1e-6);  // MuJoCo stores heights as float
  EXPECT_LT(between, 1e-3);
}

// Beyond the grid our surface continues the edge samples; MuJoCo gets a box beyond each level
// side (and corner between two), at the side's height, and nothing beyond a side that is not
// level.
TEST(MujocoTerrain, GroundBeyondTheGridContinuesLevelSides) {
  const Robot robot = loadRobot("anymal");
  auto rayHeight = [](const mj::MujocoModel& mm, double x, double y, int* geom) {
    const mjtByte ground[6] = {1, 0, 0, 0, 0, 0};
    const mjtNum from[3] = {x, y, 5.0}, down[3] = {0, 0, -1};
    return 5.0 - mj::ray(mm.m, mm.d, from, down, ground, true, -1, geom);
  };
  // A bump inside a level field (every side at 0.1 m): ground everywhere around the grid.
  const auto bump = field([](double x, double y) {
    const double r2 = x * x + y * y;
    return 0.1 + (r2 < 1 ? 0.04 * (1 - r2) * (1 - r2) : 0.0);
  });
  mj::MjcfOptions mo;
  mo.terrain = bump.get();
  mj::MujocoModel level(mj::toMjcf(robot.model, mo));
  mj::loadHeightField(level.m, *bump);
  mj_forward(level.m, level.d);
  for (const auto& [x, y] : std::vector<std::pair<double, double>>{
           {-3.5, 0.3}, {3.2, -1}, {0.5, -2.7}, {-1, 2.1}, {-40, -30}, {4, 3}, {3.01, 2.01}}) {
    int geom = -1;
    const double h = rayHeight(level, x, y, &geom);
    EXPECT_GE(geom, 0) << x << " " << y;
    EXPECT_NEAR(h, sim::groundHeight(bump.get(), x, y), 1e-9) << x << " " << y;
  }
  // The incline h = 0.1 x - 0.3: its sides at x = -3 and x = 3 are level (at -0.6 and 0), its
  // sides along y are not and end at the grid.
  const auto incline = field([](double x, double) { return 0.1 * x - 0.3; });
  mo.terrain = incline.get();
  mj::MujocoModel sloped(mj::toMjcf(robot.model, mo));
  mj::loadHeightField(sloped.m, *incline);
  mj_forward(sloped.m, sloped.d);
  for (const auto& [x, y] : std::vector<std::pair<double, double>>{{-3.5, 0.3}, {3.2, -1}}) {
    int geom = -1;
    const double h = rayHeight(sloped, x, y, &geom);
    EXPECT_GE(geom, 0) << x << " " << y;
    EXPECT_NEAR(h, sim::groundHeight(incline.get(), x, y), 1e-6) << x << " " << y;
  }
  for (const auto& [x, y] :
       std::vector<std::pair<double, double>>{{0.5, -2.7}, {-1, 2.1}, {4, 3}}) {
    int geom = -1;
    rayHeight(sloped, x, y, &geom);
    EXPECT_EQ(geom, -1) << x << " " << y;
  }
}

TEST(MujocoTerrain, RobotDroppedOnAnInclineAgrees) {
  const Robot robot = loadRobot("anymal");
  const auto hf = field([](double x, double y) { return 0.15 * x + 0.05 * y; });
  expectSameTrajectory("anymal on a 15 % / 5 % incline", robot, *hf, std::atan(0.15));
}

TEST(MujocoTerrain, RobotDroppedOnBumpsAgrees) {
  const Robot robot = loadRobot("anymal");
  const auto hf = field([](double x, double y) {
    return 0.04 * std::sin(2 * M_PI * x / 1.6) * std::cos(2 * M_PI * y / 1.2);
  });
  expectSameTrajectory("anymal on 4 cm bumps", robot, *hf, 0.0);
}

// The knee and shank-tube spheres are MuJoCo geoms too (mujoco/mujoco_model.h): the robot
// kneeling on an incline rests on them in both simulators alike.
TEST(MujocoTerrain, RobotKneelingOnAnInclineAgrees) {
  const Robot robot = loadRobot("anymal");
  ASSERT_FALSE(robot.model.legSpheres.empty());
  const auto hf = field([](double x, double y) { return 0.1 * x + 0.05 * y; });
  expectSameTrajectory("anymal kneeling on a 10 % / 5 % incline", robot, *hf, std::atan(0.1), true);
}

#endif  // DIFFLOCO_WITH_MUJOCO
