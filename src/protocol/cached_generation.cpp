#include "cached_generation.hpp"

#include <cstdio>
#include <cstring>

#include "coinfer/core/byte_io.hpp"

namespace coinfer::cached_generation {
std::string encode(const CachedGeneration& c) {
  std::string out;
  append_raw<std::uint8_t>(out, c.finish == generation::FinishReason::length ? 2 : 1);
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
  out.finish = finish == 2 ? generation::FinishReason::length : generation::FinishReason::stop;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t size = 0;
    std::string_view piece;
    if (!in.get(size) || !in.get_bytes(size, piece)) return false;
    out.pieces.emplace_back(piece);
  }
  return in.left() == 0;
}

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
  scope += '\x1e';
}

boost::asio::awaitable<void> CachedRun::lookup() {
  const cache::CacheKey key{directives.ns, scope, text};
  co_await stage_->lookup(mode_, key, directives, found_);
  if (found_.hit && !decode(*found_.entry.payload, answer_)) found_.hit = false;
}

Status CachedRun::start(generation::Generator& engine, generation::GenerationRequest request,
                        const boost::asio::any_io_executor& executor) {
  prompt_tokens_ = static_cast<std::int32_t>(request.prompt.size());
  if (found_.hit) return {};
  record_ = caching() && directives.store;
  Status status = engine.submit(std::move(request), executor, stream_);
  if (status.ok()) cancel_on_exit_.emplace(*stream_);
  return status;
}

boost::asio::awaitable<bool> CachedRun::next(generation::GenerationUpdate& out) {
  using generation::FinishReason;
  if (found_.hit) {
    if (replayed_ >= answer_.pieces.size()) co_return false;
    out = generation::GenerationUpdate{};
    out.text = answer_.pieces[replayed_++];
    if (replayed_ == answer_.pieces.size()) {
      out.finish = answer_.finish;
      out.prompt_tokens = prompt_tokens_;
      out.completion_tokens = answer_.completion_tokens;
    }
    co_return true;
  }
  if (!co_await stream_->next(out)) co_return false;
  if (record_) {
    recorded_.pieces.push_back(out.text);
    if (out.finish == FinishReason::stop || out.finish == FinishReason::length) {
      // Complete: stored before the adapter writes the last of it, whether or not the client
      // reads it.
      recorded_.finish = out.finish;
      recorded_.completion_tokens = out.completion_tokens;
      stored_ = stage_->store({directives.ns, scope, text}, directives, found_, encode(recorded_));
    }
  }
  co_return true;
}

CacheOutcome CachedRun::outcome() const {
  return caching() ? found_.outcome(stored_) : CacheOutcome{};
}

}  // namespace coinfer::cached_generation
