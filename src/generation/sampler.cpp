#include "coinfer/generation/sampler.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <charconv>
#include <cstring>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>

#include "coinfer/ops/vector_exp.hpp"

namespace coinfer::generation {

namespace {

// vLLM's _SAMPLING_EPS: below it dividing by the temperature only amplifies rounding, and
// the draw is the argmax anyway.
constexpr float kGreedyTemperature = 1e-5f;
constexpr std::int32_t kMaxLogprobs = 20;  // OpenAI's top_logprobs limit
// Top-p sums the candidates' weights into this many buckets by logit, then orders only the
// tokens of the bucket where the mass reaches p.
constexpr std::size_t kTopPBuckets = 1024;

// A token's rank as one integer: higher logit first, ties to the lower id (the order greedy
// and the logprob alternatives follow too). Top-k and top-p select on these keys: a plain
// integer compare, where a comparator reading logits through ids would miss the cache.
std::uint64_t rank_key(float logit, std::int32_t id) {
  auto bits = std::bit_cast<std::uint32_t>(logit + 0.0f);         // -0 -> +0
  bits = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;  // ordered as the floats
  return std::uint64_t{bits} << 32 | (0xFFFFFFFFu - static_cast<std::uint32_t>(id));
}

std::int32_t id_of(std::uint64_t key) {
  return static_cast<std::int32_t>(0xFFFFFFFFu - static_cast<std::uint32_t>(key));
}

// 53 random bits; mt19937_64's output is fixed by the standard, so the same seed draws the
// same tokens with any standard library (std::uniform_real_distribution is not so pinned).
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

std::string number(float value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return {buffer, end};
}

Status out_of_range(std::string_view field, std::string_view range, std::string got) {
  return Status::invalid(std::string(field) + ": must be " + std::string(range) + ", got " + got);
}

// The first index of the largest logit (NaNs never win). Two passes that vectorize: the
// maximum, then where it first occurs.
std::int32_t argmax(std::span<const float> logits) {
  simd::v8f lanes = simd::v8f{} + logits[0];
  std::size_t i = 0;
  for (; i + 8 <= logits.size(); i += 8) {
    simd::v8f x;
    std::memcpy(&x, logits.data() + i, sizeof x);
    lanes = x > lanes ? x : lanes;
  }
  float best = logits[0];
  for (int l = 0; l < 8; ++l) best = lanes[l] > best ? lanes[l] : best;
  for (; i < logits.size(); ++i) best = logits[i] > best ? logits[i] : best;
  for (i = 0; i < logits.size(); ++i) {
    if (logits[i] == best) return static_cast<std::int32_t>(i);
  }
  return 0;  // the first logit NaN (no logit compares above it)
}

// log(sum(exp(logits))), summed in double so that 49k terms lose nothing.
float log_sum_exp(std::span<const float> logits) {
  const float max = *std::ranges::max_element(logits);
  assert(std::isfinite(max) && "every logit masked out");
  double sum = 0.0;
  for (const auto x : logits) sum += std::exp(x - max);
  return max + static_cast<float>(std::log(sum));
}

// The n likeliest tokens in rank_key's order, as (id, logit); one pass with a sorted n-slot buffer.
void likeliest(std::span<const float> logits, std::int32_t n, std::vector<TokenLogprob>& top) {
  top.clear();
  if (n <= 0) return;
  top.reserve(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const auto x = logits[i];
    if (static_cast<std::int32_t>(top.size()) == n) {
      if (!(x > top.back().logprob)) continue;  // ties keep the lower id already there
      top.pop_back();
    }
    const auto at = std::ranges::find_if(top, [x](const TokenLogprob& t) { return t.logprob < x; });
    top.insert(at, {static_cast<std::int32_t>(i), x});
  }
}

}  // namespace

Status SamplingParams::validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature))
    return out_of_range("temperature", ">= 0", number(temperature));
  if (top_k < -1) return out_of_range("top_k", "-1 or 0 (off) or >= 1", std::to_string(top_k));
  if (!(top_p > 0.0f && top_p <= 1.0f)) return out_of_range("top_p", "in (0, 1]", number(top_p));
  if (!(min_p >= 0.0f && min_p <= 1.0f)) return out_of_range("min_p", "in [0, 1]", number(min_p));
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f))
    return out_of_range("presence_penalty", "in [-2, 2]", number(presence_penalty));
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    return out_of_range("frequency_penalty", "in [-2, 2]", number(frequency_penalty));
  if (!(repetition_penalty > 0.0f) || !std::isfinite(repetition_penalty))
    return out_of_range("repetition_penalty", "> 0", number(repetition_penalty));
  if (logprobs < -1 || logprobs > kMaxLogprobs)
    return out_of_range("logprobs", "in [0, 20]", std::to_string(logprobs));
  if (logit_bias.size() > kMaxLogitBias) {
    return Status::invalid("logit_bias: at most " + std::to_string(kMaxLogitBias) + " entries");
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) return out_of_range("logit_bias", "keyed by token ids >= 0", std::to_string(id));
    if (!(bias >= -100.0f && bias <= 100.0f)) {
      return out_of_range("logit_bias[" + std::to_string(id) + "]", "in [-100, 100]", number(bias));
    }
  }
  return {};
}

