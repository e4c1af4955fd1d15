#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "coinfer/generation/generator.hpp"

namespace coinfer::generation {

// One generation inside the engine, from submit() to its final update. The scheduler plans
// with its first block of fields, the output processor writes the second; only the engine's
// thread touches a Sequence once it was submitted.
struct Sequence {
  std::uint64_t id = 0;  // the scheduler's and the block manager's name for it
  GenerationRequest request;
  std::shared_ptr<GenerationStream> stream;  // the requester's end; may be null in tests

  // Scheduling: what has KV, what is planned.
  std::vector<std::int32_t> tokens;  // prompt, then generated
  std::int32_t prompt_len = 0;
  std::int32_t computed = 0;       // leading tokens whose KV is in the cache
  std::int32_t slots = 0;          // KV slots its block table holds
  bool allocated = false;          // holds KV blocks (it is running)
  std::int32_t cached_tokens = 0;  // prompt tokens found in the prefix cache at admission
  // Speculation: the tokens proposed to follow `tokens` in this step (empty when not
  // drafting), and what a decode step feeds: the last token, then the draft.
  std::vector<std::int32_t> draft;
  std::vector<std::int32_t> feed;

  // Output: sampling state, text held back, timings, and how it finished.
  std::mt19937_64 rng;
  std::string held;       // decoded bytes not yet sent (partial UTF-8, possible stop prefix)
  std::string sent_tail;  // the last bytes sent, to find stop strings across updates
  std::size_t max_stop = 0;
  Clock::time_point arrival{};
  Clock::time_point last_token{};
  bool first_token = false;
  FinishReason finish = FinishReason::none;  // set once, when the final update is pushed
  GenerationUpdate update;                   // what this step adds, not yet pushed

  std::int32_t generated() const noexcept {
    return static_cast<std::int32_t>(tokens.size()) - prompt_len;
  }
  std::span<const std::int32_t> generated_tokens() const noexcept {
    return std::span<const std::int32_t>(tokens).subspan(static_cast<std::size_t>(prompt_len));
  }
  bool finished() const noexcept { return finish != FinishReason::none; }
  bool cancelled() const noexcept { return stream && stream->cancelled(); }
};

// A new sequence for `request`: tokens = prompt, the generator seeded from the request's seed
// (or entropy), the stop-string window sized, arrival now.
std::unique_ptr<Sequence> make_sequence(GenerationRequest request,
                                        std::shared_ptr<GenerationStream> stream);

}  // namespace coinfer::generation
