// System identification (ident/sysid.h): the cube model, the trajectory CSV format and its errors,
// the loss gradient through the hand-written VJP against central differences of the loss, and the
// issue's bar in a fast version: a cube's side length and friction recovered within 5 % from
// synthetic hard-contact tosses, starting 40 % off in both directions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ident/sysid.h"
#include "sim/stage_step.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;
using sysid::DataError;

namespace {

std::string writeFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

// The message of the DataError that reading `text` as a cube trajectory throws ("" if none).
std::string readError(const std::string& dir, const std::string& text) {
  const std::string p = writeFile(dir, "bad.csv", text);
  try {
    sysid::readTrajectories(p, sysid::cubeModel(0.1, 0.37));
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

const char* kHeader = "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz\n";
const char* kRow0 = "0,0,0,0.3,1,0,0,0,0.1,0,-1,0,0,0\n";
const char* kRow1 = "0.005,0,0,0.295,1,0,0,0,0.1,0,-1.05,0,0,0\n";

}  // namespace

TEST(Sysid, CubeModel) {
  const double s = 0.12, m = 0.5, r = 2e-3;
  const sim::Model model = sysid::cubeModel(s, m, r);
  EXPECT_EQ(model.nq(), 7);
  EXPECT_EQ(model.nv(), 6);
  ASSERT_EQ(model.nfeet(), 8);
  for (int k = 0; k < 8; ++k) {
    EXPECT_DOUBLE_EQ(model.feet[k].radius, r);
    for (int a = 0; a < 3; ++a)
      EXPECT_NEAR(model.feet[k].offset[a], sysid::cubeCornerSign(k, a) * (s / 2 - r), 1e-15);
  }
  EXPECT_DOUBLE_EQ(model.totalMass(), m);
  EXPECT_TRUE(model.bodies[0].inertia.Io.isApprox(m * s * s / 6 * sim::Mat3::Identity(), 1e-14));
  // setCubeShape gives the same model as building it anew.
  sim::Model other = sysid::cubeModel(0.05, 1.0, r);
  sysid::setCubeShape(other, s, m, r);
  for (int k = 0; k < 8; ++k) EXPECT_TRUE(other.feet[k].offset.isApprox(model.feet[k].offset));
  EXPECT_TRUE(other.bodies[0].inertia.Io.isApprox(model.bodies[0].inertia.Io));
  // Resting on a face under hard contact: the centre stays at s / 2 (to within the one step of
  // travel that the mid-step contact activation lets it sink).
  sim::SimOptions opt;
  opt.dt = 0.005;
  opt.contact.model = sim::ContactModel::Hard;
  sim::StageStepper stepper(model, opt);
  sim::VecX q = sim::neutralConfiguration(model), v = sim::VecX::Zero(6), qn(7), vn(6);
  q[2] = s / 2 + 1e-3;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(stepper.step(q, v, sim::VecX::Zero(0), qn, vn));
    q = qn, v = vn;
  }
  EXPECT_NEAR(q[2], s / 2, 1e-3);
  EXPECT_LT(v.norm(), 1e-6);
}

TEST(Sysid, CsvRoundTripAndTrajIdColumn) {
  const diffloco::testing::ScratchDir scratch("diffloco_test_sysid_csv");
  const std::string dir = scratch.string();
  sysid::System sys = sysid::cubeSystem();
  sysid::GenerateOptions g;
  g.count = 2;
  g.duration = 0.1;
  const auto trs = sysid::generate(sys, g);
  ASSERT_EQ(trs.size(), 2u);
  EXPECT_EQ(trs[0].rows(), 21);
  sysid::writeTrajectory(dir + "/a.csv", sys.model, trs[0]);
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.csv.tmp"));
  const auto back = sysid::readTrajectories(dir + "/a.csv", sys.model);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_NEAR(back[0].dt, 0.005, 1e-12);
  for (int r = 0; r < trs[0].rows(); ++r) {
    EXPECT_NEAR(back[0].t[r], trs[0].t[r], 1e-12);
    EXPECT_LT((back[0].q[r] - trs[0].q[r]).norm(), 1e-9);
    EXPECT_LT((back[0].v[r] - trs[0].v[r]).norm(), 1e-9);
  }
  // Two trajectories in one file, told apart by `traj`, columns in another order, comments.
  const std::string two = writeFile(
      dir, "two.csv",
      std::string("# two tosses\ntraj,t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,extra\n") +
          "a,0,0,0,0.3,1,0,0,0,0,0,0,0,0,0,7\na,0.01,0,0,0.3,1,0,0,0,0,0,0,0,0,0,7\n"
          "b,5,0,0,0.3,1.05,0,0,0,0,0,0,0,0,0,7\nb,5.01,0,0,0.3,1,0,0,0,0,0,0,0,0,0,7\n"
          "b,5.02,0,0,0.3,1,0,0,0,0,0,0,0,0,0,7\n");
  const auto t2 = sysid::readTrajectories(two, sys.model);
  ASSERT_EQ(t2.size(), 2u);
  EXPECT_EQ(t2[0].rows(), 2);
  EXPECT_EQ(t2[1].rows(), 3);
  EXPECT_NE(t2[1].source.find("traj b"), std::string::npos);
  EXPECT_NEAR(t2[1].dt, 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(t2[1].q[0][3], 1.0);  // quaternions are normalised on reading
  // A robot's columns.
  const Robot robot = loadRobot("anymal");
  const auto cols = sysid::csvColumns(robot.model);
  EXPECT_EQ(cols.size(), 1u + 19 + 18 + 12);
  EXPECT_EQ(cols[8], "q_" + robot.model.joints[0].name);
  EXPECT_EQ(cols.back(), "target_" + robot.model.joints.back().name);
}

TEST(Sysid, CsvErrorsNameFileLineAndColumn) {
  const diffloco::testing::ScratchDir scratch("diffloco_test_sysid_errors");
  const std::string dir = scratch.string();
  const std::string f = dir + "/bad.csv";
  std::string e = readError(dir, "t,x,y,z,qw,qx,qy,qz,vx,vy,wx,wy,wz\n0,0,0,0,1,0,0,0,0,0,0,0,0\n");
  EXPECT_NE(e.find(f + ":1: missing column(s) vz"), std::string::npos) << e;
  e = readError(dir, std::string("# comment\n") + kHeader + kRow0 +
                         "0.005,0,0,0.295,1,0,0,0,0.1,0,nan,0,0,0\n");
  EXPECT_NE(e.find(f + ":4: column 11 'vz': NaN"), std::string::npos) << e;
  e = readError(dir, std::string(kHeader) + kRow0 + "0.005,0,0,0.295,1,0,0,0,0.1,0,abc,0,0,0\n");
  EXPECT_NE(e.find(f + ":3: column 11 'vz': not a number: \"abc\""), std::string::npos) << e;
  e = readError(dir, std::string(kHeader) + kRow0 + kRow1 + "0.004,0,0,0.29,1,0,0,0,0,0,0,0,0,0\n");
  EXPECT_NE(e.find(f + ":4: column 1 't': time 0.004 does not increase"), std::string::npos) << e;
  e = readError(dir, std::string(kHeader) + kRow0 + kRow1 + "0.02,0,0,0.29,1,0,0,0,0,0,0,0,0,0\n");
  EXPECT_NE(e.find(f + ":4: column 1 't': time step 0.015"), std::string::npos) << e;
  e = readError(dir, std::string(kHeader) + kRow0 + "0.005,0,0,0.295,1,0,0,0,0.1,0,-1.05,0,0\n");
  EXPECT_NE(e.find(f + ":3: 13 fields, the header (line 1) has 14"), std::string::npos) << e;
  e = readError(dir, std::string(kHeader) + kRow0 + "0.005,0,0,0.295,0.5,0,0,0,0.1,0,-1,0,0,0\n");
  EXPECT_NE(e.find(f + ":3: columns 5-8 (qw, qx, qy, qz): quaternion norm 0.5"), std::string::npos)
      << e;
  e = readError(dir, std::string(kHeader) + kRow0);
  EXPECT_NE(e.find("has 1 row(s)"), std::string::npos) << e;
  e = readError(dir, std::string("traj,") + kHeader + "a," + kRow0 + "a," + kRow1 + "b," + kRow0 +
                         "b," + kRow1 + "a," + kRow0);
  EXPECT_NE(e.find(f + ":6: column 1 'traj': trajectory 'a' continues after another one"),
            std::string::npos)
      << e;
  e = readError(dir, "");
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  try {
    sysid::readTrajectories(dir + "/missing.csv", sysid::cubeModel(0.1, 0.37));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("missing.csv: cannot open"), std::string::npos);
  }
  // Files with different time steps.
  const std::string a = writeFile(dir, "a.csv", std::string(kHeader) + kRow0 + kRow1);
  const std::string b = writeFile(dir, "b.csv", std::string(kHeader) + kRow0 +
                                                    "0.01,0,0,0.29,1,0,0,0,0,0,-1,0,0,0\n");
  try {
    sysid::readTrajectories({a, b}, sysid::cubeModel(0.1, 0.37));
    ADD_FAILURE() << "no error for mixed time steps";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("b.csv: time step 0.01 differs from"),
              std::string::npos)
        << err.what();
  }
}

