// What the fuzz targets share: a service like coinfer-serve's (models, endpoints, the OIP and
// OpenAI routes) built once per process, run on one thread, and the checks that turn a wrong
// answer into a crash libFuzzer reports.
#pragma once

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "coinfer/models/identity_model.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/net/router.hpp"
#include "coinfer/protocol/oip_decoder.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/runtime/executor.hpp"
#include "coinfer/serving/endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"
#include "coinfer/tokenizers/wordpiece.hpp"

namespace coinfer::fuzz {

namespace asio = boost::asio;

// A broken promise of the code under test: reported as a crash, with the input saved.
[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}
inline void check(bool condition, std::string_view what) {
  if (!condition) fail(what);
}

// With COINFER_FUZZ_PRINT set (running a target on one file to see what it does), prints what
// the code under test answered.
inline void print_answer(std::string_view what, std::string_view answer) {
  static const bool enabled = std::getenv("COINFER_FUZZ_PRINT") != nullptr;
  if (enabled) {
    std::fprintf(stderr, "--- %.*s\n", static_cast<int>(what.size()), what.data());
    std::fwrite(answer.data(), 1, answer.size(), stderr);  // may hold NULs (WebSocket frames)
    std::fputc('\n', stderr);
  }
}

// Bytes as the server hands them to a parser: followed by exactly kJsonPadding readable
// bytes, in a heap block of exactly that size, so ASan reports any read past the padding.
// Layout: [size bytes of input][kJsonPadding bytes of '\0'].
class PaddedBuffer {
 public:
  explicit PaddedBuffer(std::string_view bytes)
      : size_(bytes.size()), data_(new char[bytes.size() + kJsonPadding]) {
    if (!bytes.empty()) std::memcpy(data_.get(), bytes.data(), bytes.size());
    std::memset(data_.get() + size_, 0, kJsonPadding);
  }
  std::string_view view() const noexcept { return {data_.get(), size_}; }
  std::size_t capacity() const noexcept { return size_ + kJsonPadding; }
  const char* data() const noexcept { return data_.get(); }

 private:
  std::size_t size_;
  std::unique_ptr<char[]> data_;
};

// JSON a client is sent must parse: every answer body is checked with simdjson's DOM parser.
inline bool is_json(std::string_view text) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  return !parser.parse(text.data(), text.size()).get(root);
}

// Runs batches on the io_context's own thread (posted, never inline: the batcher submits
// under its lock), so each input runs to completion on the fuzzer's thread, deterministically.
class PostExecutor final : public Executor {
 public:
  explicit PostExecutor(asio::io_context& io) : io_(io) {}
  void submit(std::function<void()> work) override { asio::post(io_, std::move(work)); }
  int concurrency() const noexcept override { return 1; }

 private:
  asio::io_context& io_;
};

// Copies input i to output i: a model whose outputs have the types of its inputs, so the
// encoder writes every element type.
class EchoModel final : public Model {
 public:
  explicit EchoModel(ModelMetadata metadata) : metadata_(std::move(metadata)) {}
  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const ConstTensorView& in = batch.inputs[i];
      outputs[i].resize(in.dtype, std::span<const std::int64_t>(in.shape));
      check(outputs[i].bytes().size() == in.size_bytes(), "echo: batch view size");
      if (in.size_bytes() > 0) std::memcpy(outputs[i].bytes().data(), in.data, in.size_bytes());
    }
    return {};
  }

 private:
  ModelMetadata metadata_;
};

// A text model for the embedding routes: one ragged INT32 input of token ids, FP32 [rows, 4]
// out (count, sum, min and max of each row's ids). Checks the batch the pipeline built.
class TokenStatsModel final : public Model {
 public:
  static constexpr int kMaxBatchSize = 8;
  static constexpr std::int64_t kMaxInputTokens = 16;

