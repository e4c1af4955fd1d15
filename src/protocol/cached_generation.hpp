#pragma once
// What the text-generation adapters (OpenAI's completions, Triton's generate) share about the
// response cache: the key of a generation, the form an answer is kept in, and its replay.
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/generation/generator.hpp"

namespace coinfer::cached_generation {

// A finished generation as the cache keeps it: the text of each update as the engine
// delivered it (a replayed stream has the same chunks), how it finished and its length.
// Layout: u8 finish (1 stop, 2 length), i32 completion tokens, u32 count (>= 1),
// count x (u32 size, bytes).
struct CachedGeneration {
  std::vector<std::string> pieces;
  generation::FinishReason finish = generation::FinishReason::stop;
  std::int32_t completion_tokens = 0;
};
std::string encode(const CachedGeneration& answer);
bool decode(std::string_view payload, CachedGeneration& out);

// Whitespace runs become one space, none at the ends: "What  is\nit? " = "What is it?".
void append_normalized(std::string& out, std::string_view text);

// The start of a generation's cache scope: the route, the model and its version, and every
// parameter that changes the answer (limits, sampling with temperature and seed, stops),
// separated so that no two requests that differ in one of them share a scope.
void append_scope(std::string& scope, std::string_view route, std::string_view model,
                  std::string_view version, const generation::GenerationRequest& request);

// Where a response's updates come from: the engine's stream, or a cached answer replayed as
// the same sequence of updates (the last with its finish and token counts).
class UpdateSource {
 public:
  explicit UpdateSource(generation::GenerationStream* live) : live_(live) {}
  UpdateSource(const CachedGeneration* cached, std::int32_t prompt_tokens)
      : cached_(cached), prompt_tokens_(prompt_tokens) {}
  boost::asio::awaitable<bool> next(generation::GenerationUpdate& out);

 private:
  generation::GenerationStream* live_ = nullptr;
  const CachedGeneration* cached_ = nullptr;
  std::int32_t prompt_tokens_ = 0;
  std::size_t next_ = 0;
};

}  // namespace coinfer::cached_generation
