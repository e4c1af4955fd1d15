#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace coinfer {

// Worker threads that run submitted work in FIFO order: the thread half of CpuExecutor (one
// worker) and CudaExecutor (one per stream). Each worker first runs `on_start` (per-thread
// setup: the OpenMP team size, the current CUDA device), then takes work until stop() is
// called and the queue is empty. The queue is a ring that only grows (a deque would allocate a
// block every 16 pushes): a steady stream of work allocates nothing. Header-only and
// dependency-free, so that the device side builds alone.
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
      if (count_ == ring_.size()) grow();
      ring_[(head_ + count_) % ring_.size()] = std::move(work);
      ++count_;
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
        wake_.wait(lock, [this] { return stopping_ || count_ > 0; });
        if (count_ == 0) return;  // stopping, and everything queued has run
        work = std::move(ring_[head_]);
        ring_[head_] = nullptr;
        head_ = (head_ + 1) % ring_.size();
        --count_;
      }
      work();
    }
  }

  // Doubles the ring, keeping the queued work in order from the front.
  void grow() {
    std::vector<std::function<void()>> bigger(ring_.empty() ? 16 : ring_.size() * 2);
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    ring_.swap(bigger);
    head_ = 0;
  }

  std::function<void()> on_start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::function<void()>> ring_;  // count_ queued from head_, wrapping around
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace coinfer
