#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "coinfer/core/metrics.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/generation/sampler.hpp"

namespace coinfer {
class ByteLevelBpeTokenizer;
}  // namespace coinfer

namespace coinfer::generation {

using Clock = std::chrono::steady_clock;

// One generation as a client asked for it (OpenAI's completion fields, tokenized).
struct GenerationRequest {
  std::vector<std::int32_t> prompt;
  SamplingParams sampling;
  std::int32_t max_tokens = 16;
  std::int32_t min_tokens = 0;  // stop tokens and strings are ignored before this many
  bool ignore_eos = false;      // vLLM's: generate past the end-of-sequence token
  std::vector<std::int32_t> stop_token_ids;
  std::vector<std::string> stop;  // stop strings: the text ends before the first match
  bool skip_special_tokens = true;
  int priority = 0;  // lower runs first when the scheduler uses priorities (vLLM's)
  // Prompt-lookup draft tokens per step (SpeculativeConfig); -1: the model's default, 0: off.
  // Changes the speed, never which tokens are sampled.
  std::int32_t num_speculative_tokens = -1;
  Clock::time_point deadline = Clock::time_point::max();
  // Stages of the sampler chain of this request's own (a grammar's mask), after the penalties
  // and the logit bias; each belongs to this request alone. A request with any is not cached.
  std::vector<std::shared_ptr<LogitsProcessor>> logits_processors;
  // Requests that share one prompt (the n choices of one call) share one object here: while
  // one of them computes the prompt's full blocks, the others wait to be admitted, then find
  // those blocks in the prefix cache and compute only the last, partial one (vLLM V1's
  // parallel sampling, with the wait that makes the sharing certain).
  std::shared_ptr<const void> prefill_group;
};

enum class FinishReason { none, stop, length, cancelled, timeout, error };
std::string_view to_string(FinishReason reason) noexcept;  // "stop", "length", ...

struct GeneratedToken {
  std::int32_t id = 0;
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
};

// What a request produced since it last looked: tokens, their text (whole UTF-8 characters,
// stop strings cut), and, once, how it finished.
struct GenerationUpdate {
  std::vector<GeneratedToken> tokens;
  std::string text;
  FinishReason finish = FinishReason::none;
  Status error;  // finish == error: why
  std::int32_t prompt_tokens = 0;
  std::int32_t completion_tokens = 0;
  std::int32_t cached_tokens = 0;  // prompt tokens served from the prefix cache
};

// The requester's end of one generation: the engine thread appends, the requester's
// coroutine takes. Destroying (or cancel()ing) it tells the engine to stop and free the
// sequence's KV blocks at its next step, also while the prompt is still being prefilled.
class GenerationStream : public std::enable_shared_from_this<GenerationStream> {
 public:
  explicit GenerationStream(boost::asio::any_io_executor executor);
  ~GenerationStream();
  GenerationStream(const GenerationStream&) = delete;
  GenerationStream& operator=(const GenerationStream&) = delete;

  // Waits until there is something new, moves it into `out` (replacing its contents) and
  // returns true; false once the final update was taken. Runs on the executor given at
  // construction; cancellable (the wait ends with operation_aborted and cancels the stream).
  boost::asio::awaitable<bool> next(GenerationUpdate& out);
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

  // Engine side.
  void push(GenerationUpdate&& update);

 private:
  // The requester's wake-up: a timer on its executor, owned by its waiting next() alone, so
  // that the engine, which may hold the stream last, never destroys an object of the
  // requester's io_context (which may be gone by then: an offline job's own io_context).
  struct Signal;
  boost::asio::any_io_executor executor_;
  std::mutex mutex_;
  std::weak_ptr<Signal> waiter_;  // set while next() waits
  GenerationUpdate pending_;
  bool has_pending_ = false;
  bool finished_ = false;   // the final update was pushed
  bool delivered_ = false;  // ... and taken
  std::atomic<bool> cancelled_{false};
};

// vLLM's metric names with the coinfer_ prefix (docs/METRICS.md).
struct GenerationMetrics {
  GenerationMetrics();
  std::atomic<std::int64_t> num_requests_running{0};
  std::atomic<std::int64_t> num_requests_waiting{0};
  std::atomic<double> kv_cache_usage{0.0};
  Counter num_preemptions;
  Counter prompt_tokens;
  Counter generation_tokens;
  Counter prefix_cache_queries;  // prompt tokens looked up
  Counter prefix_cache_hits;     // of those, found
  Counter spec_decode_num_drafts;           // steps that verified a draft
  Counter spec_decode_num_draft_tokens;     // tokens proposed
  Counter spec_decode_num_accepted_tokens;  // of those, confirmed
  Counter request_success;                  // by finish reason stop/length
  Counter request_failure;
  Histogram time_to_first_token_s;
  Histogram time_per_output_token_s;
  Histogram e2e_request_latency_s;
};
struct NamedGenerationMetrics {
  std::string model;
  const GenerationMetrics* metrics;
};
void render_prometheus(std::span<const NamedGenerationMetrics> models, std::string& out);

// What the protocol adapters (OpenAI's completions, the repository, /metrics) see of a
// language model; Engine (engine.hpp) is the implementation. Keeping them apart keeps the
// adapters free of the model's code (and its oneDNN) at link time.
class Generator {
 public:
  virtual ~Generator() = default;
  // Queues a request; the stream delivers on `executor`. unavailable (503) when the waiting
  // queue is full, invalid_argument when the prompt cannot fit the model or the KV cache.
  virtual Status submit(GenerationRequest request, boost::asio::any_io_executor executor,
                        std::shared_ptr<GenerationStream>& out) = 0;
  virtual const ByteLevelBpeTokenizer& tokenizer() const noexcept = 0;
  virtual std::int32_t max_model_len() const noexcept = 0;
  // The system message chat requests get when they bring none (the chat template's).
  virtual const std::string& default_system_prompt() const noexcept = 0;
  virtual const GenerationMetrics& metrics() const noexcept = 0;
};

}  // namespace coinfer::generation
