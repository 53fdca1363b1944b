// Output files (io/atomic_file.h): the content arrives whole, nothing but the named file is
// touched, failures name the path and leave no temporary file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using diffloco::io::writeAtomically;
using diffloco::io::writeFileAtomic;

namespace {

struct Scratch {
  diffloco::testing::ScratchDir scratch{"diffloco_io"};
  fs::path dir = scratch.path();
  std::string path(const std::string& name) const { return (dir / name).string(); }
  int files() const {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    return n;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(AtomicFile, WritesAndReplacesWithoutLeavingTemporaries) {
  Scratch s;
  const std::string p = s.path("a.txt");
  writeFileAtomic(p, "first");
  EXPECT_EQ(slurp(p), "first");
  writeFileAtomic(p, std::string(1 << 20, 'x'));  // larger than one write() may take
  EXPECT_EQ(slurp(p).size(), size_t{1} << 20);
  writeFileAtomic(p, "");
  EXPECT_EQ(slurp(p), "");
  EXPECT_EQ(s.files(), 1);
}

TEST(AtomicFile, RefusesDirectoriesAndSpecialFilesAndTouchesNothing) {
  Scratch s;
  const std::string e = errorOf([&] { writeFileAtomic(s.dir.string(), "x"); });
  EXPECT_NE(e.find(s.dir.string() + ": is a directory"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_directory(s.dir));
  // A device: refused, and the node stays a device (a rename over it would replace it).
  const std::string d = errorOf([] { writeFileAtomic("/dev/null", "x"); });
  EXPECT_NE(d.find("/dev/null: is a special file"), std::string::npos) << d;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A link to a device is refused too.
  const std::string link = s.path("null_link");
  fs::create_symlink("/dev/null", link);
  EXPECT_NE(errorOf([&] { writeFileAtomic(link, "x"); }).find("special file"), std::string::npos);
  EXPECT_EQ(s.files(), 1);
}

TEST(AtomicFile, FollowsLinksAndKeepsThem) {
  Scratch s;
  const std::string target = s.path("target.txt"), link = s.path("link.txt");
  writeFileAtomic(target, "old");
  fs::create_symlink(target, link);
  writeFileAtomic(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(s.files(), 2);
}

TEST(AtomicFile, FailuresNameThePathAndKeepTheOldFile) {
  Scratch s;
  const std::string missing = s.path("no/such/folder/x.txt");
  const std::string e = errorOf([&] { writeFileAtomic(missing, "x"); });
  EXPECT_NE(e.find(missing + ": its folder"), std::string::npos) << e;
  // A writer that fails half-way: the old file is intact, the temporary file is gone.
  const std::string p = s.path("kept.txt");
  writeFileAtomic(p, "old");
  EXPECT_THROW(writeAtomically(p,
                               [](const std::string& tmp) {
                                 std::ofstream(tmp) << "half";
                                 throw std::runtime_error("disk full");
                               }),
               std::runtime_error);
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(s.files(), 1);
  // A writer that writes nothing is an error, not an empty file.
  const std::string none = errorOf([&] { writeAtomically(p, [](const std::string&) {}); });
  EXPECT_NE(none.find(p + ": the writer produced no file"), std::string::npos) << none;
  EXPECT_EQ(slurp(p), "old");
}

TEST(AtomicFile, TemporaryNamesAreUniqueAndEndInTmp) {
  const std::string a = diffloco::io::temporaryPathFor("/x/model_5.pt");
  const std::string b = diffloco::io::temporaryPathFor("/x/model_5.pt");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/x/model_5.pt.", 0), 0u);
  EXPECT_EQ(a.substr(a.size() - 4), ".tmp");
}

// A killed process whose pid this one reuses may have left the very temporary name this write
// picks (<path>.<pid>.<counter>.tmp): the write still succeeds and leaves no temporary.
TEST(AtomicFile, StaleTemporaryOfAReusedPidIsReplaced) {
  Scratch s;
  const std::string p = s.path("config.yaml");
  const std::string used = diffloco::io::temporaryPathFor(p);  // <p>.<pid>.<k>.tmp
  const std::string stem = used.substr(0, used.size() - 4);     // <p>.<pid>.<k>
  const auto dot = stem.rfind('.');
  const std::string next =
      stem.substr(0, dot + 1) + std::to_string(std::stoul(stem.substr(dot + 1)) + 1) + ".tmp";
  std::ofstream(next) << "left by a killed process";
  writeFileAtomic(p, "new");
  EXPECT_EQ(slurp(p), "new");
  EXPECT_FALSE(fs::exists(next));
  EXPECT_EQ(s.files(), 1);
}
