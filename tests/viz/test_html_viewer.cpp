#include <gtest/gtest.h>

#include <cstdlib>

#include "viz/html_viewer.h"

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
