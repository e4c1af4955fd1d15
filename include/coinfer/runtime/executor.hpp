#pragma once

#include <functional>

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
};

}  // namespace coinfer