TEST(Sysid, ParameterNames) {
  sysid::System cube = sysid::cubeSystem();
  EXPECT_EQ(cube.expand({"side", "mass", "mu"}),
            (std::vector<std::string>{"side", "mass:cube", "mu"}));
  EXPECT_THROW(cube.expand({"kp"}), std::invalid_argument);  // a free body has no PD gains
  EXPECT_THROW(cube.set("side", -1), std::invalid_argument);
  const auto kv = sysid::parseAssignments({"side=0.06, mu=0.5", "mass=2"});
  ASSERT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv[1].first, "mu");
  EXPECT_DOUBLE_EQ(kv[1].second, 0.5);
  EXPECT_THROW(sysid::parseAssignments({"side"}), std::invalid_argument);
  EXPECT_THROW(sysid::parseAssignments({"side=abc"}), std::invalid_argument);
  const sysid::System robot = sysid::robotSystem(loadRobot("quadruped"));
  EXPECT_EQ(robot.expand({"mass"}).size(), robot.model.bodies.size());
  EXPECT_GE(robot.index("kp"), 0);
}

// The loss gradient (rolloutVjp with per-step adjoints, the quaternion residual, the chain rule to
// side = corner offsets + inertia m s^2 / 6, and to the scaled masses) against central differences
// of the loss, on models whose forward pass is the one differentiated (smoothed, soft).
TEST(Sysid, LossGradientMatchesFiniteDifferences) {
  auto check = [](sysid::System sys, const std::vector<sysid::Trajectory>& data,
                  const std::vector<std::string>& names, const sysid::FitOptions& o) {
    const auto e = sysid::evaluate(sys, data, names, o);
    EXPECT_GT(e.loss, 0);
    for (size_t i = 0; i < names.size(); ++i) {
      const double p = sys.get(names[i]), h = 1e-6 * p;
      sysid::System a = sys, b = sys;
      a.set(names[i], p + h);
      b.set(names[i], p - h);
      const double fd = (sysid::evaluate(a, data, {}, o).loss - sysid::evaluate(b, data, {}, o).loss) /
                        (2 * h);
      std::printf("%-10s %-10s vjp %+.6e  fd %+.6e\n", sys.name.c_str(), names[i].c_str(),
                  e.grad[i], fd);
      EXPECT_NEAR(e.grad[i], fd, 1e-4 * std::abs(fd) + 1e-7 * e.loss / p)
          << sys.name << " " << names[i];
    }
  };
  sysid::FitOptions o;
  o.horizon = 5;
  o.stride = 3;
  {  // Cube tosses (hard data), fitted with the smoothed and the soft model at a wrong side.
    sysid::System sys = sysid::cubeSystem();
    sysid::GenerateOptions g;
    g.count = 2;
    g.duration = 0.4;
    g.seed = 5;
    const auto data = sysid::generate(sys, g);
    sys.set("side", 0.11);
    sys.set("mu", 0.4);
    sys.opt.contact.model = sim::ContactModel::Smoothed;
    check(sys, data, {"side", "mu", "mass:cube", "kappa"}, o);
    sys.opt.contact.model = sim::ContactModel::Soft;
    sys.opt.contact.softSubsteps = 5;
    check(sys, data, {"side", "mu", "mass:cube", "soft_kp", "soft_kd", "soft_kf"}, o);
  }
  {  // A robot dropped with moving joint targets: PD gains and masses.
    sysid::System sys = sysid::robotSystem(loadRobot("quadruped"));
    sysid::GenerateOptions g;
    g.count = 1;
    g.duration = 0.3;
    g.dt = 0.01;
    const auto data = sysid::generate(sys, g);
    sys.set("kp", 25);
    sys.set("mass:" + sys.model.bodies[0].name, 7);
    sys.opt.contact.model = sim::ContactModel::Smoothed;
    check(sys, data, {"kp", "kd", "mu", "mass:" + sys.model.bodies[0].name,
                      "mass:" + sys.model.bodies[3].name},
          o);
  }
}

