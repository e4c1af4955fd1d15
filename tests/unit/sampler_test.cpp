#include "coinfer/generation/sampler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using coinfer::generation::Sampler;
using coinfer::generation::SampleResult;
using coinfer::generation::SamplingParams;

namespace {

using Logits = std::vector<float>;

// Logits whose softmax is `probabilities` (which sum to 1) at temperature 1.
Logits log_of(std::initializer_list<double> probabilities) {
  Logits logits;
  for (const auto p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

Logits random_logits(std::size_t vocab, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  Logits logits(vocab);
  for (auto& x : logits) x = normal(rng);
  return logits;
}

// How often each token is drawn in `draws` samples (each from a fresh copy of the logits).
std::vector<int> histogram(const Logits& logits, const SamplingParams& params, int draws,
                           std::uint64_t seed = 1) {
  Sampler sampler(static_cast<std::int32_t>(logits.size()));
  std::mt19937_64 rng(seed);
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    auto scratch = logits;
    ++counts[static_cast<std::size_t>(sampler.sample(scratch, params, {}, rng).token)];
  }
  return counts;
}

// Pearson's chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& expected) {
  const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
  double chi2 = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double e = expected[i] * n;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi2;
}

std::vector<double> log_softmax(const Logits& logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const auto x : logits) sum += std::exp(x - max);
  std::vector<double> out;
  for (const auto x : logits) out.push_back(x - max - std::log(sum));
  return out;
}

}  // namespace

TEST_CASE("greedy picks the largest logit, ties to the lowest id") {
  Sampler sampler(5);
  std::mt19937_64 rng(1);
  SamplingParams greedy{.temperature = 0.0f};
  Logits logits{1.0f, 3.0f, -2.0f, 3.0f, 2.5f};
  CHECK(sampler.sample(logits, greedy, {}, rng).token == 1);
  Logits masked{-INFINITY, 0.5f, -INFINITY};
  CHECK(sampler.sample(masked, greedy, {}, rng).token == 1);

  // A vocabulary as large as SmolLM2's plus a tail the vector loop leaves: the largest logit,
  // twice, in the vector part, in the tail, and at the very first and last ids; a NaN never
  // wins. The answer is the scalar scan's first maximum.
  const std::size_t vocab = 49152 + 5;
  Sampler large(static_cast<std::int32_t>(vocab));
  std::mt19937 values(3);
  std::uniform_real_distribution<float> logit(-10.0f, 10.0f);
  for (const std::size_t first : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{4097},
                                  vocab - 5, vocab - 1}) {
    CAPTURE(first);
    Logits row(vocab);
    for (auto& x : row) x = logit(values);
    row[100] = NAN;
    row[first] = 20.0f;
    if (first + 9 < vocab) row[first + 9] = 20.0f;  // the same maximum again, later
    CHECK(large.sample(row, greedy, {}, rng).token == static_cast<std::int32_t>(first));
  }
}

TEST_CASE("top_k of 1 is greedy whatever the temperature") {
  const auto logits = random_logits(1000, 3);
  const auto best =
      static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const auto counts = histogram(logits, {.temperature = 5.0f, .top_k = 1}, 200);
  CHECK(counts[static_cast<std::size_t>(best)] == 200);
}

TEST_CASE("temperature sharpens or flattens the distribution as softmax(logits / T)") {
  // At T = 0.5, logits 0.5 ln w draw token i with probability w_i / sum(w).
  const std::vector<double> expected{0.1, 0.2, 0.3, 0.4};
  Logits logits;
  for (const auto p : expected) logits.push_back(static_cast<float>(0.5 * std::log(p)));
  const auto counts = histogram(logits, {.temperature = 0.5f}, 20000);
  // 3 degrees of freedom: 16.3 is the 0.1% tail. The seed is fixed, so this cannot flake.
  CHECK(chi_square(counts, expected) < 16.3);

  // At T = 2 the same logits give sqrt(w) / sum(sqrt(w)).
  std::vector<double> flat;
  for (const auto p : expected) flat.push_back(std::pow(p, 0.25));
  const double sum = std::accumulate(flat.begin(), flat.end(), 0.0);
  for (auto& p : flat) p /= sum;
  CHECK(chi_square(histogram(logits, {.temperature = 2.0f}, 20000), flat) < 16.3);
}

