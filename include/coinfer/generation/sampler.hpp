#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer::generation {

// How one request picks its next token. Field names and meanings follow the OpenAI API;
// min_p and repetition_penalty are vLLM's.
struct SamplingParams {
  float temperature = 1.0f;  // >= 0; below 1e-5 is greedy (argmax, ties to the lowest id)
  std::int32_t top_k = 0;    // 0 or -1: off
  float top_p = 1.0f;        // (0, 1]
  float min_p = 0.0f;        // [0, 1]: drop tokens less likely than min_p x the likeliest
  // [-2, 2]. Over the generated tokens only: logit -= presence_penalty if the token was
  // generated, and -= frequency_penalty x the number of times it was.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  // > 0; 1 is off. A generated token's logit is divided by it if positive, multiplied if
  // negative (HF/vLLM, which also count prompt tokens; here only generated ones).
  float repetition_penalty = 1.0f;
  // The caller seeds the request's generator from it; without one, from its own entropy.
  std::optional<std::uint64_t> seed{};
  std::int32_t logprobs = -1;  // -1: none; 0..20: the chosen token's logprob and that many top
  // OpenAI's logit_bias: (token id, bias in [-100, 100]) added to the token's logit after the
  // penalties; -100 in effect bans a token, +100 forces it. At most kMaxLogitBias entries.
  std::vector<std::pair<std::int32_t, float>> logit_bias{};
  static constexpr std::size_t kMaxLogitBias = 1024;

  // The first field out of range, named as in the OpenAI request ("top_p: must be in (0, 1],
  // got 0").
  Status validate() const;
};

// One stage of the chain that changes a row of logits before a token is drawn (vLLM's logits
// processors, llama.cpp's sampler chain), given the request's generated tokens: a grammar's mask
// of the tokens it allows, a custom bias. A processor with state (a grammar's position) belongs
// to one sequence and keeps that state itself.
class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  virtual void apply(std::span<float> logits, std::span<const std::int32_t> generated) = 0;
};

struct TokenLogprob {
  std::int32_t id = 0;
  float logprob = 0.0f;
};

struct SampleResult {
  std::int32_t token = 0;
  float logprob = 0.0f;           // of `token`; 0 unless logprobs >= 0
  std::vector<TokenLogprob> top;  // the `logprobs` likeliest tokens, likeliest first
};

// Picks the next token from one row of logits: a chain of stages, in vLLM v1's order. First the
// ones that change logits: penalties, the logit bias, then the request's own LogitsProcessors
// (grammar masks); then the ones that choose: temperature, min-p / top-k (both keep the top of
// one ranking, so their order does not matter), top-p over what is left, and a draw (greedy:
// the argmax). Logprobs are vLLM v1's default
// ("raw_logprobs"): log-softmax of the model's logits before penalties and temperature, so
// they describe the model, not the sampling settings.
//
// Work per call, vocab V: greedy is one pass (two more with logprobs); sampling adds an exp
// per token left after top-k, nth_element for top-k, and for top-p two passes that bucket
// the mass by logit plus a selection within one bucket (expected O(n), no sort). Penalties touch
// only the generated tokens. Scratch is sized at construction (the penalty history grows to the
// longest generation seen), so calls do not allocate beyond SampleResult::top; hence one Sampler
// per decode thread.
class Sampler {
 public:
  explicit Sampler(std::int32_t vocab_size = 0);

  // `logits` is a scratch row the caller owns, [vocab]; it is left holding the penalized
  // logits. `generated` are the request's tokens so far (not the prompt). `rng` is the
  // request's generator: the same seed, logits and params give the same tokens.
  SampleResult sample(std::span<float> logits, const SamplingParams& params,
                      std::span<const std::int32_t> generated, std::mt19937_64& rng,
                      std::span<LogitsProcessor* const> processors = {});

  // The penalty stage alone, in place.
  void apply_penalties(std::span<float> logits, const SamplingParams& params,
                       std::span<const std::int32_t> generated);
  // The logit-bias stage alone, in place (ids outside the row are skipped).
  void apply_logit_bias(std::span<float> logits, const SamplingParams& params);

 private:
  std::int32_t draw(std::span<const float> logits, const SamplingParams& params,
                    std::mt19937_64& rng);
  std::size_t nucleus(std::span<const float> logits, std::size_t n, float top_p);
  float raw_logit(std::span<const float> logits, std::int32_t token) const;

  std::vector<std::int32_t> candidates_;  // token ids still in the running, [vocab]
  std::vector<float> weights_;            // by token id: exp((logit - max) / temperature), [vocab]
  std::vector<std::uint64_t> keys_;       // (logit, id) packed to sort as one integer, [vocab]
  std::vector<std::int32_t> history_;     // `generated`, sorted: runs of one id are its count
  // Each token the penalties or the bias changed and its logit before, by id: raw logprobs
  // need them.
  std::vector<std::pair<std::int32_t, float>> penalized_;
  // The whole row before the chain, kept only when logprobs are asked for and processors run
  // (they may change any logit), [vocab].
  std::vector<float> raw_row_;
};

}  // namespace coinfer::generation