  TokenStatsModel() {
    metadata_.name = "embed";
    metadata_.max_batch_size = kMaxBatchSize;
    metadata_.max_batch_tokens = kMaxBatchSize * kMaxInputTokens;
    metadata_.inputs = {{"input_ids", DType::Int32, {-1, -1}, /*ragged=*/true}};
    metadata_.outputs = {{"embedding", DType::FP32, {-1, 4}}};
  }
  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    const auto ids = batch.inputs[0].values<const std::int32_t>();
    check(batch.offsets.size() == static_cast<std::size_t>(batch.rows) + 1, "embed: offsets");
    check(static_cast<std::size_t>(batch.offsets.back()) == ids.size(), "embed: packed length");
    check(batch.offsets.back() <= metadata_.max_batch_tokens, "embed: max_batch_tokens");
    const std::int64_t shape[] = {batch.rows, 4};
    outputs[0].resize(DType::FP32, shape);
    auto out = outputs[0].values<float>();
    for (int r = 0; r < batch.rows; ++r) {
      const auto row = ids.subspan(static_cast<std::size_t>(batch.offsets[r]),
                                   static_cast<std::size_t>(batch.length(r)));
      check(!row.empty() && static_cast<std::int64_t>(row.size()) <= kMaxInputTokens,
            "embed: row length");
      float sum = 0, low = static_cast<float>(row[0]), high = low;
      for (std::int32_t id : row) {
        sum += static_cast<float>(id);
        low = std::min(low, static_cast<float>(id));
        high = std::max(high, static_cast<float>(id));
      }
      const float features[] = {static_cast<float>(row.size()), sum, low, high};
      std::memcpy(&out[static_cast<std::size_t>(r) * 4], features, sizeof features);
    }
    return {};
  }

 private:
  ModelMetadata metadata_;
};

// A vocabulary small enough to write here: the specials, whole words, "##" continuations,
// punctuation, CJK and accented pieces (the normalizer strips accents and lower-cases).
inline constexpr std::string_view kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nquick\nbrown\nfox\nun\n##aff\n##able\n##a\n##s\n"
    "##ing\nx\n##\xC3\x9F\nhello\nworld\n.\n,\n!\n?\n'\n-\n(\n)\n\xE4\xB8\xAD\n\xE6\x96\x87\n"
    "cafe\nnaive\n1\n2\n##3\n\xCE\xB1\n##\xCE\xB2\n";

inline std::shared_ptr<WordPieceTokenizer> small_tokenizer() {
  auto tokenizer = std::make_shared<WordPieceTokenizer>();
  if (auto status = WordPieceTokenizer::parse(kVocab, "fuzz vocab", *tokenizer); !status) {
    fail(status.message());
  }
  return tokenizer;
}

// Hands out heap blocks of exactly the bytes asked for (ASan guards their ends), or fails
// with `result` like a full queue.
class ExactSink final : public InputSink {
 public:
  ExactSink(const ModelMetadata& model, Status result)
      : model_(model), result_(std::move(result)) {}

  Status allocate(std::span<const Shape> shapes, const Parameters&,
                  std::span<std::span<std::byte>> destinations) override {
    ++calls;
    check(shapes.size() == model_.inputs.size() && destinations.size() == shapes.size(),
          "sink: one shape and one destination per model input");
    if (!result_.ok()) return result_;
    blocks.clear();
    for (std::size_t m = 0; m < shapes.size(); ++m) {
      check(shape_matches(model_.inputs[m].shape, shapes[m]), "sink: shape fits the model");
      const std::int64_t count = element_count(shapes[m]);
      check(count >= 0, "sink: no -1 left in a shape");
      const std::size_t bytes =
          static_cast<std::size_t>(count) * element_size(model_.inputs[m].dtype);
      blocks.emplace_back(bytes ? new std::byte[bytes] : nullptr);
      if (model_.inputs[m].dtype != DType::Bytes) destinations[m] = {blocks.back().get(), bytes};
    }
    this->shapes.assign(shapes.begin(), shapes.end());
    return {};
  }