Sampler::Sampler(std::int32_t vocab_size)
    : candidates_(static_cast<std::size_t>(vocab_size)),
      weights_(static_cast<std::size_t>(vocab_size)),
      keys_(static_cast<std::size_t>(vocab_size)) {}

void Sampler::apply_penalties(std::span<float> logits, const SamplingParams& params,
                              std::span<const std::int32_t> generated) {
  penalized_.clear();
  const bool active = params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f ||
                      params.repetition_penalty != 1.0f;
  if (!active || generated.empty()) return;
  history_.assign(generated.begin(), generated.end());
  std::ranges::sort(history_);
  for (std::size_t i = 0; i < history_.size();) {
    const auto id = history_[i];
    const auto run_start = i;
    while (i < history_.size() && history_[i] == id) ++i;
    const auto count = static_cast<float>(i - run_start);
    assert(id >= 0 && static_cast<std::size_t>(id) < logits.size());
    if (id < 0 || static_cast<std::size_t>(id) >= logits.size()) continue;
    auto& x = logits[static_cast<std::size_t>(id)];
    penalized_.emplace_back(id, x);
    if (params.repetition_penalty != 1.0f)
      x = x > 0.0f ? x / params.repetition_penalty : x * params.repetition_penalty;
    x -= params.frequency_penalty * count + params.presence_penalty;
  }
}

void Sampler::apply_logit_bias(std::span<float> logits, const SamplingParams& params) {
  for (const auto& [id, bias] : params.logit_bias) {
    if (id < 0 || static_cast<std::size_t>(id) >= logits.size()) continue;
    auto& x = logits[static_cast<std::size_t>(id)];
    // Keep the logit before the chain (the penalty's record, if it changed it first).
    const auto at =
        std::ranges::lower_bound(penalized_, id, {}, [](const auto& e) { return e.first; });
    if (at == penalized_.end() || at->first != id) penalized_.insert(at, {id, x});
    x += bias;
  }
}

float Sampler::raw_logit(std::span<const float> logits, std::int32_t token) const {
  const auto it = std::ranges::lower_bound(penalized_, token, {},
                                           [](const auto& entry) { return entry.first; });
  if (it != penalized_.end() && it->first == token) return it->second;
  return logits[static_cast<std::size_t>(token)];
}

SampleResult Sampler::sample(std::span<float> logits, const SamplingParams& params,
                             std::span<const std::int32_t> generated, std::mt19937_64& rng,
                             std::span<LogitsProcessor* const> processors) {
  assert(!logits.empty());
  if (candidates_.size() < logits.size()) {
    candidates_.resize(logits.size());
    weights_.resize(logits.size());
    keys_.resize(logits.size());
  }
  SampleResult result;
  float log_z = 0.0f;  // of the raw logits
  if (params.logprobs >= 0) {
    log_z = log_sum_exp(logits);
    likeliest(logits, params.logprobs, result.top);
    for (auto& t : result.top) t.logprob -= log_z;
  }
  const bool snapshot = params.logprobs >= 0 && !processors.empty();
  if (snapshot) raw_row_.assign(logits.begin(), logits.end());
  apply_penalties(logits, params, generated);
  apply_logit_bias(logits, params);
  for (LogitsProcessor* processor : processors) processor->apply(logits, generated);
  const bool greedy = params.temperature < kGreedyTemperature || params.top_k == 1;
  result.token = greedy ? argmax(logits) : draw(logits, params, rng);
  if (params.logprobs >= 0) {
    const float raw = snapshot ? raw_row_[static_cast<std::size_t>(result.token)]
                               : raw_logit(logits, result.token);
    result.logprob = raw - log_z;
  }
  return result;
}

