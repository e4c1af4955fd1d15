#include "coinfer/generation/output_processor.hpp"

#include <algorithm>

#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer::generation {

namespace {
double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// How many bytes at the end of `text` are an incomplete UTF-8 character (0 if none).
std::size_t partial_utf8_suffix(std::string_view text) noexcept {
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= std::min<std::size_t>(n, 4); ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    const std::size_t len = c < 0x80           ? 1
                            : (c >> 5) == 0x6  ? 2
                            : (c >> 4) == 0xE  ? 3
                            : (c >> 3) == 0x1E ? 4
                                               : 1;
    return len > back ? back : 0;
  }
  return 0;
}
}  // namespace

OutputProcessor::OutputProcessor(const ByteLevelBpeTokenizer& tokenizer, std::int32_t max_model_len,
                                 GenerationMetrics& metrics)
    : tokenizer_(tokenizer), max_model_len_(max_model_len), metrics_(metrics) {
  // SmolLM2: eos is <|im_end|>; a completion of plain text ends with <|endoftext|>.
  if (tokenizer_.eos_id() >= 0) end_ids_.push_back(tokenizer_.eos_id());
  for (const char* marker : {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>"}) {
    if (auto id = tokenizer_.token_id(marker);
        id && std::find(end_ids_.begin(), end_ids_.end(), *id) == end_ids_.end()) {
      end_ids_.push_back(*id);
    }
  }
}

void OutputProcessor::finish(Sequence& seq, FinishReason reason, Status error) {
  // Whatever text is held back is complete now (a stop string would have matched already).
  if (reason == FinishReason::length || (reason == FinishReason::stop && !seq.held.empty())) {
    seq.update.text += seq.held;
    seq.held.clear();
  }
  seq.finish = reason;
  seq.update.finish = reason;
  seq.update.error = std::move(error);
  seq.update.prompt_tokens = seq.prompt_len;
  seq.update.completion_tokens = std::max(0, seq.generated());
  seq.update.cached_tokens = seq.cached_tokens;
  if (reason == FinishReason::stop || reason == FinishReason::length) {
    metrics_.request_success.add();
    metrics_.e2e_request_latency_s.observe(seconds(Clock::now() - seq.arrival));
  } else {
    metrics_.request_failure.add();
  }
}

void OutputProcessor::flush(Sequence& seq) {
  const bool final = seq.update.finish != FinishReason::none;
  if (!final && seq.update.tokens.empty() && seq.update.text.empty()) return;
  if (seq.stream) seq.stream->push(std::move(seq.update));
  seq.update = {};
}

// Moves held text into the update: all of it but a trailing partial UTF-8 character and a
// suffix that could begin a stop string.
void OutputProcessor::release_text(Sequence& seq) {
  std::size_t keep = partial_utf8_suffix(seq.held);
  if (seq.max_stop > 1) keep = std::max(keep, std::min(seq.held.size(), seq.max_stop - 1));
  const std::size_t send = seq.held.size() - keep;
  if (send == 0) return;
  seq.update.text.append(seq.held, 0, send);
  seq.sent_tail.append(seq.held, 0, send);
  if (seq.sent_tail.size() > seq.max_stop)
    seq.sent_tail.erase(0, seq.sent_tail.size() - seq.max_stop);
  seq.held.erase(0, send);
}

void OutputProcessor::append(Sequence& seq, const SampleResult& sample) {
  const auto& r = seq.request;
  const auto token = sample.token;
  const auto now = Clock::now();
  if (!seq.first_token) {
    seq.first_token = true;
    metrics_.time_to_first_token_s.observe(seconds(now - seq.arrival));
  } else {
    metrics_.time_per_output_token_s.observe(seconds(now - seq.last_token));
  }
  seq.last_token = now;
  metrics_.generation_tokens.add();
  seq.tokens.push_back(token);
  const bool may_stop = seq.generated() >= r.min_tokens;
  const bool eos =
      !r.ignore_eos && std::find(end_ids_.begin(), end_ids_.end(), token) != end_ids_.end();
  const bool stop_id =
      std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), token) != r.stop_token_ids.end();
  if (may_stop && (eos || stop_id)) {
    finish(seq, FinishReason::stop);
    return;
  }
  seq.update.tokens.push_back(GeneratedToken{token, sample.logprob, sample.top});
  if (!(r.skip_special_tokens && tokenizer_.is_control(token))) {
    (void)tokenizer_.token_bytes(token, seq.held);
  }
  // Stop strings: search the held text together with the tail already sent, for matches that
  // end in the held text (one wholly in the sent tail was sent before min_tokens allowed
  // stopping, and does not stop the generation now, as in vLLM).
  if (may_stop && seq.max_stop > 0) {
    const std::string window = seq.sent_tail + seq.held;
    std::size_t cut = std::string::npos;
    for (const auto& s : r.stop) {
      if (s.empty()) continue;
      const std::size_t sent = seq.sent_tail.size();
      const auto at = window.find(s, sent >= s.size() ? sent - s.size() + 1 : 0);
      if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
      // Text before the stop string that was not sent yet goes out; the rest is dropped.
      if (cut > seq.sent_tail.size())
        seq.update.text += seq.held.substr(0, cut - seq.sent_tail.size());
      seq.held.clear();
      finish(seq, FinishReason::stop);
      return;
    }
  }
  release_text(seq);
  if (seq.generated() >= r.max_tokens ||
      static_cast<std::int32_t>(seq.tokens.size()) >= max_model_len_) {
    finish(seq, FinishReason::length);
  }
}

}  // namespace coinfer::generation
