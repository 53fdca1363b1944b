#include <gtest/gtest.h>

#include <cstdlib>

#include "robots/robot.h"
#include "viz/ground_window.h"
#include "viz/html_viewer.h"
#include "viz/rollout_record.h"

namespace diffloco::viz {
namespace {

TEST(HtmlViewer, InlinesThreeJsAndTheRecord) {
  const std::string page = viewerHtml("{\"format\":\"diffloco-rollout-1\"}", "t<i>tle");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("REVISION"), std::string::npos);  // three.js itself, not a link to it
  EXPECT_EQ(page.find("<script src="), std::string::npos);
  EXPECT_NE(page.find("id=\"rollout\">{\"format\":\"diffloco-rollout-1\"}</script>"),
            std::string::npos);
  EXPECT_NE(page.find("<title>t&lt;i&gt;tle</title>"), std::string::npos);
}

TEST(HtmlViewer, CarriesTheTerrainAndBuildsItsMesh) {
  const Robot robot = loadRobot("quadruped");
  Rollout r(robot.model, 1, 0.02);
  r.record(0, 0, robot.standingConfiguration(), VecX::Zero(robot.model.nv()), Vec3::Zero());
  sim::HeightField f;
  f.originX = f.originY = -5, f.spacing = 0.1, f.nx = f.ny = 101;
  for (int i = 0; i < f.nx * f.ny; ++i) f.heights.push_back(0.12 * (i % f.nx / 3));  // stairs
  r.ground = groundWindow(&f, r, 1.0);
  const std::string page = viewerHtml(rolloutJson(r), "terrain");
  const size_t record = page.find("id=\"rollout\">");
  ASSERT_NE(record, std::string::npos);
  // The heights inside the inlined record, and the script that builds the mesh from them and cuts
  // the window out of the plane.
  EXPECT_NE(page.find("\"terrain\":{\"origin\":[", record), std::string::npos);
  EXPECT_NE(page.find("\"nx\":21,\"ny\":21,\"heights\":[", record), std::string::npos);
  EXPECT_NE(page.find("terrainMesh(tr)", record), std::string::npos);
  EXPECT_NE(page.find("plane.holes.push", record), std::string::npos);
}

TEST(HtmlViewer, AMissingThreeJsIsNamed) {
  setenv("DIFFLOCO_THREE_JS", "/nonexistent/three.min.js", 1);
  try {
    viewerHtml("{}", "x");
    ADD_FAILURE() << "no error without three.js";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/three.min.js"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("libjs-three"), std::string::npos);
  }
  unsetenv("DIFFLOCO_THREE_JS");
}

}  // namespace
}  // namespace diffloco::viz
