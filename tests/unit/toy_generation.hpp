#pragma once
// A toy vocabulary and a fake model runner: the generation engine's parts tested without a
// model file.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <vector>

#include "coinfer/generation/model_runner.hpp"
#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer::test {

// Byte-level form: "Ġ" is the space, "Ã" "©" the bytes C3 A9 (é in UTF-8).
enum ToyToken : std::int32_t {
  im_end = 0,        // <|im_end|>, control, the end-of-sequence token
  endoftext = 1,     // <|endoftext|>, control
  hello = 2,         // "Hello"
  world = 3,         // " world"
  bang = 4,          // "!"
  space_st = 5,      // " ST"
  op = 6,            // "OP"
  e_acute_lead = 7,  // byte C3
  e_acute_tail = 8,  // byte A9
  end_word = 9,      // " end"
  im_start = 10,     // <|im_start|>, control
};
inline constexpr std::int32_t toy_vocab_size = 13 + ('~' - '"' + 1);

// After these: one token for each printable ASCII character (and "Ġ", "Ċ": space and newline),
// so that any ASCII text encodes, byte by byte (no merges).
inline std::unique_ptr<ByteLevelBpeTokenizer> toy_tokenizer() {
  BpeVocabulary v;
  v.tokens = {"<|im_end|>", "<|endoftext|>", "Hello",        "Ġworld", "!", "ĠST", "OP", "Ã",
              "©",          "Ġend",          "<|im_start|>", "Ġ",      "Ċ"};
  for (char c = '"'; c <= '~'; ++c) v.tokens.emplace_back(1, c);
  v.token_types.assign(v.tokens.size(), BpeVocabulary::normal);
  v.token_types[im_start] = BpeVocabulary::control;
  v.token_types[im_end] = BpeVocabulary::control;
  v.token_types[endoftext] = BpeVocabulary::control;
  v.eos_id = im_end;
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  const Status status = ByteLevelBpeTokenizer::create(std::move(v), tokenizer);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return tokenizer;
}

// The tokens a FakeRunner's logits pick from: all have text, none ends a generation.
inline const std::vector<std::int32_t> toy_script = {hello, world, bang, space_st, op, end_word};

// A runner whose "model" attends over its paged KV cache: it writes each fed token into the
// slot the block table names, and the likeliest next token after position p is
// script[(sum of the tokens at positions 0..p, read back through the table) % script size].
// A wrong table, a lost copy-on-write or a bad prefix-cache hit changes the sum, so the
// tokens a sequence makes show whether its KV was right. `gate` holds execute() until opened.
class FakeRunner final : public generation::ModelRunner {
 public:
  FakeRunner(std::int32_t vocab, std::int32_t kv_blocks, std::int32_t block_size,
             std::vector<std::int32_t> script, std::int32_t max_step_tokens = 32,
             std::int32_t context = 256)
      : script_(std::move(script)), kv_(static_cast<std::size_t>(kv_blocks * block_size), -1) {
    limits_ = {vocab, context, kv_blocks, block_size, max_step_tokens};
  }

