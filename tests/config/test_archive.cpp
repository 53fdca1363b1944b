#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "config/archive.h"

namespace diffloco::config {
namespace {

#define EXPECT_CONTAINS(hay, needle) EXPECT_NE((hay).find(needle), std::string::npos) << (hay)

struct Entry {
  std::string name;
  double weight = 1;
  std::vector<double> params{0.5};
};

// A config with every kind of member the archive knows.
struct Sample {
  double gain = 2;
  int count = 3;
  std::int64_t seed = 0;
  bool on = false;
  std::string mode = "a";
  std::vector<double> limits{1, 2};
  Range range{0, 1};
  bool pushes = false;
  Range pushInterval{1, 2};
  bool hasExtra = false;
  double extra = 0;
  double cutoff = std::numeric_limits<double>::infinity();
  std::vector<Entry> entries;

  template <class V>
  void visit(V& v) {
    v.field("gain", gain, "a gain", V::positive());
    v.field("count", count, "a count", V::between(1, 10));
    v.field("seed", seed, "a seed", V::atLeast(0));
    v.field("on", on, "a switch");
    v.field("mode", mode, "a choice", V::oneOf({"a", "b"}));
    v.field("limits", limits, "two numbers", Check().sized(2));
    v.field("range", range, "an interval");
    v.optionalField("push_interval", pushes, pushInterval, "present: pushes", V::positive());
    v.optionalGroup("extra", "present: extra", hasExtra,
                    [&](auto& e) { e.field("value", extra, "the extra value"); });
    v.field("cutoff", cutoff, "may be infinite", V::positive().orInfinite());
    v.check(!(on && mode == "b"), "mode", "mode b cannot be on");
    v.list("entries", entries, "named entries in order", [](auto& e, Entry& x) {
      e.check(x.name != "bad", "", "'bad' is not a name");
      e.field("weight", x.weight, "its weight");
      e.field("params", x.params, "one number", Check().sized(1));
    });
  }
};

Sample read(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  YAML::Node root = YAML::Load(yaml);
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  Source src{"s.yaml", {}};
  for (const auto& s : sets) {
    src.sets.push_back(parseOverride(s));
    applyOverride(root, src.sets.back());
  }
  Sample s;
  Reader r(root, "", src);
  s.visit(r);
  r.finish();
  return s;
}

std::string error(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    read(yaml, sets);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string write(Sample s) {
  std::ostringstream out;
  Writer w(out, 0);
  s.visit(w);
  return out.str();
}

std::vector<std::pair<std::string, std::string>> flat(Sample s) {
  std::vector<std::pair<std::string, std::string>> out;
  Flattener f(out, "");
  s.visit(f);
  return out;
}

TEST(ConfigArchive, WrittenConfigReadsBackToTheSameValues) {
  const Sample s = read(
      "gain: 0.1\ncount: 7\nseed: 12345678901\non: true\nmode: a\nlimits: [0.3, 1e-7]\n"
      "range: 0.25\npush_interval: [2, 3.5]\nextra: {value: -4}\ncutoff: 0.05\n"
      "entries: {z: {weight: -2, params: 0.125}, a: {}}\n");
  EXPECT_EQ(s.range.lo, 0.25);
  EXPECT_EQ(s.range.hi, 0.25);
  EXPECT_TRUE(s.pushes && s.hasExtra);
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].name, "z");  // YAML order, not sorted
  EXPECT_EQ(s.entries[0].params, std::vector<double>{0.125});
  EXPECT_EQ(s.entries[1].weight, 1);
  const std::string text = write(s);
  EXPECT_CONTAINS(text, "gain: 0.1  # a gain\n");
  EXPECT_CONTAINS(text, "  z:\n    weight: -2.0  # its weight\n");
  const Sample back = read(text);
  EXPECT_EQ(flat(back), flat(s));
  EXPECT_EQ(back.seed, 12345678901);
  EXPECT_EQ(back.limits[1], 1e-7);