// A model of neither size class (here ANYmal with a foot less) is an error naming why, not a
// slower second simulator.
TEST(Sysid, AModelOfNoSizeClassIsAnError) {
  Robot robot = loadRobot("anymal");
  robot.model.feet.pop_back();
  const sysid::System sys = sysid::robotSystem(robot);
  sysid::GenerateOptions g;
  g.count = 1;
  g.duration = 0.05;
  try {
    sysid::generate(sys, g);
    FAIL() << "generate accepted a model of no size class";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fits no size class"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Quadruped"), std::string::npos) << e.what();
  }
}

// The orientation residual does not see the quaternion's sign.
TEST(Sysid, LossIgnoresQuaternionSign) {
  sysid::System sys = sysid::cubeSystem();
  sysid::GenerateOptions g;
  g.count = 1;
  g.duration = 0.2;
  auto data = sysid::generate(sys, g);
  sys.set("side", 0.09);
  sysid::FitOptions o;
  const double l0 = sysid::evaluate(sys, data, {}, o).loss;
  for (auto& q : data[0].q) q.segment<4>(3) *= -1;
  EXPECT_NEAR(sysid::evaluate(sys, data, {}, o).loss, l0, 1e-12 * l0);
}

// The bar, fast version: 4 tosses of 0.5 s simulated with hard contact and noised; fitted
// with straight_through (hard forward, smoothed gradient) from side and mu 40 % too small or too
// large, in all four combinations: both within 5 % of the truth.
TEST(Sysid, RecoversCubeSideAndFrictionFromTosses) {
  sysid::System truth = sysid::cubeSystem(0.1, 0.37, 0.3);
  sysid::GenerateOptions g;
  g.count = 4;
  g.duration = 0.5;
  g.seed = 3;
  const auto data = sysid::generate(truth, g);
  sysid::FitOptions o;
  o.stride = 2;
  o.iterations = 60;
  for (double fs : {0.6, 1.4})
    for (double fm : {0.6, 1.4}) {
      sysid::System sys = sysid::cubeSystem(0.1 * fs, 0.37, 0.3 * fm);
      ASSERT_EQ(sys.opt.contact.model, sim::ContactModel::StraightThrough);
      const auto r = sysid::fit(sys, data, {"side", "mu"}, o);
      std::printf("start side %.3f mu %.3f -> side %.5f (%+.2f %%) mu %.4f (%+.2f %%), loss %.3e, "
                  "%.4f s per gradient step (%d segments)\n",
                  0.1 * fs, 0.3 * fm, r.final[0], 100 * (r.final[0] / 0.1 - 1), r.final[1],
                  100 * (r.final[1] / 0.3 - 1), r.finalLoss, r.secondsPerStep, r.segments);
      EXPECT_NEAR(r.final[0], 0.1, 0.005) << "start side x" << fs << ", mu x" << fm;
      EXPECT_NEAR(r.final[1], 0.3, 0.015) << "start side x" << fs << ", mu x" << fm;
      EXPECT_LT(r.finalLoss, 0.2 * r.history.front().loss);
    }
}