TEST_CASE("top_k draws only from the k likeliest tokens") {
  const auto logits = log_of({0.1, 0.4, 0.2, 0.3});
  const auto counts = histogram(logits, {.top_k = 2}, 5000);
  CHECK(counts[0] == 0);
  CHECK(counts[2] == 0);
  CHECK(chi_square({counts[1], counts[3]}, {4.0 / 7, 3.0 / 7}) < 10.8);  // 1 dof, 0.1%
}

TEST_CASE("top_p keeps the smallest set of likeliest tokens whose mass reaches p") {
  const auto logits = log_of({0.5, 0.3, 0.15, 0.05});
  auto counts = histogram(logits, {.top_p = 0.75f}, 5000);
  CHECK(counts[2] + counts[3] == 0);
  CHECK(chi_square({counts[0], counts[1]}, {0.5 / 0.8, 0.3 / 0.8}) < 10.8);

  counts = histogram(logits, {.top_p = 0.81f}, 5000);
  CHECK(counts[0] > 0);
  CHECK(counts[1] > 0);
  CHECK(counts[2] > 0);
  CHECK(counts[3] == 0);

  counts = histogram(logits, {.top_p = 0.1f}, 100);
  CHECK(counts[0] == 100);
}

TEST_CASE("top_p over a large flat vocabulary keeps exactly half, lowest ids first") {
  // Every token is equally likely: the set reaching half the mass is half the vocabulary,
  // and the tie rule makes it the lower half: far past the sorted head, into the selection.
  const Logits logits(49152, 0.0f);
  const auto counts = histogram(logits, {.top_p = 0.5f}, 100);
  const auto lower = std::accumulate(counts.begin(), counts.begin() + 24576, 0);
  CHECK(lower == 100);
}

TEST_CASE("top_p over a large random vocabulary draws only from the set a full sort finds") {
  for (const float top_p : {0.3f, 0.9f, 0.99f}) {
    CAPTURE(top_p);
    const auto logits = random_logits(10000, 17);
    std::vector<std::int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)];
    });
    double mass = 0.0;
    for (const auto x : logits) mass += std::exp(static_cast<double>(x));
    std::set<std::int32_t> nucleus;
    double kept = 0.0;
    for (const auto id : order) {
      nucleus.insert(id);
      kept += std::exp(static_cast<double>(logits[static_cast<std::size_t>(id)]));
      if (kept >= top_p * mass) break;
    }
    const auto counts = histogram(logits, {.top_p = top_p}, 300);
    for (std::size_t id = 0; id < counts.size(); ++id) {
      if (counts[id] > 0) CHECK(nucleus.contains(static_cast<std::int32_t>(id)));
    }
    CHECK(counts[static_cast<std::size_t>(order[0])] > 0);
  }
}

TEST_CASE("min_p drops tokens less likely than min_p times the likeliest") {
  const auto logits = log_of({0.5, 0.3, 0.15, 0.05});
  auto counts = histogram(logits, {.min_p = 0.2f}, 5000);  // keeps p >= 0.1
  CHECK(counts[2] > 0);
  CHECK(counts[3] == 0);
  counts = histogram(logits, {.min_p = 0.5f}, 5000);  // keeps p >= 0.25
  CHECK(counts[2] == 0);
  CHECK(chi_square({counts[0], counts[1]}, {0.5 / 0.8, 0.3 / 0.8}) < 10.8);
}

TEST_CASE("presence and frequency penalties lower generated tokens' logits, OpenAI's way") {
  Sampler sampler(6);
  Logits logits(6, 1.0f);
  const std::vector<std::int32_t> generated{2, 4, 2, 2};
  sampler.apply_penalties(logits, {.presence_penalty = 0.5f, .frequency_penalty = 0.25f},
                          generated);
  CHECK(logits[2] == doctest::Approx(1.0 - 0.5 - 3 * 0.25));
  CHECK(logits[4] == doctest::Approx(1.0 - 0.5 - 1 * 0.25));
  for (const auto untouched : {0, 1, 3, 5})
    CHECK(logits[static_cast<std::size_t>(untouched)] == 1.0f);
}

