#include "coinfer/serving/generation_endpoint.hpp"

#include <cstdio>

#include "coinfer/core/byte_io.hpp"
#include "coinfer/generation/grammar/matcher.hpp"

namespace coinfer {

namespace {

using generation::FinishReason;

// Whitespace runs become one space, none at the ends: "What  is\nit? " = "What is it?".
void append_normalized(std::string& out, std::string_view text) {
  const std::size_t start = out.size();
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (space && out.size() > start) out += ' ';
    space = false;
    out += c;
  }
}

// The start of a generation's cache scope: the route, the model and its version, and every
// parameter that changes the answer (limits, sampling with temperature and seed, stops),
// separated so that no two requests that differ in one of them share a scope.
void append_scope(std::string& scope, std::string_view route, std::string_view model,
                  std::string_view version, const generation::GenerationRequest& g) {
  scope += route;
  scope += '\x1e';
  scope += model;
  scope += '\x1e';
  scope += version;
  scope += '\x1e';
  const auto& p = g.sampling;
  char numbers[320];
  std::snprintf(numbers, sizeof(numbers),
                "max_tokens=%d min_tokens=%d ignore_eos=%d skip_special=%d temperature=%.9g "
                "top_k=%d top_p=%.9g min_p=%.9g presence=%.9g frequency=%.9g repetition=%.9g "
                "seed=%s%llu",
                g.max_tokens, g.min_tokens, g.ignore_eos ? 1 : 0, g.skip_special_tokens ? 1 : 0,
                static_cast<double>(p.temperature), p.top_k, static_cast<double>(p.top_p),
                static_cast<double>(p.min_p), static_cast<double>(p.presence_penalty),
                static_cast<double>(p.frequency_penalty), static_cast<double>(p.repetition_penalty),
                p.seed ? "" : "none", p.seed ? static_cast<unsigned long long>(*p.seed) : 0ull);
  scope += numbers;
  scope += " stop_token_ids=";
  for (auto id : g.stop_token_ids) {
    scope += std::to_string(id);
    scope += ',';
  }
  scope += " stop=";
  for (const auto& stop : g.stop) {
    scope += std::to_string(stop.size());
    scope += ':';
    scope += stop;
  }
  scope += " logit_bias=";
  for (const auto& [id, bias] : p.logit_bias) {
    char entry[48];
    std::snprintf(entry, sizeof(entry), "%d:%.9g,", id, static_cast<double>(bias));
    scope += entry;
  }
  scope += '\x1e';
}

// A call's cache key besides its namespace. The scope holds everything that changes the answer
// but is not the text asked about: the route, the model, the generation parameters and, for
// chat, the conversation before the last user message. The text is the last user message
// (chat) or the prompt, normalized; a prompt of token ids goes whole into the scope (exact
// lookups only).
void cache_key(const GenerationCall& call, std::string_view model, std::string_view version,
               std::string& scope, std::string& text) {
  append_scope(scope, call.route, model, version, call.request);
  scope += call.add_generation_prompt ? "add_generation_prompt\x1e" : "\x1e";
  // A constrained answer is kept under its constraint: only the same constraint finds it.
  const auto& c = call.constraint;
  if (!c.empty()) {
    scope += "constraint=";
    scope += std::to_string(static_cast<int>(c.kind));
    scope += ':';
    scope += std::to_string(c.source.size());
    scope += ':';
    scope += c.source;
    for (const auto& choice : c.choices) {
      scope += std::to_string(choice.size());
      scope += ':';
      scope += choice;
    }
    for (const auto& f : c.functions) {
      scope += f.name;
      scope += '(';
      scope += std::to_string(f.parameters.size());
      scope += ':';
      scope += f.parameters;
      scope += ')';
    }
    scope += c.parallel ? "parallel" : "single";
    scope += " whitespace=";
    scope += c.whitespace;
    scope += '\x1e';
  }
  if (call.chat) {
    const bool last_is_user = !call.messages.empty() && call.messages.back().role == "user";
    const std::size_t context = call.messages.size() - (last_is_user ? 1 : 0);
    for (std::size_t i = 0; i < context; ++i) {
      scope += call.messages[i].role;
      scope += '\x1f';
      append_normalized(scope, call.messages[i].content);
      scope += '\x1e';
    }
    if (last_is_user) append_normalized(text, call.messages.back().content);
  } else if (!call.token_ids.empty() || call.text.empty()) {
    scope += "ids:";
    for (auto id : call.request.prompt) {
      scope += std::to_string(id);
      scope += ',';
    }
  } else {
    append_normalized(text, call.text);
  }
}

}  // namespace

