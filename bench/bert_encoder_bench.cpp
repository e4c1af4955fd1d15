// BertEncoder alone, in-process: sentences/s of all-MiniLM-L6-v2 over a file of sentences in
// packed batches, with the compute threads the server would give it. The model's share of
// the HTTP figures of bench/embedding_bench.sh, and the figure to compare with the
// in-process peers of bench/embedding_peers.sh.
//
// Usage: coinfer-bert-encoder-bench MODEL_DIR SENTENCES_FILE [--threads N] [--batch B]
//            [--seconds S] [--precision int8|fp32]
//   MODEL_DIR holds model.safetensors and vocab.txt (assets/all-MiniLM-L6-v2)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "coinfer/models/bert_encoder.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/tokenizers/wordpiece.hpp"

using namespace coinfer;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "coinfer-bert-encoder-bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Idle compute threads sleep rather than spin: they share cores with the I/O threads.
  ensure_compute_wait_policy(argv, ComputeWait::passive);
  if (argc < 3) {
    return fail("usage: MODEL_DIR SENTENCES_FILE [--threads N] [--batch B] [--seconds S] "
                "[--precision int8|fp32]");
  }
  const std::filesystem::path model_dir = argv[1];
  int threads = 1;
  int batch = 64;
  double seconds = 10;
  Precision precision = Precision::int8;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--threads") {
      threads = std::atoi(value.c_str());
    } else if (flag == "--batch") {
      batch = std::atoi(value.c_str());
    } else if (flag == "--seconds") {
      seconds = std::atof(value.c_str());
    } else if (flag == "--precision") {
      precision = value == "fp32" ? Precision::fp32 : Precision::int8;
    } else {
      return fail("unknown option " + flag);
    }
  }
  if (threads < 1 || batch < 1 || seconds <= 0) return fail("bad --threads, --batch or --seconds");

  WordPieceTokenizer tokenizer;
  if (auto s = WordPieceTokenizer::load(model_dir / "vocab.txt", tokenizer); !s) {
    return fail(s.message());
  }
  std::ifstream in(argv[2]);
  std::vector<std::vector<std::int32_t>> sentences;
  std::size_t tokens = 0;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::int32_t> ids;
    if (auto s = tokenizer.encode(line, ids, 256); !s) return fail(s.message());
    tokens += ids.size();
    sentences.push_back(std::move(ids));
  }
  if (sentences.empty()) return fail(std::string("no sentences in ") + argv[2]);

  BertEncoderOptions options;
  options.max_batch_size = batch;
  options.precision = precision;
  std::unique_ptr<BertEncoder> model;
  if (auto s = BertEncoder::load(model_dir / "model.safetensors", "minilm", "1", options, model);
      !s) {
    return fail(s.message());
  }
  set_compute_threads(threads);

  // Batches of `batch` consecutive sentences, packed, as the batcher hands them over.
  struct Packed {
    std::vector<std::int32_t> ids;
    std::vector<std::int64_t> offsets{0};
  };
  std::vector<Packed> batches;
  for (std::size_t first = 0; first < sentences.size(); first += static_cast<std::size_t>(batch)) {
    Packed p;
    for (std::size_t r = first; r < std::min(sentences.size(), first + static_cast<std::size_t>(batch)); ++r) {
      p.ids.insert(p.ids.end(), sentences[r].begin(), sentences[r].end());
      p.offsets.push_back(static_cast<std::int64_t>(p.ids.size()));
    }
    batches.push_back(std::move(p));
  }

  std::vector<Tensor> outputs(1);
  const auto run = [&](const Packed& p) {
    ConstTensorView view;
    view.dtype = DType::Int32;
    view.shape = {static_cast<std::int64_t>(p.ids.size())};
    view.data = reinterpret_cast<const std::byte*>(p.ids.data());
    const Batch b{static_cast<int>(p.offsets.size() - 1), {&view, 1}, p.offsets, {}};
    return model->forward(b, outputs);
  };
  for (const Packed& p : batches) {  // warm-up: one pass over the file
    if (auto s = run(p); !s) return fail(s.message());
  }
  std::size_t done = 0;
  const auto started = std::chrono::steady_clock::now();
  double elapsed = 0;
  for (std::size_t i = 0; elapsed < seconds; i = (i + 1) % batches.size()) {
    if (auto s = run(batches[i]); !s) return fail(s.message());
    done += batches[i].offsets.size() - 1;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  std::printf(
      "{\"bench\":\"bert_encoder\",\"precision\":\"%s\",\"threads\":%d,\"batch\":%d,"
      "\"sentences\":%zu,\"mean_tokens\":%.1f,\"sentences_per_s\":%.1f}\n",
      std::string(to_string(precision)).c_str(), threads, batch, done,
      static_cast<double>(tokens) / static_cast<double>(sentences.size()),
      static_cast<double>(done) / elapsed);
  return 0;
}