TEST_CASE("repetition penalty divides positive logits and multiplies negative ones") {
  Sampler sampler(4);
  Logits logits{2.0f, -2.0f, 2.0f, -2.0f};
  const std::vector<std::int32_t> generated{0, 1, 1};
  sampler.apply_penalties(logits, {.repetition_penalty = 2.0f}, generated);
  CHECK(logits == Logits{1.0f, -4.0f, 2.0f, -2.0f});
}

TEST_CASE("penalties steer the draw and sample leaves the penalized logits") {
  Sampler sampler(3);
  std::mt19937_64 rng(1);
  Logits logits{1.0f, 0.9f, 0.0f};
  const std::vector<std::int32_t> generated{0};
  const auto result =
      sampler.sample(logits, {.temperature = 0.0f, .presence_penalty = 0.5f}, generated, rng);
  CHECK(result.token == 1);
  CHECK(logits[0] == doctest::Approx(0.5));
}

TEST_CASE("the same seed draws the same tokens") {
  const auto logits = random_logits(1000, 5);
  const SamplingParams params{.temperature = 1.2f, .top_k = 50, .top_p = 0.9f};
  auto draw = [&](std::uint64_t seed) {
    Sampler sampler(1000);
    std::mt19937_64 rng(seed);
    std::vector<std::int32_t> tokens;
    for (int i = 0; i < 100; ++i) {
      auto scratch = logits;
      tokens.push_back(sampler.sample(scratch, params, tokens, rng).token);
    }
    return tokens;
  };
  CHECK(draw(7) == draw(7));
  CHECK(draw(7) != draw(8));
}

TEST_CASE("logprobs are the raw log-softmax: the chosen token's and the likeliest ones") {
  const auto logits = random_logits(1000, 11);
  const auto reference = log_softmax(logits);
  Sampler sampler(1000);
  std::mt19937_64 rng(3);

  auto scratch = logits;
  const auto result = sampler.sample(scratch, {.temperature = 0.7f, .logprobs = 5}, {}, rng);
  CHECK(result.logprob ==
        doctest::Approx(reference[static_cast<std::size_t>(result.token)]).epsilon(1e-4));
  REQUIRE(result.top.size() == 5);
  double mass = 0.0;
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    const auto& t = result.top[i];
    CHECK(t.logprob == doctest::Approx(reference[static_cast<std::size_t>(t.id)]).epsilon(1e-4));
    if (i > 0) CHECK(t.logprob <= result.top[i - 1].logprob);
    mass += std::exp(t.logprob);
  }
  CHECK(mass <= 1.0);
  auto order = reference;
  std::sort(order.begin(), order.end(), std::greater<>());
  CHECK(result.top[0].logprob == doctest::Approx(order[0]).epsilon(1e-4));
  CHECK(result.top[4].logprob == doctest::Approx(order[4]).epsilon(1e-4));
}

TEST_CASE("logprobs ignore penalties, even for a penalized chosen token") {
  // A negative frequency penalty lifts token 17 to the top; its logprob is still the model's.
  const auto logits = random_logits(100, 13);
  const auto reference = log_softmax(logits);
  Sampler sampler(100);
  std::mt19937_64 rng(1);
  auto scratch = logits;
  const std::vector<std::int32_t> generated(10, 17);
  const auto result = sampler.sample(
      scratch, {.temperature = 0.0f, .frequency_penalty = -2.0f, .logprobs = 0}, generated, rng);
  CHECK(result.token == 17);
  CHECK(result.logprob == doctest::Approx(reference[17]).epsilon(1e-4));
  CHECK(result.top.empty());
}

TEST_CASE("without logprobs nothing is reported") {
  Sampler sampler(4);
  std::mt19937_64 rng(1);
  Logits logits{0.0f, 1.0f, 2.0f, 3.0f};
  const auto result = sampler.sample(logits, {}, {}, rng);
  CHECK(result.logprob == 0.0f);
  CHECK(result.top.empty());
}

