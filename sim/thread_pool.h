// A fixed set of worker threads running fork-join loops: parallelFor(n, f) calls f(i, worker) for
// i in [0, n) and returns when all are done. The calling thread works too, so a pool of size 1 runs
// everything inline.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace diffloco::sim {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // f(index, workerId) with workerId in [0, size()). Work is handed out in chunks of `grain`.
  void parallelFor(int n, const std::function<void(int, int)>& f, int grain = 1);

 private:
  void workerLoop(int id);
  void runChunks(int id);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  int n_ = 0, grain_ = 1;
  std::atomic<int> next_{0};
  int busy_ = 0;
  unsigned generation_ = 0;
  bool stop_ = false;
};

}  // namespace diffloco::sim
