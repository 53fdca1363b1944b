// ident/actuator_fit: the fit recovers a known drive from a synthetic log (delay, Coulomb
// friction, noise) within 5%; bad logs fail naming the file and the line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "ident/actuator_fit.h"
#include "tests/support/scratch_dir.h"

namespace diffloco::ident {
namespace {

namespace fs = std::filesystem;

// A file in a folder that the test process removes when it ends.
std::string tmpFile(const std::string& name, const std::string& content) {
  static const testing::ScratchDir dir("diffloco_test_actuator_fit");
  const std::string p = (dir / name).string();
  std::ofstream(p) << content;
  return p;
}

void expectWithin(double fitted, double truth, double rel, const char* name) {
  EXPECT_NEAR(fitted, truth, rel * std::abs(truth)) << name;
}

TEST(ActuatorFit, RecoversSyntheticDriveWithTorque) {
  DriveModel m;  // kp 85, kd 0.6, effort 80, saturation 120, v 7.5, inertia 0.1, delay 2 ms
  const JointLog log = synthesizeJointLog(m);
  const std::string path = tmpFile("drive.csv", "");
  writeJointLog(path, log, "test");
  const ActuatorFit f = fitActuator(readJointLog(path));
  std::printf("%s\n", f.report().c_str());
  expectWithin(f.kp, m.kp, 0.05, "kp");
  expectWithin(f.kd, m.kd, 0.05, "kd");
  expectWithin(f.effort, m.effort, 0.05, "effort");
  expectWithin(f.saturation, m.saturation, 0.05, "saturation");
  expectWithin(f.velocityLimit, m.velocityLimit, 0.05, "velocity_limit");
  expectWithin(f.inertia, m.inertia, 0.05, "inertia");
  expectWithin(f.friction, m.friction, 0.25, "friction");
  EXPECT_NEAR(f.delay, m.delay, 1e-9);
  // The standard errors are honest: the truth lies within 4 of them (kp, kd, effort).
  for (const auto& p : f.params) {
    EXPECT_TRUE(std::isfinite(p.stdError)) << p.name;
    if (p.name == "kp") {
      EXPECT_LT(std::abs(p.value - m.kp), 4 * p.stdError + 1e-3 * m.kp);
    }
  }
  EXPECT_LT(f.rmsTorqueUnclipped, 1.5 * m.noiseTau);
}

TEST(ActuatorFit, WithoutTorqueNeedsInertiaAndThenRecoversGains) {
  DriveModel m;
  m.withTorque = false;
  m.noiseQd = 1e-3;
  const JointLog log = synthesizeJointLog(m);
  EXPECT_THROW(fitActuator(log), std::runtime_error);
  FitOptions o;
  o.inertia = m.inertia;
  o.friction = m.friction;
  o.damping = m.damping;
  const ActuatorFit f = fitActuator(log, o);
  std::printf("%s\n", f.report().c_str());
  expectWithin(f.kp, m.kp, 0.05, "kp");
  expectWithin(f.kd, m.kd, 0.05, "kd");
  // The limits are not asserted here: a torque differentiated from the velocity smears the
  // clipping transitions (see README, fit-actuator without a tau column).
}

TEST(ActuatorFit, WritesTheTaskKeys) {
  const ActuatorFit f = fitActuator(synthesizeJointLog(DriveModel{}));
  const std::string path = tmpFile("actuator.yaml", "");
  writeActuatorYaml(path, f);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (const char* k : {"kp:", "kd:", "effort:", "saturation:", "velocity_limit:", "armature:",
                        "rms_torque:", "std_errors:"})
    EXPECT_NE(text.find(k), std::string::npos) << k;
}

void expectError(const std::string& content, const std::string& what) {
  const std::string path = tmpFile("bad.csv", content);
  try {
    readJointLog(path);
    ADD_FAILURE() << "no error for: " << what;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

std::string rows(int n, int from = 0) {
  std::string s;
  for (int i = from; i < from + n; ++i) s += std::to_string(i * 0.001) + ",0.1,0.0,0.0\n";
  return s;
}

TEST(ActuatorFit, BadLogsNameFileAndLine) {
  expectError("time,q_target,q\n" + rows(200), "bad.csv:1: missing column 'qd'");
  expectError("time,q_target,q,qd,current\n", "bad.csv:1: unknown column 'current'");
  expectError("# comment\ntime,q_target,q,qd\n" + rows(5) + "0.0035,0.1,0.0,0.0\n" + rows(200, 10),
              "bad.csv:8: time 0.0035 does not increase");
  expectError("time,q_target,q,qd\n" + rows(3) + "0.01,nan,0,0\n", "bad.csv:5: column 'q_target'");
  expectError("time,q_target,q,qd\n" + rows(3) + "0.01,abc,0,0\n",
              "bad.csv:5: column 'q_target': 'abc' is not a number");
  expectError("time,q_target,q,qd\n" + rows(3) + "0.01,0\n", "bad.csv:5: expected 4 cells, got 2");
  expectError("time,q_target,q,qd\n" + rows(10), "only 10 samples");
  // A bad cell is quoted by its first 80 characters.
  const std::string brackets(100000, '[');
  expectError("time,q_target,q,qd\n" + rows(3) + "0.01," + brackets + ",0,0\n",
              "bad.csv:5: column 'q_target': '" + brackets.substr(0, 80) + "...' is not a number");
}

// The delay search is bounded whatever the option says: a negative or non-finite largest delay is
// refused, a huge one searches as far as the log allows (1e9 s overflowed the shift and crashed).
TEST(ActuatorFit, LargestDelayIsChecked) {
  DriveModel m;
  m.duration = 2;  // 2000 samples: every shift up to a quarter of the log is tried
  const JointLog log = synthesizeJointLog(m);
  FitOptions o;
  for (const double bad : {-0.01, std::nan(""), HUGE_VAL}) {
    o.maxDelay = bad;
    EXPECT_THROW(fitActuator(log, o), std::invalid_argument) << bad;
  }
  o.maxDelay = 1e9;
  const ActuatorFit f = fitActuator(log, o);
  EXPECT_GE(f.delay, 0);
  EXPECT_LE(f.delay, m.duration / 4);
}

}  // namespace
}  // namespace diffloco::ident
