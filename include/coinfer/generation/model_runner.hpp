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

// How a runner that samples on its device draws one logit row's token: the request's
// SamplingParams as the CPU Sampler reads them (no penalties, logit bias, logprobs or logits
// processors: those rows are sampled on the host), with a uniform draw in [0, 1) from the
// request's generator.
struct DeviceDraw {
  float temperature = 0.0f;  // below 1e-5: the first argmax
  std::int32_t top_k = 0;    // 0 or -1: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float uniform = 0.0f;
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

  // A runner whose device draws tokens itself says so; the engine then calls execute_sampled
  // for steps whose every logit row can be drawn there (DeviceDraw), so that only token ids
  // cross back instead of [rows, vocab] logits.
  virtual bool samples_on_device() const noexcept { return false; }
  // As execute, but `tokens` [logit rows] gets each row's token drawn as `draws` [logit rows]
  // say. Only called when samples_on_device().
  virtual Status execute_sampled(std::span<const ScheduledChunk> chunks,
                                 std::span<const DeviceDraw> draws,
                                 std::vector<std::int32_t>& tokens) {
    (void)chunks, (void)draws, (void)tokens;
    return Status(Errc::internal, "this runner does not sample on its device");
  }
};

}  // namespace coinfer::generation