std::string encode(const CachedGeneration& c) {
  std::string out;
  append_raw<std::uint8_t>(out, c.finish == FinishReason::length ? 2 : 1);
  append_raw<std::int32_t>(out, c.completion_tokens);
  append_raw<std::uint32_t>(out, static_cast<std::uint32_t>(c.pieces.size()));
  for (const auto& piece : c.pieces) {
    append_raw<std::uint32_t>(out, static_cast<std::uint32_t>(piece.size()));
    out += piece;
  }
  return out;
}

bool decode(std::string_view payload, CachedGeneration& out) {
  ByteReader in(payload);
  std::uint8_t finish = 0;
  std::uint32_t count = 0;
  if (!in.get(finish) || !in.get(out.completion_tokens) || !in.get(count) ||
      (finish != 1 && finish != 2) || count == 0) {
    return false;
  }
  out.finish = finish == 2 ? FinishReason::length : FinishReason::stop;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t size = 0;
    std::string_view piece;
    if (!in.get(size) || !in.get_bytes(size, piece)) return false;
    out.pieces.emplace_back(piece);
  }
  return in.left() == 0;
}

// --- GenerationRun ---------------------------------------------------------------------------

GenerationRun::~GenerationRun() {
  if (stream_) stream_->cancel();
}

bool GenerationRun::replay(generation::GenerationUpdate& out) {
  if (replayed_ >= answer_.pieces.size()) return false;
  out = generation::GenerationUpdate{};
  out.text = answer_.pieces[replayed_++];
  if (replayed_ == answer_.pieces.size()) {
    out.finish = answer_.finish;
    out.prompt_tokens = prompt_tokens_;
    out.completion_tokens = answer_.completion_tokens;
  }
  return true;
}

void GenerationRun::record(const generation::GenerationUpdate& update) {
  recorded_.pieces.push_back(update.text);
  if (update.finish == FinishReason::stop || update.finish == FinishReason::length) {
    // Complete: stored before the protocol writes the last of it, whether or not the client
    // reads it.
    recorded_.finish = update.finish;
    recorded_.completion_tokens = update.completion_tokens;
    const cache::CacheKey key{directives_.ns, scope_, text_};
    stored_ = stage_->store(key, directives_, found_, encode(recorded_));
  }
}

// One co_await and one co_return, the rest in plain functions: built by GCC 12, the same logic
// with early co_returns around its co_await resumed into a wrong state (a SIGILL, or a spin).
boost::asio::awaitable<bool> GenerationRun::next(generation::GenerationUpdate& out) {
  bool more = false;
  if (found_.hit) {
    more = replay(out);
  } else if (stream_) {
    more = co_await stream_->next(out);
    if (more && record_) record(out);
  }
  co_return more;
}

CacheOutcome GenerationRun::outcome() const {
  return stage_ ? found_.outcome(stored_) : CacheOutcome{};
}

// --- GenerationEndpoint ----------------------------------------------------------------------

GenerationEndpoint::GenerationEndpoint(std::string name, std::string version,
                                       std::unique_ptr<generation::Generator> generator,
                                       CacheMode cache)
    : name_(std::move(name)),
      version_(std::move(version)),
      generator_(std::move(generator)),
      cache_mode_(cache),
      grammars_(std::make_unique<generation::grammar::GrammarCache>(generator_->tokenizer())) {}

GenerationEndpoint::~GenerationEndpoint() = default;

