#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer {

// When a DynamicBatcher forms a batch and how much it queues. Per model, from config.
struct BatchPolicy {
  int max_batch_size = 64;  // rows per batch; 1 turns batching off
  // A batch is formed once the oldest queued request has waited this long, even if small.
  // 0 (the default): as soon as the executor can take one, so a request at an idle executor
  // runs at once and those arriving while a batch computes make the next batch.
  std::chrono::microseconds max_queue_delay{0};
  // Sizes at which a batch is formed at once, without waiting for max_queue_delay.
  std::vector<int> preferred_batch_sizes;
  std::size_t max_queue_size = 1024;  // queued requests; more are rejected at once (503)
  // Staging bytes one batch may hold across its inputs; a request needing more is rejected
  // (400). Ragged models are bounded by their max_batch_tokens instead.
  std::size_t max_batch_bytes = 64 * 1024 * 1024;
  // Longest a request may wait in the queue (0: no limit); a request may ask for less with the
  // OIP parameter "timeout" (µs), never more. Expired while queued: 504, never computed.
  std::chrono::microseconds default_timeout{0};
  // Priorities 1 (highest) .. priority_levels; OIP parameter "priority"; FIFO within a level.
  int priority_levels = 1;
  int default_priority = 1;
};

// A policy a DynamicBatcher can run, or the first field that is out of range, by name
// ("preferred_batch_sizes: 0 is not a positive batch size"). Config files are checked when
// read; this catches a policy built in code.
Status validate(const BatchPolicy& policy);

}  // namespace coinfer