  int calls = 0;
  std::vector<Shape> shapes;
  std::vector<std::unique_ptr<std::byte[]>> blocks;

 private:
  const ModelMetadata& model_;
  Status result_;
};

// The fixed-size element types, each served by an echo model "echo_<type>" with one input
// "INPUT0" of shape [-1, -1].
inline constexpr DType kFixedTypes[] = {DType::Bool,   DType::UInt8, DType::UInt16, DType::UInt32,
                                        DType::UInt64, DType::Int8,  DType::Int16,  DType::Int32,
                                        DType::Int64,  DType::FP16,  DType::FP32,   DType::FP64};

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The served models:
//   identity   IdentityModel, FP32 [-1, -1] (batch 8)
//   echo_<t>   EchoModel, one input of each fixed-size type (batch 4, version "1" and "2")
//   pair       EchoModel, A FP32 [-1, 2] and B INT32 [-1, 1] (batch 4)
//   embed      TokenStatsModel behind the WordPiece tokenizer: a text endpoint (BYTES "text",
//              max_input_tokens 16)
// with the OIP routes (HTTP and WebSocket) and the OpenAI routes on one router, all run on
// `io` by whoever calls run().
class Service {
 public:
  Service() {
    spdlog::set_level(spdlog::level::off);  // handler errors are logged; a fuzz run is quiet
    BatchPolicy policy;
    policy.max_batch_size = 8;
    policy.max_queue_delay = std::chrono::microseconds(0);
    add(std::make_shared<IdentityModel>("identity", "1", 8), policy);
    policy.max_batch_size = 4;
    policy.max_batch_bytes = 1 << 16;
    for (DType dtype : kFixedTypes) {
      for (const char* version : {"1", "2"}) {
        ModelMetadata echo;
        echo.name = "echo_" + lower(to_string(dtype));
        echo.version = version;
        echo.max_batch_size = 4;
        echo.inputs = {{"INPUT0", dtype, {-1, -1}}};
        echo.outputs = {{"OUTPUT0", dtype, {-1, -1}}};
        add(std::make_shared<EchoModel>(std::move(echo)), policy);
      }
    }
    ModelMetadata pair;
    pair.name = "pair";
    pair.max_batch_size = 4;
    pair.inputs = {{"A", DType::FP32, {-1, 2}}, {"B", DType::Int32, {-1, 1}}};
    pair.outputs = {{"A_OUT", DType::FP32, {-1, 2}}, {"B_OUT", DType::Int32, {-1, 1}}};
    add(std::make_shared<EchoModel>(std::move(pair)), policy);
    policy.max_batch_size = TokenStatsModel::kMaxBatchSize;
    add(std::make_shared<TokenStatsModel>(), policy,
        TextInput{small_tokenizer(), "text", TokenStatsModel::kMaxInputTokens, false, ""});
    add_oip_routes(router, repository);
    add_openai_routes(router, repository);
  }

  // Runs `task` on io (and everything it starts: batches, completions) until it is done.
  void run(asio::awaitable<void> task) {
    bool done = false;
    asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) {
      done = true;
      if (e) std::rethrow_exception(e);  // a handler may not throw: reported as a crash
    });
    io.restart();
    while (!done && io.run_one() > 0) {
    }
    check(done, "a request never completed (its io_context ran out of work)");
  }

  asio::io_context io;
  PostExecutor executor{io};
  ModelRepository repository;
  net::Router router;

 private:
  void add(std::shared_ptr<Model> model, const BatchPolicy& policy,
           std::optional<TextInput> text = std::nullopt) {
    auto status = repository.add(std::make_unique<Endpoint>(std::move(model), io.get_executor(),
                                                            executor, policy, std::move(text)));
    if (!status) fail(status.message());
  }
};

}  // namespace coinfer::fuzz
