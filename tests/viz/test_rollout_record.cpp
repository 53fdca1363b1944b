#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "robots/robot.h"
#include "viz/rollout_record.h"

namespace diffloco::viz {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(RolloutRecord, HoldsShapesPosesAndOverlayPerEnv) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 2, 0.02);
  r.robot = "quadruped";
  r.policy = "a<b>.pt";  // must not be able to close the viewer's <script> element
  VecX q = robot.standingConfiguration(), v = VecX::Zero(robot.model.nv());
  v[0] = 0.5;
  for (int k = 0; k < 3; ++k) r.record(0, k * 0.02, q, v, Vec3(1, 0, 0));
  r.record(1, 0, q, v, Vec3(1, 0, 0));
  r.endEpisode(1);
  r.record(1, 0.02, q, v, Vec3(1, 0, 0));  // after its episode ended: dropped
  EXPECT_EQ(r.envs[1].frames.size(), 1u);
  EXPECT_NEAR(r.duration(), 0.06, 1e-12);
  EXPECT_NEAR(r.envs[0].frames[0].velocity.x(), 0.5, 1e-12);

  const std::string json = rolloutJson(r);
  EXPECT_NE(json.find("\"format\":\"diffloco-rollout-1\""), std::string::npos);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_NE(json.find("\"frames\":3"), std::string::npos);
  EXPECT_NE(json.find("\"frames\":1"), std::string::npos);
  EXPECT_EQ(count(json, "\"kind\":\"box\""), 1u);
  EXPECT_EQ(count(json, "\"kind\":\"sphere\""), static_cast<size_t>(robot.model.nfeet()));
  // The base of the first frame: its height, then the identity quaternion.
  char base[64];
  std::snprintf(base, sizeof base, "\"pose\":[0,0,%g,1,0,0,0,",
                std::round(robot.defaultBaseHeight * 1e4) / 1e4);  // 4 decimals, as written
  EXPECT_NE(json.find(base), std::string::npos) << json.substr(0, 2000);
}

TEST(RolloutRecord, RejectsAStateOfAnotherRobot) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  EXPECT_THROW(r.record(0, 0, VecX::Zero(5), VecX::Zero(robot.model.nv()), Vec3::Zero()),
               std::invalid_argument);
  EXPECT_THROW(Rollout(robot.model, 0, 0.02), std::invalid_argument);
}

}  // namespace
}  // namespace diffloco::viz