TEST_CASE("validate names the first field out of range as the OpenAI request does") {
  CHECK(SamplingParams{}.validate().ok());
  CHECK(SamplingParams{.temperature = 0.0f,
                       .top_k = -1,
                       .top_p = 1.0f,
                       .min_p = 1.0f,
                       .presence_penalty = -2.0f,
                       .frequency_penalty = 2.0f,
                       .logprobs = 20}
            .validate()
            .ok());
  const auto message = [](const SamplingParams& params) {
    const auto status = params.validate();
    CHECK(status.code() == coinfer::Errc::invalid_argument);
    return status.message();
  };
  CHECK(message({.temperature = -1.0f}) == "temperature: must be >= 0, got -1");
  CHECK(message({.temperature = NAN}).starts_with("temperature: "));
  CHECK(message({.top_k = -2}) == "top_k: must be -1 or 0 (off) or >= 1, got -2");
  CHECK(message({.top_p = 0.0f}) == "top_p: must be in (0, 1], got 0");
  CHECK(message({.top_p = 1.5f}).starts_with("top_p: "));
  CHECK(message({.min_p = -0.1f}).starts_with("min_p: "));
  CHECK(message({.presence_penalty = 2.5f}) == "presence_penalty: must be in [-2, 2], got 2.5");
  CHECK(message({.frequency_penalty = -3.0f}).starts_with("frequency_penalty: "));
  CHECK(message({.repetition_penalty = 0.0f}) == "repetition_penalty: must be > 0, got 0");
  CHECK(message({.logprobs = 21}) == "logprobs: must be in [0, 20], got 21");
}

namespace {
// Bans every token but `allowed`, as a grammar's mask would; counts its calls.
class AllowOnly final : public coinfer::generation::LogitsProcessor {
 public:
  explicit AllowOnly(std::int32_t allowed) : allowed_(allowed) {}
  void apply(std::span<float> logits, std::span<const std::int32_t>) override {
    ++calls;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      if (static_cast<std::int32_t>(i) != allowed_)
        logits[i] = -std::numeric_limits<float>::infinity();
    }
  }
  int calls = 0;

 private:
  std::int32_t allowed_;
};
}  // namespace

TEST_CASE("the logit bias forces a token at +100 and bans one at -100, greedy and sampled") {
  using namespace coinfer::generation;
  Sampler sampler(8);
  std::mt19937_64 rng(1);
  const std::vector<float> row = {1.0f, 3.0f, 2.0f, 0.5f, 0.0f, -1.0f, 2.5f, 0.1f};
  for (float temperature : {0.0f, 1.0f}) {
    CAPTURE(temperature);
    for (int i = 0; i < 20; ++i) {
      auto logits = row;
      const SamplingParams forced{.temperature = temperature, .logit_bias = {{5, 100.0f}}};
      CHECK(sampler.sample(logits, forced, {}, rng).token == 5);
      logits = row;
      const SamplingParams banned{.temperature = temperature,
                                  .logit_bias = {{1, -100.0f}, {6, -100.0f}}};
      const auto token = sampler.sample(logits, banned, {}, rng).token;
      CHECK(token != 1);
      CHECK(token != 6);
    }
  }
  const SamplingParams out_of_range{.logit_bias = {{2, 100.5f}}};
  CHECK(out_of_range.validate().message() == "logit_bias[2]: must be in [-100, 100], got 100.5");
}

TEST_CASE("a request's logits processors run after the bias, and logprobs stay the model's") {
  using namespace coinfer::generation;
  Sampler sampler(8);
  std::mt19937_64 rng(1);
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.5f, 0.0f, -1.0f, 2.5f, 0.1f};
  const auto raw = logits;
  AllowOnly mask(3);
  LogitsProcessor* chain[] = {&mask};
  // The bias pushes token 2 up; the mask, later in the chain, still allows only token 3.
  const SamplingParams params{.temperature = 0.0f, .logprobs = 2, .logit_bias = {{2, 50.0f}}};
  const auto result = sampler.sample(logits, params, {}, rng, chain);
  CHECK(mask.calls == 1);
  CHECK(result.token == 3);
  double z = 0;
  for (float x : raw) z += std::exp(static_cast<double>(x));
  CHECK(result.logprob == doctest::Approx(raw[3] - std::log(z)).epsilon(1e-5));
  REQUIRE(result.top.size() == 2);
  CHECK(result.top[0].id == 1);  // the model's likeliest, not the chain's
}
