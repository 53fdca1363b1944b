// config/yaml_guard.h: a loaded YAML tree that holds itself, nests too deep or expands its aliases
// beyond the bound is refused quickly, naming the file and line; ordinary anchors and aliases pass.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "config/yaml_guard.h"
#include "tests/config/hostile_yaml.h"

using diffloco::config::checkYamlTree;
using diffloco::config::kMaxYamlDepth;
using diffloco::testing::anchorBomb;

namespace {

// The message checkYamlTree gives `text` loaded as y.yaml ("" and a test failure if none).
std::string guardError(const std::string& text) {
  try {
    checkYamlTree(YAML::Load(text), "y.yaml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return "";
}

}  // namespace

TEST(YamlGuard, SelfReferentialAliases) {
  const std::string list =
      guardError(std::string("name: r\n") + diffloco::testing::kSelfReferentialAlias);
  EXPECT_EQ(list.rfind("y.yaml:2: self-referential alias", 0), 0u) << list;
  const std::string map = guardError("a:\n  b: &m\n    c: 1\n    d: *m\n");
  EXPECT_EQ(map.rfind("y.yaml:2: self-referential alias", 0), 0u) << map;  // the anchor's line
  // A key can hold itself too.
  EXPECT_NE(guardError("? &k [*k]\n: 1\n").find("self-referential alias"), std::string::npos);
  // Deeper: the alias refers to an ancestor two levels up.
  EXPECT_EQ(guardError("top: &t\n  - [1, *t]\n").rfind("y.yaml:1: self-referential alias", 0), 0u);
}

TEST(YamlGuard, AnchorBombIsRefusedQuickly) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = guardError(anchorBomb());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Named at the top-level entry whose expansion passes the bound: a5, 10^6 nodes.
  EXPECT_EQ(e.rfind("y.yaml:6: alias expansion too large: with its aliases expanded the document "
                    "has more than 1000000 nodes",
                    0),
            0u)
      << e;
  EXPECT_LT(s, 2.0);
}

TEST(YamlGuard, NestingTooDeep) {
  std::string deep = "x: ";
  for (int i = 0; i <= kMaxYamlDepth; ++i) deep += "[";
  for (int i = 0; i <= kMaxYamlDepth; ++i) deep += "]";
  EXPECT_NE(guardError(deep + "\n").find("y.yaml:1: nesting too deep: more than 64 levels"),
            std::string::npos);
  std::string fits = "x: ";  // the root map and 63 lists: 64 levels
  for (int i = 1; i < kMaxYamlDepth; ++i) fits += "[";
  for (int i = 1; i < kMaxYamlDepth; ++i) fits += "]";
  EXPECT_NO_THROW(checkYamlTree(YAML::Load(fits), "y.yaml"));
}

TEST(YamlGuard, OrdinaryAnchorsPass) {
  const YAML::Node n = YAML::Load(
      "defaults: &d {kp: 20, kd: 0.5}\nfront: *d\nhind: *d\nlist: &l [1, 2, 3]\nboth: [*l, *l]\n");
  const YAML::Node back = checkYamlTree(n, "y.yaml");
  EXPECT_TRUE(back.is(n));  // the same node, for use around a load
  EXPECT_NO_THROW(checkYamlTree(YAML::Load(""), "y.yaml"));
  EXPECT_NO_THROW(checkYamlTree(YAML::Load("just a scalar"), "y.yaml"));
  // A tree built in memory has no marks: the message names the source alone.
  YAML::Node built;
  built["x"] = YAML::Node(YAML::NodeType::Sequence);
  built["x"].push_back(built["x"]);
  try {
    checkYamlTree(built, "--set x");
    ADD_FAILURE() << "a list holding itself passed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set x: self-referential alias", 0), 0u) << e.what();
  }
}