std::int32_t Sampler::draw(std::span<const float> logits, const SamplingParams& params,
                           std::mt19937_64& rng) {
  const auto vocab = logits.size();
  auto* const first = candidates_.data();
  std::size_t n = vocab;
  if (params.top_k > 0 && static_cast<std::size_t>(params.top_k) < vocab) {
    n = static_cast<std::size_t>(params.top_k);
    auto* const keys = keys_.data();
    for (std::size_t i = 0; i < vocab; ++i)
      keys[i] = rank_key(logits[i], static_cast<std::int32_t>(i));
    std::nth_element(keys, keys + n - 1, keys + vocab, std::greater<>());
    for (std::size_t i = 0; i < n; ++i) first[i] = id_of(keys[i]);
  } else {
    std::iota(first, first + vocab, 0);
  }

  float max = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    max = std::max(max, logits[static_cast<std::size_t>(first[i])]);
  assert(std::isfinite(max) && "every logit masked out");
  // The likeliest candidate weighs exactly 1, so min-p compares weights with min_p itself.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<std::size_t>(first[i]);
    const auto w = std::exp((logits[id] - max) / params.temperature);
    weights_[id] = w;
    if (w > 0.0f && w >= params.min_p) first[kept++] = static_cast<std::int32_t>(id);
  }
  n = kept;
  assert(n > 0 && "min_p above 1");

  if (params.top_p < 1.0f) n = nucleus(logits, n, params.top_p);

  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += weights_[static_cast<std::size_t>(first[i])];
  const double target = uniform01(rng) * total;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += weights_[static_cast<std::size_t>(first[i])];
    if (target < sum) return first[i];
  }
  return first[n - 1];  // rounding left target at the very top
}

// Moves the smallest set of likeliest candidates whose weight reaches top_p of the total to
// the front of candidates_ and returns its size. Expected O(n) with no sort: one pass sums
// the weights into buckets by logit (bucket 0 the likeliest), which finds the bucket where the
// mass reaches p; a second pass keeps the buckets before it; then a selection that halves the
// range holding the boundary runs over that bucket's tokens only (all of them only when the
// logits are nearly flat).
std::size_t Sampler::nucleus(std::span<const float> logits, std::size_t n, float top_p) {
  auto* const first = candidates_.data();
  const auto weight = [this](std::int32_t id) { return weights_[static_cast<std::size_t>(id)]; };
  float max = -std::numeric_limits<float>::infinity();
  float min = std::numeric_limits<float>::infinity();
  double mass = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = logits[static_cast<std::size_t>(first[i])];
    max = std::max(max, x);
    min = std::min(min, x);
    mass += weight(first[i]);
  }
  const double wanted = static_cast<double>(top_p) * mass;

  auto scale = static_cast<float>(kTopPBuckets - 1) / (max - min);
  if (!std::isfinite(scale)) scale = 0.0f;    // all (nearly) equal: one bucket
  const auto bucket = [&](std::int32_t id) {  // monotone: a likelier token never sorts later
    const auto b = static_cast<std::size_t>((max - logits[static_cast<std::size_t>(id)]) * scale);
    return std::min(b, kTopPBuckets - 1);
  };
  std::array<double, kTopPBuckets> bucket_mass{};
  for (std::size_t i = 0; i < n; ++i) bucket_mass[bucket(first[i])] += weight(first[i]);
  double kept = 0.0;
  std::size_t boundary = 0;
  for (; boundary + 1 < kTopPBuckets; ++boundary) {
    if (kept + bucket_mass[boundary] >= wanted) break;
    kept += bucket_mass[boundary];
  }

  std::size_t front = 0, tied = 0;
  auto* const keys = keys_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = first[i];
    const auto b = bucket(id);
    if (b < boundary)
      first[front++] = id;
    else if (b == boundary)
      keys[tied++] = rank_key(logits[static_cast<std::size_t>(id)], id);
  }
  // Invariant: keys [0, lo) are the bucket's lo likeliest and, with the buckets before it,
  // weigh `kept` < wanted; the answer is in (lo, hi], and [lo, hi) hold the next likeliest.
  std::size_t lo = 0, hi = tied;
  while (hi - lo > 1) {
    const auto mid = lo + (hi - lo) / 2;
    std::nth_element(keys + lo, keys + mid, keys + hi, std::greater<>());
    double upper = kept;
    for (auto i = lo; i < mid; ++i) upper += weight(id_of(keys[i]));
    if (upper >= wanted) {
      hi = mid;
    } else {
      lo = mid;
      kept = upper;
    }
  }
  for (std::size_t i = 0; i < hi; ++i) first[front + i] = id_of(keys[i]);
  return front + hi;
}

}  // namespace coinfer::generation