// A loss that becomes non-finite names the recorded row (file:line) and the row its prediction
// started from: here x = 1e200 on line 5 (finite, so the reader takes it) squares to infinity.
TEST(Sysid, NonFiniteLossNamesTheFileAndRow) {
  const diffloco::testing::ScratchDir scratch("diffloco_test_sysid_nonfinite");
  const std::string dir = scratch.string();
  std::string text = kHeader;
  for (int k = 0; k < 6; ++k) {
    char row[128];
    std::snprintf(row, sizeof row, "%g,%s,0,0.3,1,0,0,0,0,0,0,0,0,0\n", 0.005 * k,
                  k == 3 ? "1e200" : "0");
    text += row;
  }
  const std::string path = writeFile(dir, "huge.csv", text);
  sysid::System sys = sysid::cubeSystem();
  const auto data = sysid::readTrajectories(path, sys.model);
  ASSERT_EQ(data[0].lines, (std::vector<int>{2, 3, 4, 5, 6, 7}));
  sysid::FitOptions o;
  o.horizon = 1;
  o.iterations = 3;
  try {
    sysid::fit(sys, data, {"mu"}, o);
    ADD_FAILURE() << "no error for a non-finite loss";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(path + ":5: sysid: the loss became non-finite at iteration 0 (mu = 0.3): "
                             "the loss of this row, 1 step(s) predicted from line 4",
                      0),
              0u)
        << m;
  }
  // The same data built in memory: the trajectory and its row.
  std::vector<sysid::Trajectory> mem = data;
  mem[0].file.clear();
  mem[0].lines.clear();
  const sysid::Evaluation ev = sysid::evaluate(sys, mem, {"mu"}, o);
  EXPECT_EQ(ev.nonFiniteAt, "trajectory " + path + ", row 3");
  EXPECT_EQ(ev.nonFinite,
            "the loss of this row, 1 step(s) predicted from trajectory " + path + ", row 2");
  // Finite data: nothing to name.
  EXPECT_TRUE(sysid::evaluate(
                  sys,
                  sysid::readTrajectories(
                      writeFile(dir, "ok.csv", std::string(kHeader) + kRow0 + kRow1), sys.model),
                  {"mu"}, o)
                  .nonFinite.empty());
}