  // What greedy decoding must produce for `prompt`, `count` tokens.
  static std::vector<std::int32_t> expected(std::vector<std::int32_t> tokens, std::size_t count,
                                            const std::vector<std::int32_t>& script) {
    const std::size_t prompt = tokens.size();
    while (tokens.size() < prompt + count) {
      const auto sum = std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0});
      tokens.push_back(script[static_cast<std::size_t>(sum) % script.size()]);
    }
    return {tokens.begin() + static_cast<std::ptrdiff_t>(prompt), tokens.end()};
  }

  const generation::RunnerLimits& limits() const noexcept override { return limits_; }

  void copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) override {
    const auto bs = static_cast<std::size_t>(limits_.block_size);
    for (auto [src, dst] : copies) {
      std::copy_n(kv_.begin() + static_cast<std::ptrdiff_t>(src * bs), bs,
                  kv_.begin() + static_cast<std::ptrdiff_t>(dst * bs));
    }
  }

  Status execute(std::span<const generation::ScheduledChunk> chunks,
                 std::vector<float>& logits) override {
    {
      std::unique_lock lock(mutex_);
      ++entered_;
      entered_cv_.notify_all();
      gate_cv_.wait(lock, [&] { return open_; });
    }
    ++steps;
    const auto vocab = static_cast<std::size_t>(limits_.vocab);
    std::size_t rows = 0;
    for (const auto& c : chunks) rows += static_cast<std::size_t>(c.logit_rows);
    logits.assign(rows * vocab, 0.0f);
    std::size_t row = 0;
    for (const auto& c : chunks) {
      if (c.tokens.size() > 1 || c.position == 0) ++prefill_chunks;
      for (std::size_t i = 0; i < c.tokens.size(); ++i)
        slot(c, c.position + static_cast<std::int32_t>(i)) = c.tokens[i];
      const auto end = c.position + static_cast<std::int32_t>(c.tokens.size());
      for (auto last = end - c.logit_rows; last < end; ++last, ++row) {
        std::int64_t sum = 0;
        for (std::int32_t p = 0; p <= last; ++p) {
          const auto token = slot(c, p);
          if (token < 0) kv_missing = true;  // a position the cache should hold was never written
          sum += token;
        }
        const auto next = script_[static_cast<std::size_t>(sum) % script_.size()];
        logits[row * vocab + static_cast<std::size_t>(next)] = 10.0f;
      }
    }
    return {};
  }

  void close_gate() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open_gate() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    gate_cv_.notify_all();
  }
  // Waits until execute() was entered `n` times in all.
  void wait_entered(int n) {
    std::unique_lock lock(mutex_);
    entered_cv_.wait(lock, [&] { return entered_ >= n; });
  }

  // Playing a runner that samples on its device: a row's token drawn from its logits as
  // cuda::sample_rows does (greedy: the first argmax; else softmax at the temperature, the
  // uniform's place in the cumulative weight in vocabulary order; top-k/p ignored).
  bool device_sampling = false;
  bool samples_on_device() const noexcept override { return device_sampling; }
  Status execute_sampled(std::span<const generation::ScheduledChunk> chunks,
                         std::span<const generation::DeviceDraw> draws,
                         std::vector<std::int32_t>& tokens) override {
    ++sampled_steps;
    std::vector<float> logits;
    if (auto s = execute(chunks, logits); !s.ok()) return s;
    const auto vocab = static_cast<std::size_t>(limits_.vocab);
    REQUIRE(draws.size() * vocab == logits.size());
    tokens.clear();
    for (std::size_t r = 0; r < draws.size(); ++r) {
      const float* row = logits.data() + r * vocab;
      const auto top = std::max_element(row, row + vocab) - row;
      if (draws[r].temperature < 1e-5f) {
        tokens.push_back(static_cast<std::int32_t>(top));
        continue;
      }
      double total = 0;
      std::vector<double> weight(vocab);
      for (std::size_t t = 0; t < vocab; ++t)
        total += weight[t] = std::exp((row[t] - row[top]) / draws[r].temperature);
      double at = draws[r].uniform * total;
      std::size_t t = 0;
      while (t + 1 < vocab && at >= weight[t]) at -= weight[t++];
      tokens.push_back(static_cast<std::int32_t>(t));
    }
    return {};
  }

  std::atomic<int> steps{0};
  std::atomic<int> sampled_steps{0};  // of them, through execute_sampled
  std::atomic<int> prefill_chunks{0};
  std::atomic<bool> kv_missing{false};

 private:
  std::int32_t& slot(const generation::ScheduledChunk& c, std::int32_t position) {
    const auto bs = limits_.block_size;
    const auto block = c.block_table[static_cast<std::size_t>(position / bs)];
    return kv_[static_cast<std::size_t>(block * bs + position % bs)];
  }

  generation::RunnerLimits limits_;
  std::vector<std::int32_t> script_;
  std::vector<std::int32_t> kv_;  // [kv_blocks, block_size]: the token at each slot, -1 unset
  std::mutex mutex_;
  std::condition_variable gate_cv_, entered_cv_;
  bool open_ = true;
  int entered_ = 0;
};

}  // namespace coinfer::test
