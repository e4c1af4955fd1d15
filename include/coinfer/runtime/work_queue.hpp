#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace coinfer {

// Worker threads that run submitted work in FIFO order: the thread half of CpuExecutor (one
// worker) and CudaExecutor (one per stream). Each worker first runs `on_start` (per-thread
// setup: the OpenMP team size, the current CUDA device), then takes work until stop() is
// called and the queue is empty. Header-only and dependency-free, so that the device side
// builds alone.
class WorkQueue {
 public:
  WorkQueue() = default;
  ~WorkQueue() { stop(); }
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void start(int threads, std::function<void()> on_start = {}) {
    on_start_ = std::move(on_start);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }

  // Never blocks on the work itself.
  void push(std::function<void()> work) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(work));
    }
    wake_.notify_one();
  }

  // Runs everything already queued, then joins the workers. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void run() {
    if (on_start_) on_start_();
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and everything queued has run
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  std::function<void()> on_start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace coinfer
