#pragma once

#include <functional>
#include <memory_resource>

namespace coinfer {

// Runs batches of model work off the I/O threads. Implementations own their threads (a CPU
// pool, CUDA streams); the batcher decides what runs, the executor only runs it.
class Executor {
 public:
  virtual ~Executor() = default;
  // Queues `work`; it runs on one of the executor's threads, in submission order per thread.
  // Never blocks the caller.
  virtual void submit(std::function<void()> work) = 0;
  // How many batches may run at once (the batcher keeps at most this many in flight).
  virtual int concurrency() const noexcept = 0;
  // Where the batcher allocates its staging rows (the decoder writes request inputs there and
  // the model reads them in place). Ordinary heap memory by default; a CudaExecutor gives
  // page-locked memory, so a batch's H2D copy reads the rows directly. The resource must
  // outlive every batcher that uses the executor.
  virtual std::pmr::memory_resource* staging_memory() const noexcept {
    return std::pmr::new_delete_resource();
  }
};

}  // namespace coinfer
