// distributed/: torchrun's variables are read strictly; a world of one leaves data as it is; two
// real ranks (this test binary started again as rank 1) agree on every collective, including
// byte strings of different lengths; the launcher's free port is free.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "distributed/communicator.h"
#include "distributed/launcher.h"

using namespace diffloco::distributed;

namespace {

// Sets the variables for the scope of a test, restoring them after.
struct Env {
  std::vector<std::string> names;
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [k, v] : vars) {
      names.emplace_back(k);
      setenv(k, v, 1);
    }
  }
  ~Env() {
    for (const auto& k : names) unsetenv(k.c_str());
  }
};

std::string errorOf(void (*f)()) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(World, FromTorchrunVariables) {
  for (const char* k : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT", "DIFFLOCO_DIST_TIMEOUT_S"})
    unsetenv(k);
  World one = worldFromEnvironment();
  EXPECT_EQ(one.size, 1);
  EXPECT_EQ(one.rank, 0);
  {
    Env e{{"RANK", "2"},
          {"WORLD_SIZE", "4"},
          {"LOCAL_RANK", "0"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "1234"},
          {"DIFFLOCO_DIST_TIMEOUT_S", "7.5"}};
    const World w = worldFromEnvironment();
    EXPECT_EQ(w.rank, 2);
    EXPECT_EQ(w.size, 4);
    EXPECT_EQ(w.localRank, 0);
    EXPECT_EQ(w.localSize, 2);
    EXPECT_EQ(w.masterAddr, "10.0.0.1");
    EXPECT_EQ(w.masterPort, 1234);
    EXPECT_EQ(w.timeoutS, 7.5);
  }
  auto read = [] { worldFromEnvironment(); };
  {
    Env e{{"RANK", "4"}, {"WORLD_SIZE", "4"}};
    EXPECT_NE(errorOf(read).find("RANK='4': expected an integer in [0, 3]"), std::string::npos)
        << errorOf(read);
  }
  {
    Env e{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "3"}};
    EXPECT_NE(errorOf(read).find("LOCAL_WORLD_SIZE='3': expected an integer in [1, 2]"),
              std::string::npos);
  }
  {
    Env e{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}};
    EXPECT_NE(errorOf(read).find("MASTER_PORT='70000'"), std::string::npos);
  }
  {
    Env e{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"DIFFLOCO_DIST_TIMEOUT_S", "0"}};
    EXPECT_NE(errorOf(read).find("DIFFLOCO_DIST_TIMEOUT_S='0': expected seconds in [1, 86400]"),
              std::string::npos);
  }
  {
    Env e{{"RANK", "0"}};
    EXPECT_NE(errorOf(read).find("RANK and WORLD_SIZE must be set together"), std::string::npos);
  }
}

TEST(Communicator, WorldOfOneLeavesDataAsItIs) {
  const Communicator c;
  torch::Tensor t = torch::arange(4.0);
  c.allReduceSum(t);
  c.broadcast(t);
  EXPECT_TRUE(torch::equal(t, torch::arange(4.0)));
  EXPECT_EQ(c.allReduceSum(2.5), 2.5);
  EXPECT_TRUE(c.any(true));
  EXPECT_FALSE(c.any(false));
  EXPECT_EQ(c.allGatherBytes("abc"), std::vector<std::string>{"abc"});
  EXPECT_EQ(c.broadcastBytes("xyz"), "xyz");
}

// Rank 0 is this test; rank 1 is this binary started again on this test alone with
// DIFFLOCO_TEST_RANK=1. Each checks what it receives; rank 1's failures become its exit code.
TEST(Communicator, TwoRanksAgreeOnEveryCollective) {
  const char* role = std::getenv("DIFFLOCO_TEST_RANK");
  const int rank = role ? std::atoi(role) : 0;
  static const std::string port = std::to_string(freeLocalPort());
  pid_t child = -1;
  if (rank == 0) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string p = port;
    child = fork();
    if (child == 0) {
      setenv("DIFFLOCO_TEST_RANK", "1", 1);
      setenv("DIFFLOCO_TEST_PORT", p.c_str(), 1);
      execl(self.c_str(), self.c_str(),
            "--gtest_filter=Communicator.TwoRanksAgreeOnEveryCollective",
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  World w;
  w.rank = rank;
  w.size = 2;
  w.masterPort = std::atoi(rank == 0 ? port.c_str() : std::getenv("DIFFLOCO_TEST_PORT"));
  w.timeoutS = 30;
  const Communicator c(w);
  ASSERT_EQ(c.rank(), rank);
  torch::Tensor t = torch::full({3}, rank + 1.0);
  c.allReduceSum(t);
  EXPECT_TRUE(torch::equal(t, torch::full({3}, 3.0)));
  EXPECT_EQ(c.allReduceSum(rank == 0 ? 0.25 : 0.5), 0.75);
  EXPECT_TRUE(c.any(rank == 1));
  EXPECT_FALSE(c.any(false));
  torch::Tensor b = torch::full({2}, rank == 0 ? 7.0 : -1.0);
  c.broadcast(b);
  EXPECT_TRUE(torch::equal(b, torch::full({2}, 7.0)));
  const auto g = c.allGather(torch::full({2}, static_cast<int64_t>(rank), torch::kLong));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1][0].item<int64_t>(), 1);
  const auto bytes = c.allGatherBytes(rank == 0 ? std::string("") : std::string("rank one\0x", 10));
  EXPECT_EQ(bytes[0], "");
  EXPECT_EQ(bytes[1], std::string("rank one\0x", 10));
  EXPECT_EQ(c.broadcastBytes(rank == 0 ? "from zero" : ""), "from zero");
  const Communicator second = c.group("second");
  torch::Tensor s = torch::ones({1});
  second.allReduceSum(s);
  EXPECT_EQ(s.item<double>(), 2);
  if (rank == 0) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank 1 failed: " << status;
  }
}
