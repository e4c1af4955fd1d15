#include "coinfer/runtime/cpu_executor.hpp"

#include "coinfer/ops/compute_threads.hpp"

namespace coinfer {

CpuExecutor::CpuExecutor(int compute_threads)
    : compute_threads_(compute_threads < 1 ? 1 : compute_threads), thread_([this] { run(); }) {}

CpuExecutor::~CpuExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void CpuExecutor::submit(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.notify_one();
}

void CpuExecutor::run() {
  set_compute_threads(compute_threads_);
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

}  // namespace coinfer
