// `diffloco toy point-mass` and `toy robot-drop` (experiments/toys/point_mass.h, robot_drop.h) on small
// settings: DiffMJX's points hold (fixed-step gradients wrong near contact, the adaptive
// integrator's right), the files are written, and the table has its rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "experiments/toys/point_mass.h"
#include "experiments/toys/robot_drop.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;

TEST(PointMassToy, ClosedForm) {
  toys::PointMassOptions o;
  double z, dz;
  toys::pointMassExact(o, 0.2, z, dz);  // no contact within T: free flight
  EXPECT_NEAR(z, 0.2 - 0.1, 1e-15);
  EXPECT_EQ(dz, 1.0);
  toys::pointMassExact(o, 0.08, z, dz);  // bounced: touchdown at 30 ms, pi / 316 s in contact
  EXPECT_NEAR(z, 0.05 + (0.1 - 0.03 - M_PI / std::sqrt(1e5)), 1e-12);
  EXPECT_EQ(dz, -1.0);
}

// The adaptive gradient matches the closed form; the fixed steps' do not (the h = 2 ms one is off
// by more than 0.1 somewhere, with the wrong sign at some heights); the fine reference is close.
TEST(PointMassToy, AdaptiveTracksTheClosedFormFixedStepsDoNot) {
  toys::PointMassOptions o;
  o.points = 41;
  o.substeps = {5, 20};
  o.refSubsteps = 200;
  const toys::PointMassSweep s = toys::runPointMass(o);
  ASSERT_EQ(s.curves.size(), 4u);
  ASSERT_EQ(s.exactDz.size(), 41u);
  double adaptive = 0, fixed5 = 0;
  int wrongSign = 0;
  for (int i = 0; i < o.points; ++i) {
    adaptive = std::max(adaptive, std::abs(s.find("adaptive")->dz[i] - s.exactDz[i]));
    fixed5 = std::max(fixed5, std::abs(s.find("fixed_n5")->dz[i] - s.exactDz[i]));
    wrongSign += s.find("fixed_n5")->dz[i] * s.exactDz[i] < 0;
  }
  std::printf("max |dz/dh0 error|: adaptive %.1e, fixed h = 2 ms %.2f (%d of %d with the wrong sign)\n",
              adaptive, fixed5, wrongSign, o.points);
  EXPECT_LT(adaptive, 1e-4);
  EXPECT_GT(fixed5, 0.1);
  EXPECT_GT(wrongSign, 0);

  const diffloco::testing::ScratchDir scratch("diffloco_test_point_mass");
  const std::string dir = (scratch / "out").string();
  const std::string csv = toys::writePointMassCsv(s, dir);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("h0,fixed_n5_z,fixed_n5_dz,fixed_n5_evals,", 0), 0u) << header;
  EXPECT_NE(header.find(",adaptive_dz,"), std::string::npos);
  EXPECT_NE(header.find(",exact_z,exact_dz"), std::string::npos);
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, o.points);
  EXPECT_FALSE(std::filesystem::exists(csv + ".tmp"));
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    const std::string png = toys::plotPointMass(s, dir);
    EXPECT_GT(std::filesystem::file_size(png), 10000u);
    EXPECT_FALSE(std::filesystem::exists(png + ".tmp"));
  }
}

// A short quadruped drop: the adaptive integrator's gradient is closer to the tight reference than
// the fixed steps' (which miss the touchdown saltation), and the tight reference agrees with
// central differences of its own integration.
TEST(RobotDropToy, AdaptiveBeatsFixedSteps) {
  toys::RobotDropOptions o;
  o.robot = "quadruped";
  o.height = 0.005;
  o.duration = 0.05;
  o.substeps = {20};
  o.rtols = {1e-5};
  o.refSubsteps = 100;
  o.refRtol = 1e-10;
  o.repeats = 1;
  const toys::RobotDropReport r = toys::runRobotDrop(o);
  toys::printRobotDrop(r);
  ASSERT_EQ(r.rows.size(), 2u);
  const auto& fixed = r.rows[0];
  const auto& adaptive = r.rows[1];
  EXPECT_EQ(fixed.integrator, "fixed");
  EXPECT_EQ(adaptive.integrator, "adaptive");
  EXPECT_GT(r.maxPenetration, 0.0);
  EXPECT_LT(std::abs(r.tightDirectional - r.tightDirectionalFd),
            1e-3 * std::abs(r.tightDirectionalFd));
  EXPECT_LT(adaptive.gradErrorTight, 1e-3);
  EXPECT_LT(10 * adaptive.gradErrorTight, fixed.gradErrorTight);
  EXPECT_EQ(adaptive.capHits, 0);
  EXPECT_GT(adaptive.eventsPerEnvStep, 0.0);
}
