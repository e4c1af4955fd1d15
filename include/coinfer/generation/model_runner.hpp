#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/scheduler.hpp"

namespace coinfer::generation {

// What the engine must know of a runner to size its scheduler, block manager and sampler.
struct RunnerLimits {
  std::int32_t vocab = 0;
  std::int32_t context = 0;          // the longest sequence (positions) the model takes
  std::int32_t kv_blocks = 0;        // paged KV cache size, in blocks
  std::int32_t block_size = 16;      // tokens per KV block
  std::int32_t max_step_tokens = 0;  // tokens one execute() may carry
};

// Runs a decoder over the scheduler's steps: it owns the weights and the paged KV cache and
// sees chunks of token ids, never a request. Implementations: LlamaCpuRunner
// (llama_cpu_runner.hpp); a device runner plugs in here with no scheduler change.
// One step at a time, on the engine's thread.
class ModelRunner {
 public:
  virtual ~ModelRunner() = default;

  virtual const RunnerLimits& limits() const noexcept = 0;

  // Called once on the engine's thread before its first step (compute threads, a device).
  virtual void bind_thread() {}

  // Copy-on-write before a step: block dst gets src's keys and values in every layer.
  virtual void copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) = 0;

  // Runs one step: `logits` becomes [rows, vocab], one row for each chunk with `logits` set,
  // in chunk order. An error names the chunk and leaves the KV cache as it was.
  virtual Status execute(std::span<const ScheduledChunk> chunks, std::vector<float>& logits) = 0;
};

}  // namespace coinfer::generation