  // Absent optional keys stay absent; an infinite value is written as YAML's .inf.
  const Sample d = read("");
  const std::string dt = write(d);
  EXPECT_EQ(dt.find("push_interval"), std::string::npos) << dt;
  EXPECT_EQ(dt.find("extra"), std::string::npos) << dt;
  EXPECT_CONTAINS(dt, "cutoff: .inf");
  EXPECT_CONTAINS(dt, "entries: {}");
  EXPECT_TRUE(std::isinf(read(dt).cutoff));
  EXPECT_EQ(flat(read(dt)), flat(d));
}

TEST(ConfigArchive, FlattenedConfigsDifferWhereTheyDiffer) {
  const auto a = flat(read("entries: {x: {}, y: {}}"));
  const auto b = flat(read("entries: {y: {}, x: {}}"));
  EXPECT_NE(a, b);  // the order of entries matters (terms are concatenated in order)
  std::map<std::string, std::string> m(a.begin(), a.end());
  EXPECT_EQ(m["entries"], "[x, y]");
  EXPECT_EQ(m["entries.x.weight"], "1.0");
  EXPECT_EQ(m.count("push_interval"), 0u);
}

TEST(ConfigArchive, ErrorsNameLineKeyAndWhatWasExpected) {
  EXPECT_CONTAINS(error("gain: 1\ngian: 2\n"),
                  "s.yaml:2: unknown key 'gian' (did you mean 'gain'?)");
  EXPECT_CONTAINS(error("gain: 0\n"), "s.yaml:1: gain: 0 is out of range: must be > 0");
  EXPECT_CONTAINS(error("gain: .nan\n"), "gain: expected a finite number");
  EXPECT_CONTAINS(error("gain: .inf\n"), "gain: expected a finite number");
  EXPECT_CONTAINS(error("count: 2.5\n"), "count: expected an integer, got '2.5'");
  EXPECT_CONTAINS(error("count: 11\n"), "count: 11 is out of range: must be in [1, 10]");
  EXPECT_CONTAINS(error("mode: c\n"), "mode: 'c' is not one of: a, b");
  EXPECT_CONTAINS(error("limits: [1]\n"), "limits: expected 2 entries, got 1");
  EXPECT_CONTAINS(error("range: [2, 1]\n"), "range: low > high");
  EXPECT_CONTAINS(error("range: [1, 2, 3]\n"), "range: expected [low, high] or a number");
  EXPECT_CONTAINS(error("push_interval: [0, 1]\n"), "push_interval[0]: 0 is out of range");
  EXPECT_CONTAINS(error("\n\non: true\nmode: b\n"), "s.yaml:4: mode: mode b cannot be on");
  EXPECT_CONTAINS(error("entries:\n  ok: {}\n  bad: {}\n"),
                  "s.yaml:3: entries.bad: 'bad' is not a name");
  EXPECT_CONTAINS(error("entries:\n  a: {}\n  a: {}\n"), "entries: 'a' given twice");
  EXPECT_CONTAINS(error("entries: {a: {wieght: 1}}\n"), "unknown key 'entries.a.wieght'");
  EXPECT_CONTAINS(error("gain: 1\ngain: 2\n"), "s.yaml:2: 'gain' given twice");
  EXPECT_CONTAINS(error("extra: 3\n"), "extra: expected a section");
  EXPECT_CONTAINS(error("[1, 2]: 3\n"), "s.yaml:1: expected a name as key");
}

// For files read without a Reader (robot files, fitted actuator files).
TEST(ConfigArchive, KeysGivenTwiceAtAnyDepthAreErrors) {
  const auto uniqueKeysError = [](const std::string& yaml) {
    try {
      checkUniqueKeys(YAML::Load(yaml), "u.yaml");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(uniqueKeysError("a: 1\nb: {c: [1, {d: 2}]}\n"), "");
  EXPECT_EQ(uniqueKeysError("a: 1\na: 1\n"), "u.yaml:2: 'a' given twice");
  EXPECT_EQ(uniqueKeysError("a:\n  b: 1\n  c: 2\n  b: 3\n"), "u.yaml:4: 'a.b' given twice");
  EXPECT_EQ(uniqueKeysError("a: [{x: 1}, {y: 1, y: 2}]\n"), "u.yaml:1: 'a[1].y' given twice");
  EXPECT_CONTAINS(uniqueKeysError("a: {[1]: 2}\n"), "u.yaml:1: expected a name as key");
}

TEST(ConfigArchive, ErrorsAboutAnOverriddenKeyNameTheOverride) {
  EXPECT_CONTAINS(error("gain: 1\n", {"gain=-1"}), "--set gain=-1: gain: -1 is out of range");
  EXPECT_CONTAINS(error("", {"extra.vlaue=1"}), "--set extra.vlaue=1: unknown key 'extra.vlaue'");
  EXPECT_CONTAINS(error("count: 1\n", {"count.x=1"}), "--set count.x=1: 'count' is a value");
  EXPECT_EQ(read("", {"entries.q.weight=3"}).entries.at(0).weight, 3);
  EXPECT_CONTAINS(error("", {"=1"}), "expected key.path=value");
  EXPECT_CONTAINS(error("", {std::string("a\rb=1")}), "a\\x0db");
}

TEST(ConfigArchive, PrintableAndNumbers) {
  EXPECT_EQ(printable(std::string("a\tb\x7f", 4)), "a\\x09b\\x7f");
  EXPECT_EQ(formatNumber(0.1), "0.1");
  EXPECT_EQ(formatNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(text(-std::numeric_limits<double>::infinity()), "-.inf");
  EXPECT_EQ(text(std::string("null")), "\"null\"");  // would read back as no value otherwise
}

TEST(ConfigArchive, EditDistanceAndHint) {
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("horizon", "horizon"), 0u);
  EXPECT_CONTAINS(didYouMean("itertions", {"iterations", "horizon"}), "'iterations'");
}

}  // namespace
}  // namespace diffloco::config
