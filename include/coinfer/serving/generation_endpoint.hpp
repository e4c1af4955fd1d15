#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/generation_call.hpp"
#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer {

// A finished generation as the response cache keeps it: the text of each update as the engine
// delivered it (a replay has the same chunks), how it finished and its length.
// Layout: u8 finish (1 stop, 2 length), i32 completion tokens, u32 count (>= 1),
// count x (u32 size, bytes).
struct CachedGeneration {
  std::vector<std::string> pieces;
  generation::FinishReason finish = generation::FinishReason::stop;
  std::int32_t completion_tokens = 0;
};
std::string encode(const CachedGeneration& answer);
bool decode(std::string_view payload, CachedGeneration& out);

// One generation's events, from the engine or replayed from the cache: tokens and text per
// step, then a final update with the finish reason and usage. Destroying it cancels the
// generation (a client gone, an error in the handler).
class GenerationRun {
 public:
  GenerationRun() = default;
  ~GenerationRun();
  GenerationRun(const GenerationRun&) = delete;
  GenerationRun& operator=(const GenerationRun&) = delete;

  // The next update, as GenerationStream::next; false after the last.
  boost::asio::awaitable<bool> next(generation::GenerationUpdate& out);
  // What the cache did (nothing when the model has no cache or the call bypassed it).
  CacheOutcome outcome() const;
  std::int32_t prompt_tokens() const noexcept { return prompt_tokens_; }

 private:
  friend class GenerationEndpoint;
  bool replay(generation::GenerationUpdate& out);           // a hit's next piece
  void record(const generation::GenerationUpdate& update);  // a miss's, stored when complete

  CacheStage* stage_ = nullptr;  // null: not caching
  CacheMode mode_ = CacheMode::off;
  CacheDirectives directives_;
  std::string scope_, text_;  // the cache key besides its namespace
  CacheStage::Lookup found_;
  CachedGeneration answer_;    // a hit's
  CachedGeneration recorded_;  // a miss's, as it passes
  bool record_ = false;
  std::uint64_t stored_ = 0;
  std::int32_t prompt_tokens_ = 0;
  std::size_t replayed_ = 0;
  std::shared_ptr<generation::GenerationStream> stream_;
};

// A language model as served: its generator, and the one pipeline every protocol's generation
// goes through (OpenAI's completions and chat, Triton's generate over HTTP, SSE and /v2/ws,
// coinfer-batch):
//   prepare: chat template and tokenization, the prompt and limits checked against the model
//   lookup:  the response cache (the only way into it for generation), where the model has one
//   submit:  the engine, unless the lookup hit
// and one stream of events. A protocol only decodes a request into a GenerationCall and
// encodes the run's updates.
class GenerationEndpoint {
 public:
  GenerationEndpoint(std::string name, std::string version,
                     std::unique_ptr<generation::Generator> generator,
                     CacheMode cache = CacheMode::off);
  ~GenerationEndpoint();

  const std::string& name() const noexcept { return name_; }
  const std::string& version() const noexcept { return version_; }
  CacheMode cache_mode() const noexcept { return cache_mode_; }
  generation::Generator& generator() const noexcept { return *generator_; }
  const ByteLevelBpeTokenizer& tokenizer() const noexcept { return generator_->tokenizer(); }

  // The cache stage the server built (null: none); set once, before requests.
  void set_cache(CacheStage* stage) noexcept { cache_ = stage; }

  // Renders and tokenizes the prompt and checks the call against the model: sampling fields
  // in range, a prompt that is not empty and whose ids are in the vocabulary, max_tokens (its
  // default filled) within the context; the timeout becomes a deadline. Errors name the field.
  // A structured output is compiled here (or found compiled) and joins the request's sampler
  // chain. Callable from any thread.
  Status prepare(GenerationCall& call) const;

  // The index-th (1..) of several choices of a prepared call: the same prompt and fields, its
  // own sampler state (a fresh grammar processor; the seed + index when one was given), in
  // the prepared call's prefill group so that the prompt is computed once.
  GenerationCall choice(GenerationCall& prepared, int index) const;

  // Whether a prepared call goes through the response cache: the model has one and the call
  // is cacheable.
  bool caches(const GenerationCall& call) const noexcept;
  // The cache stage of a call that caches(): its key (the route, the model, every parameter
  // that changes the answer, the conversation before the text asked about, and that text)
  // looked up exactly, then semantically where the model's mode says so.
  boost::asio::awaitable<void> lookup(GenerationCall& call, GenerationRun& run);
  // Queues a prepared call on the generator, its updates delivered on `executor` (and recorded
  // for the cache as they pass, when it was looked up); nothing when the lookup hit: the run
  // replays the kept answer. unavailable when the engine's queue is full.
  Status submit(GenerationCall& call, GenerationRun& run,
                const boost::asio::any_io_executor& executor);

 private:
  std::string name_;
  std::string version_;
  std::unique_ptr<generation::Generator> generator_;
  CacheMode cache_mode_;
  CacheStage* cache_ = nullptr;
  std::unique_ptr<generation::grammar::GrammarCache> grammars_;
};

}  // namespace coinfer