Status GenerationEndpoint::prepare(GenerationCall& call) const {
  const ByteLevelBpeTokenizer& tokenizer = generator_->tokenizer();
  auto& g = call.request;
  Status status;
  if (call.chat) {
    if (!call.system_suffix.empty()) {
      if (!call.messages.empty() && call.messages.front().role == "system") {
        call.messages.front().content += "\n\n" + call.system_suffix;
      } else {
        call.messages.insert(call.messages.begin(),
                             ChatMessage{"system", generator_->default_system_prompt() + "\n\n" +
                                                       call.system_suffix});
      }
      call.system_suffix.clear();
    }
    const std::string text = render_chatml(call.messages, call.add_generation_prompt,
                                           generator_->default_system_prompt());
    status = tokenizer.encode(text, g.prompt, Tokenizer::no_truncation);
  } else if (!call.token_ids.empty()) {
    g.prompt = call.token_ids;
    for (auto id : g.prompt) {
      if (static_cast<std::size_t>(id) >= tokenizer.vocab_size()) {
        return Status::invalid("prompt: token id " + std::to_string(id) +
                               " is outside the vocabulary");
      }
    }
  } else {
    status = tokenizer.encode(call.text, g.prompt, Tokenizer::no_truncation);
  }
  if (!status.ok()) return status;
  if (g.prompt.empty()) return Status::invalid(call.chat ? "messages: empty" : "prompt: empty");

  if (auto s = g.sampling.validate(); !s.ok()) return s;
  for (const auto& [id, bias] : g.sampling.logit_bias) {
    if (static_cast<std::size_t>(id) >= tokenizer.vocab_size()) {
      return Status::invalid("logit_bias: token id " + std::to_string(id) +
                             " is outside the vocabulary");
    }
  }
  if (g.min_tokens > g.max_tokens && call.max_tokens_given) {
    return Status::invalid("min_tokens: must not exceed max_tokens");
  }
  const std::int64_t context = generator_->max_model_len();
  const auto prompt = static_cast<std::int64_t>(g.prompt.size());
  if (!call.max_tokens_given) {
    g.max_tokens = call.default_max_tokens_fill_context
                       ? static_cast<std::int32_t>(context - prompt)
                       : call.default_max_tokens;
  }
  if (g.max_tokens < 1) {
    return Status::invalid("prompt: its " + std::to_string(prompt) +
                           " tokens leave no room in the model's context of " +
                           std::to_string(context) + " tokens");
  }
  if (prompt + g.max_tokens > context) {
    return Status::invalid("max_tokens: " + std::to_string(prompt) + " prompt tokens + " +
                           std::to_string(g.max_tokens) + " exceed the model's context of " +
                           std::to_string(context) + " tokens");
  }
  if (!call.constraint.whitespace.empty() &&
      call.constraint.kind != generation::grammar::OutputConstraint::Kind::json_schema &&
      call.constraint.kind != generation::grammar::OutputConstraint::Kind::json_object) {
    return Status::invalid("whitespace_pattern: only with a JSON schema or a JSON object");
  }
  if (!call.constraint.empty()) {
    if (auto s = grammars_->get(call.constraint, call.grammar); !s.ok()) return s;
    g.logits_processors.push_back(
        std::make_shared<generation::grammar::GrammarProcessor>(call.grammar));
  }
  if (call.timeout_s > 0) {
    g.deadline = generation::Clock::now() + std::chrono::duration_cast<generation::Clock::duration>(
                                                std::chrono::duration<double>(call.timeout_s));
  }
  return {};
}

GenerationCall GenerationEndpoint::choice(GenerationCall& prepared, int index) const {
  auto& group = prepared.request.prefill_group;
  if (!group) group = std::make_shared<int>(0);
  GenerationCall out = prepared;
  out.request.logits_processors.clear();
  if (out.grammar) {
    out.request.logits_processors.push_back(
        std::make_shared<generation::grammar::GrammarProcessor>(out.grammar));
  }
  if (auto& seed = out.request.sampling.seed) *seed += static_cast<std::uint64_t>(index);
  return out;
}

bool GenerationEndpoint::caches(const GenerationCall& call) const noexcept {
  // The only processor a prepared call can hold is its grammar's, which the key names.
  return cache_ != nullptr && cache_mode_ != CacheMode::off && call.cacheable &&
         call.request.logits_processors.size() == (call.grammar ? 1u : 0u);
}

boost::asio::awaitable<void> GenerationEndpoint::lookup(GenerationCall& call, GenerationRun& run) {
  run.stage_ = cache_;
  run.mode_ = cache_mode_;
  run.directives_ = call.directives;
  cache_key(call, name_, version_, run.scope_, run.text_);
  const cache::CacheKey key{run.directives_.ns, run.scope_, run.text_};
  co_await cache_->lookup(run.mode_, key, run.directives_, run.found_);
  if (run.found_.hit && !decode(*run.found_.entry.payload, run.answer_)) run.found_.hit = false;
  run.record_ = !run.found_.hit && run.directives_.store;
}

Status GenerationEndpoint::submit(GenerationCall& call, GenerationRun& run,
                                  const boost::asio::any_io_executor& executor) {
  run.prompt_tokens_ = static_cast<std::int32_t>(call.request.prompt.size());
  if (run.found_.hit) return {};
  return generator_->submit(std::move(call.request), executor, run.stream_);
}

}  // namespace coinfer
