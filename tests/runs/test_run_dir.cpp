// Run folders: unique time-stamped names, atomic writes, checkpoint listing (numeric order,
// .tmp ignored), metrics.csv with resume truncation, and the CSV reader's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "io/atomic_file.h"
#include "runs/run_dir.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco::runs;
namespace fs = std::filesystem;
namespace io = diffloco::io;

namespace {
using diffloco::testing::ScratchDir;
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST(RunDir, UniqueTimeStampedFolders) {
  const ScratchDir scratch("diffloco_rundir_test");
  const fs::path parent = scratch.path();
  const std::string a = createRunDir(parent.string(), "walk");
  const std::string b = createRunDir(parent.string(), "walk");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a) && fs::is_directory(b));
  // <YYYY-MM-DD_HH-MM-SS>_walk
  const std::string name = fs::path(a).filename().string();
  EXPECT_EQ(name.size(), 19u + 5u);
  EXPECT_EQ(name.substr(19), "_walk");
  EXPECT_EQ(name[4], '-');
  EXPECT_EQ(name[10], '_');
}

TEST(RunDir, CheckpointListingIgnoresInterruptedWrites) {
  const ScratchDir scratch("diffloco_ckpt_test");
  const fs::path d = scratch.path();
  io::writeFileAtomic((d / "model_10.pt").string(), "ten");
  io::writeFileAtomic((d / "model_9.pt").string(), "nine");
  io::writeFileAtomic((d / "model_200.pt").string(), "two hundred");
  // What a SIGKILL during a write leaves behind.
  std::ofstream(io::temporaryPathFor((d / "model_300.pt").string())) << "an interrupted write";
  std::ofstream(d / "model_400.pt.tmp") << "an interrupted write (older runs' name)";
  std::ofstream(d / "policy.pt") << "x";
  const auto cps = listCheckpoints(d.string());
  ASSERT_EQ(cps.size(), 3u);
  EXPECT_EQ(cps[0].first, 9);
  EXPECT_EQ(cps[1].first, 10);
  EXPECT_EQ(cps[2].first, 200);
  // A write that fails leaves the previous file whole.
  EXPECT_THROW(io::writeAtomically((d / "model_10.pt").string(),
                                   [](const std::string&) { throw std::runtime_error("disk full"); }),
               std::exception);
  EXPECT_EQ(slurp(d / "model_10.pt"), "ten");
}

// A resume removes what killed writers of earlier processes left, nothing else.
TEST(RunDir, ResumeRemovesStaleTemporariesOnly) {
  const ScratchDir scratch("diffloco_stale_tmp_test");
  const fs::path d = scratch.path();
  std::ofstream(d / "model_300.pt.1.0.tmp") << "killed while writing (pid 1)";
  std::ofstream(d / "config.yaml.99999999.3.tmp") << "killed while writing";
  const std::string ours = io::temporaryPathFor((d / "model_301.pt").string());
  std::ofstream(ours) << "this process, writing now";
  std::ofstream(d / "notes.tmp") << "not a temporary of ours";
  std::ofstream(d / "x.99999999999999999999.0.tmp") << "a pid no integer holds";
  io::writeFileAtomic((d / "model_299.pt").string(), "whole");
  EXPECT_EQ(removeStaleTemporaries(d.string()), 3);
  EXPECT_FALSE(fs::exists(d / "model_300.pt.1.0.tmp"));
  EXPECT_FALSE(fs::exists(d / "config.yaml.99999999.3.tmp"));
  EXPECT_TRUE(fs::exists(ours));
  EXPECT_TRUE(fs::exists(d / "notes.tmp"));
  EXPECT_EQ(slurp(d / "model_299.pt"), "whole");
}

TEST(RunDir, MetricsCsvResumeKeepsRowsUpToTheCheckpoint) {
  const ScratchDir scratch("diffloco_csv_test");
  const fs::path d = scratch.path();
  {
    MetricsCsv csv(d.string(), {"iteration", "a", "b"});
    for (int i = 1; i <= 5; ++i) csv.row({{"iteration", i}, {"a", i * 0.5}});
    csv.row({{"iteration", 6}, {"a", std::nan("")}, {"b", 1}});
  }
  {
    MetricsCsv csv(d.string(), {"iteration", "a", "b"}, 3);  // resumed from model_3.pt
    csv.row({{"iteration", 4}, {"a", 40}, {"b", 2}});
  }
  const Csv c = readCsv((d / "metrics.csv").string());
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.column("b"), 2);
  EXPECT_EQ(c.rows[2][1], 1.5);
  EXPECT_TRUE(std::isnan(c.rows[2][2]));  // an empty cell
  EXPECT_EQ(c.rows[3][1], 40);
  EXPECT_THROW(MetricsCsv(d.string(), {"iteration", "other"}, 2), std::runtime_error);
  std::ofstream(d / "bad.csv") << "x,y\n1,2\n3,abc\n";
  try {
    readCsv((d / "bad.csv").string());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3: 'abc' is not a number"), std::string::npos)
        << e.what();
  }
}

// The checkout's commit (40 hex digits, " (dirty)" with uncommitted changes to tracked files),
// or the build's commit where there is no git checkout.
TEST(RunDir, GitDescriptionIsTheCommitOrSaysWhereItCameFrom) {
  const std::string g = gitDescription();
  static const std::regex checkout("[0-9a-f]{40}( \\(dirty\\))?");
  static const std::regex build(".+ \\(from the build; no git checkout\\)");
  EXPECT_TRUE(std::regex_match(g, checkout) || std::regex_match(g, build)) << g;
}
