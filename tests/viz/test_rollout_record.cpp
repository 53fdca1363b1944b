#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "robots/robot.h"
#include "viz/ground_window.h"
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
  EXPECT_NE(json.find("\"format\":\"diffloco-rollout-2\""), std::string::npos);
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

// The record's "terrain" object read back (the numbers in order, as a JSON reader would).
sim::HeightField readTerrain(const std::string& json) {
  const size_t at = json.find("\"terrain\":{");
  if (at == std::string::npos) throw std::runtime_error("no terrain in the record");
  auto numberAfter = [&](const std::string& key) {
    return std::strtod(json.c_str() + json.find(key, at) + key.size(), nullptr);
  };
  sim::HeightField f;
  const char* p = json.c_str() + json.find("\"origin\":[", at) + 10;
  char* end = nullptr;
  f.originX = std::strtod(p, &end);
  f.originY = std::strtod(end + 1, nullptr);
  f.spacing = numberAfter("\"spacing\":");
  f.nx = static_cast<int>(numberAfter("\"nx\":"));
  f.ny = static_cast<int>(numberAfter("\"ny\":"));
  p = json.c_str() + json.find("\"heights\":[", at) + 11;
  while (*p != ']') {
    f.heights.push_back(std::strtod(p, &end));
    p = end;
    while (*p == ',' || *p == '\n') ++p;
  }
  return f;
}

// A field with steps, slopes and heights that are not round numbers, cropped around a rollout.
Rollout onTerrain() {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  VecX q = robot.standingConfiguration();
  q[0] = 1.3, q[1] = -0.7;
  r.record(0, 0, q, VecX::Zero(robot.model.nv()), Vec3::Zero());
  sim::HeightField f;
  f.originX = -4.15, f.originY = -3.85, f.spacing = 0.05, f.nx = 181, f.ny = 161;
  for (int iy = 0; iy < f.ny; ++iy)
    for (int ix = 0; ix < f.nx; ++ix)
      f.heights.push_back(0.12 * std::floor(ix / 6.0) - 0.1 * std::sin(0.37 * iy) + 1.0 / 7);
  r.ground = groundWindow(&f, r, 1.0);
  return r;
}

TEST(RolloutRecord, RoundTripsTheTerrainWindowExactly) {
  const Rollout r = onTerrain();
  ASSERT_TRUE(r.ground);
  const std::string json = rolloutJson(r);
  const sim::HeightField back = readTerrain(json);
  EXPECT_EQ(back.originX, r.ground->originX);
  EXPECT_EQ(back.originY, r.ground->originY);
  EXPECT_EQ(back.spacing, r.ground->spacing);
  EXPECT_EQ(back.nx, r.ground->nx);
  EXPECT_EQ(back.ny, r.ground->ny);
  EXPECT_EQ(back.heights, r.ground->heights);  // bit for bit
  EXPECT_EQ(json.find("\"terrain\"", json.find("\"envs\"")), std::string::npos);
}

TEST(RolloutRecord, ThePlaneWritesNoTerrain) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  r.record(0, 0, robot.standingConfiguration(), VecX::Zero(robot.model.nv()), Vec3::Zero());
  EXPECT_EQ(rolloutJson(r).find("terrain"), std::string::npos);
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