// A bad line of a parameter file or a bad value is quoted by its first 80 characters: a line of
// 100 000 brackets gives a message of one short line.
TEST(Sysid, LongBadInputIsQuotedShort) {
  const diffloco::testing::ScratchDir scratch("diffloco_test_sysid_long");
  const std::string dir = scratch.string();
  const std::string brackets(100000, '[');
  try {
    sysid::readParams(writeFile(dir, "truth.txt", "side 0.1\n" + brackets + "\n"));
    ADD_FAILURE() << "no error for a line of brackets";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("truth.txt:2: expected 'NAME VALUE', got '" + brackets.substr(0, 80) + "...'"),
              std::string::npos)
        << m.substr(0, 300);
    EXPECT_LT(m.size(), 300u);
  }
  const std::string e = readError(
      dir, std::string(kHeader) + kRow0 + "0.005,0,0," + brackets + ",1,0,0,0,0.1,0,-1,0,0,0\n");
  EXPECT_NE(e.find(":3: column 4 'z': not a number: \"" + brackets.substr(0, 80) + "...\""),
            std::string::npos)
      << e.substr(0, 300);
  EXPECT_LT(e.size(), 300u);
  try {
    sysid::parseAssignments({"side=" + brackets});
    ADD_FAILURE() << "no error for a value of brackets";
  } catch (const std::invalid_argument& err) {
    EXPECT_LT(std::string(err.what()).size(), 200u);
  }
}
