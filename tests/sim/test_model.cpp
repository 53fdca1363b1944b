#include <gtest/gtest.h>

#include "robots/robot.h"

using namespace diffloco;

TEST(Robot, LoadsBothRobotsWithExpectedMasses) {
  const Robot a = loadRobot("anymal");
  EXPECT_EQ(a.model.nq(), 19);
  EXPECT_EQ(a.model.nv(), 18);
  EXPECT_EQ(a.model.nfeet(), 4);
  EXPECT_NEAR(a.model.totalMass(), 51.755, 1e-2);
  const Robot w = loadRobot("quadruped");
  EXPECT_NEAR(w.model.totalMass(), 30.702, 1e-2);
  EXPECT_EQ(w.torqueLimit, 20.0);
}
