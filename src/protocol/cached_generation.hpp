#pragma once
// What the text-generation adapters (OpenAI's completions, Triton's generate) share about the
// response cache: the key of a generation, the form an answer is kept in, and a generation's
// run through the cache (lookup, engine or replay, store).
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/generation/generator.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "generation_fields.hpp"

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

// One generation's way through the response cache: looked up before the engine; on a miss
// started on the engine, its updates recorded as they pass and stored once it finished (stop
// or length); on a hit the kept answer replayed as the same updates (the last with its finish
// and token counts). Without a cache (no stage, or mode off) it only runs the engine.
class CachedRun {
 public:
  CachedRun(CacheStage* stage, CacheMode mode)
      : stage_(stage), mode_(stage ? mode : CacheMode::off) {}
  bool caching() const noexcept { return mode_ != CacheMode::off; }

  // Set by the adapter before lookup(): the request's headers and its key besides the
  // namespace (append_scope, append_normalized).
  CacheDirectives directives;
  std::string scope;
  std::string text;

  boost::asio::awaitable<void> lookup();
  // Queues `request` on the engine unless the lookup hit. Destroying the run cancels it.
  Status start(generation::Generator& engine, generation::GenerationRequest request,
               const boost::asio::any_io_executor& executor);
  // The next update, as GenerationStream::next; false after the last.
  boost::asio::awaitable<bool> next(generation::GenerationUpdate& out);
  // For the X-Cache headers (nothing when not caching); the stored entry once stored.
  CacheOutcome outcome() const;

 private:
  CacheStage* stage_;
  CacheMode mode_;
  CacheStage::Lookup found_;
  CachedGeneration answer_;    // a hit's
  CachedGeneration recorded_;  // a miss's, as it passes
  bool record_ = false;
  std::uint64_t stored_ = 0;
  std::int32_t prompt_tokens_ = 0;
  std::size_t replayed_ = 0;
  std::shared_ptr<generation::GenerationStream> stream_;
  std::optional<generation_fields::CancelOnExit> cancel_on_exit_;
};

}  // namespace coinfer::cached_generation
