#pragma once

#include "coinfer/runtime/executor.hpp"
#include "coinfer/runtime/work_queue.hpp"

namespace coinfer {

// A compute pool separate from the I/O threads. One dispatch thread runs batches in order;
// each batch's GEMMs are spread by oneDNN over `compute_threads` threads (its OpenMP team,
// told the same number), so a batch uses the whole pool and batches never oversubscribe it.
class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(int compute_threads);
  ~CpuExecutor() override;  // finishes queued work, then joins

  void submit(std::function<void()> work) override;
  int concurrency() const noexcept override { return 1; }
  int compute_threads() const noexcept { return compute_threads_; }

 private:
  const int compute_threads_;
  WorkQueue queue_;  // one worker: the dispatch thread
};

}  // namespace coinfer
