#include "cached_generation.hpp"

#include <cstdio>
#include <cstring>

namespace coinfer::cached_generation {
namespace {

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

}  // namespace

std::string encode(const CachedGeneration& c) {
  std::string out;
  put<std::uint8_t>(out, c.finish == generation::FinishReason::length ? 2 : 1);
  put<std::int32_t>(out, c.completion_tokens);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(c.pieces.size()));
  for (const auto& piece : c.pieces) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(piece.size()));
    out += piece;
  }
  return out;
}

bool decode(std::string_view in, CachedGeneration& out) {
  auto get = [&in](auto& value) {
    if (in.size() < sizeof(value)) return false;
    std::memcpy(&value, in.data(), sizeof(value));
    in.remove_prefix(sizeof(value));
    return true;
  };
  std::uint8_t finish = 0;
  std::uint32_t count = 0;
  if (!get(finish) || !get(out.completion_tokens) || !get(count) || (finish != 1 && finish != 2) ||
      count == 0) {
    return false;
  }
  out.finish = finish == 2 ? generation::FinishReason::length : generation::FinishReason::stop;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t size = 0;
    if (!get(size) || in.size() < size) return false;
    out.pieces.emplace_back(in.substr(0, size));
    in.remove_prefix(size);
  }
  return in.empty();
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

boost::asio::awaitable<bool> UpdateSource::next(generation::GenerationUpdate& out) {
  if (live_) co_return co_await live_->next(out);
  if (next_ >= cached_->pieces.size()) co_return false;
  out = generation::GenerationUpdate{};
  out.text = cached_->pieces[next_++];
  if (next_ == cached_->pieces.size()) {
    out.finish = cached_->finish;
    out.prompt_tokens = prompt_tokens_;
    out.completion_tokens = cached_->completion_tokens;
  }
  co_return true;
}

}  // namespace coinfer::cached_generation
