#include "sim/thread_pool.h"

#include <algorithm>

namespace diffloco::sim {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::runChunks(int id) {
  for (;;) {
    const int start = next_.fetch_add(grain_);
    if (start >= n_) return;
    const int end = std::min(n_, start + grain_);
    for (int i = start; i < end; ++i) (*job_)(i, id);
  }
}

void ThreadPool::workerLoop(int id) {
  unsigned seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    runChunks(id);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int n, const std::function<void(int, int)>& f, int grain) {
  if (n <= 0) return;
  if (workers_.empty() || n <= grain) {
    for (int i = 0; i < n; ++i) f(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &f;
    n_ = n;
    grain_ = std::max(1, grain);
    next_ = 0;
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  runChunks(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
  job_ = nullptr;
}

}  // namespace diffloco::sim
