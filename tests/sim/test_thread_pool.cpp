// sim/thread_pool.h: parallelFor visits every index exactly once, with worker ids in range, for any
// pool size, loop length and grain, and a pool can be reused for many loops.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "sim/thread_pool.h"

using diffloco::sim::ThreadPool;

TEST(ThreadPool, EveryIndexVisitedExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    // n below, at and above the grain, and many chunks with a ragged last one.
    for (int grain : {1, 3, 16})
      for (int n : {0, 1, 2, grain - 1, grain, grain + 1, 5 * grain + 2, 1000}) {
        std::vector<std::atomic<int>> visits(n);
        for (auto& c : visits) c = 0;
        std::atomic<int> badWorker{0};
        pool.parallelFor(
            n,
            [&](int i, int worker) {
              if (i < 0 || i >= n) {
                ++badWorker;
                return;
              }
              ++visits[i];
              if (worker < 0 || worker >= pool.size()) ++badWorker;
            },
            grain);
        EXPECT_EQ(badWorker, 0) << "threads " << threads << " grain " << grain << " n " << n;
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(visits[i], 1) << "index " << i << " threads " << threads << " grain " << grain
                                  << " n " << n;
      }
  }
}

// A worker id is a slot the caller may own per worker (as BatchSim's Data): no two calls running
// at the same time may share one.
TEST(ThreadPool, WorkerIdsAreNotSharedConcurrently) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> inUse(pool.size());
  for (auto& u : inUse) u = 0;
  std::atomic<int> clashes{0};
  for (int rep = 0; rep < 20; ++rep)
    pool.parallelFor(
        200,
        [&](int i, int worker) {
          if (inUse[worker].fetch_add(1) != 0) ++clashes;
          volatile double x = 0;
          for (int k = 0; k < 200; ++k) x = x + k * i;
          inUse[worker].fetch_sub(1);
        },
        1);
  EXPECT_EQ(clashes, 0);
}

// Many short loops back to back on one pool (the batch simulator's use): no lost or repeated index,
// no hang, and each loop's writes are visible when parallelFor returns.
TEST(ThreadPool, ReusedAcrossManyCalls) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    std::vector<long> out(37, 0);
    long expected = 0;
    for (int call = 0; call < 2000; ++call) {
      const int n = 1 + call % 37;
      pool.parallelFor(
          n, [&](int i, int) { out[i] += call; }, 1 + call % 5);
      for (int i = 0; i < n; ++i) expected += call;
    }
    long total = 0;
    for (long x : out) total += x;
    EXPECT_EQ(total, expected) << threads << " threads";
  }
}

// Pools come and go (one per BatchSim): construction and destruction with idle workers must not
// hang or leak a running thread.
TEST(ThreadPool, CreateAndDestroy) {
  for (int rep = 0; rep < 50; ++rep) {
    auto pool = std::make_unique<ThreadPool>(1 + rep % 4);
    std::atomic<int> sum{0};
    if (rep % 2)
      pool->parallelFor(
          10, [&](int i, int) { sum += i; }, 2);
    EXPECT_EQ(sum, rep % 2 ? 45 : 0);
  }
  ThreadPool zero(0);  // treated as 1: the caller runs everything
  EXPECT_EQ(zero.size(), 1);
  int calls = 0;
  zero.parallelFor(5, [&](int, int worker) { calls += worker == 0; });
  EXPECT_EQ(calls, 5);
}
