#pragma once

#include <functional>
#include <memory>

#include "coinfer/core/status.hpp"
#include "coinfer/runtime/cuda_stream_device.hpp"
#include "coinfer/runtime/executor.hpp"
#include "coinfer/runtime/stream_scheduler.hpp"
#include "coinfer/runtime/work_queue.hpp"

namespace coinfer {

// Runs batches on one GPU through `streams` CUDA streams (lanes), each with pinned
// input/output staging: while one batch computes on its stream, the next is staged and copied
// in on another (double buffering with 2 streams, the default).
//
// One host thread per stream takes submitted work; a model's forward() (e.g. CudaMlp) runs
// its batch through scheduler().run(), which queues H2D copy, kernels and D2H copy on a free
// lane and then sleeps on the lane's CUDA event (blocking-sync). So only these threads ever
// wait on the GPU: the batcher then posts each request's completion to its own executor, and
// no I/O thread blocks. concurrency() == streams, so the batcher keeps that many batches in
// flight; models run on this executor must allow that many concurrent forward() calls (one per
// lane), which CudaMlp does with per-lane device scratch.
class CudaExecutor final : public Executor {
 public:
  using Scheduler = StreamScheduler<CudaStreamDevice>;

  // Startup errors: no device or driver ("no CUDA device found (...)"), a bad index, or a
  // failure creating streams and events.
  static Status create(int device_index, int streams, std::unique_ptr<CudaExecutor>& out);
  ~CudaExecutor() override;  // finishes queued work, then joins

  void submit(std::function<void()> work) override;
  int concurrency() const noexcept override { return scheduler_.lanes(); }
  // Page-locked (cuda::pinned_memory_resource()): the batcher's rows are the H2D source.
  std::pmr::memory_resource* staging_memory() const noexcept override;

  Scheduler& scheduler() noexcept { return scheduler_; }
  CudaStreamDevice& device() noexcept { return device_; }

 private:
  CudaExecutor(CudaStreamDevice device, int streams);

  CudaStreamDevice device_;
  Scheduler scheduler_;
  WorkQueue queue_;  // one worker per stream; declared last, so stopped first
};

}  // namespace coinfer
