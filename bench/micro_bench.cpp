// Micro-benchmarks of coinfer's hot paths (Google Benchmark), each beside a peer measured in
// the same run; docs/BENCHMARKS.md has the figures.
//
//   decode/...   OipDecoder::decode_infer into an InputSink (the server's path: elements go
//                straight into a batch's rows) against simdjson On Demand alone, a minimal
//                hand-written decoder that finds inputs[0].data and reads every float
//   encode/...   encode_infer_response, against std::to_chars alone writing the same floats
//                (what any JSON encoder must at least do)
//   batcher/...  one request through a DynamicBatcher at a time (round_trip), or a burst of 64
//                (burst_of_64): reserve, write the row,
//                async_submit, completion, with the identity model on a CpuExecutor
//   int8/...     Int8Linear::forward against the oneDNN u8 x s8 -> s32 matmul it runs, created
//                alone for the same M, K, N, at the digits MLP's and all-MiniLM-L6-v2's shapes
//                (M <= 16 runs coinfer's small-M kernel, small_m_gemm.hpp)
//   llm/...      a language model's decode GEMMs at SmolLM2-135M's shapes, M = 1, 8 and 16, through
//                BlockLinear as precision "int8" (Q8_0 blocks) and "int4" (Q4_1, the head
//                Q8_0) hold the layer, with 8-bit activations and (_a16) with 16-bit ones
//                (BlockActivations::int16), each over copies of the layer whose weights add up to
//                ~128 MiB (so that every call streams its weights from memory, as a decode step
//                does): block bytes per second over a STREAM-style triad's (a = b + s * c) over
//                the same number of bytes, the share of the memory bandwidth used; calls per
//                second over oneDNN's INT8 GEMM's on the same copies (per-channel weights); at
//                M = 64 (a prompt chunk), GFLOP/s over oneDNN's INT8 GEMM's; and the core's
//                ceiling at several rows, independent 512-bit vpdpbusd per second
//                (llm/vpdpbusd_peak, on CPUs with AVX-512 VNNI). _cached (M = 8): one copy of
//                the layer, its weights in the caches: the tile's own pace, memory aside. On
//                CPUs with AMX-INT8 (whose tile multiplies run steps of 5-16 rows in Q8_0, 9-16
//                in Q4_1), _vnni: the same layers on the AVX-512 VNNI tiles, one thread. The
//                layers' weights lie in a PageArena (2 MiB pages) as a model's do; _4k: each
//                copy in memory of its own (4 KiB pages), and llm/triad_2m the triad's arrays
//                on 2 MiB pages
//
//   build/bench/coinfer-micro-bench --benchmark_repetitions=3 --benchmark_report_aggregates_only
//
// Counters: bytes_per_second (the JSON text), "floats" (elements per second), "flops"
// (2 M K N per call, per second). After the run, a table gives each coinfer figure over its
// peer's (medians when repeated): on stdout after the console report, on stderr with another
// --benchmark_format. One compute thread throughout, except the llm/ decode rows and triad, run
// again on two (/threads:2, wall-clock time).

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "coinfer/batching/dynamic_batcher.hpp"
#include "coinfer/core/page_arena.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/models/identity_model.hpp"
#include "coinfer/models/llama.hpp"
#include "coinfer/ops/block_linear.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/int8_linear.hpp"
#include "coinfer/ops/small_m_gemm.hpp"
#include "coinfer/protocol/oip_decoder.hpp"
#include "coinfer/protocol/oip_encoder.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/input_sink.hpp"
#include "onednn_gemm.hpp"

using namespace coinfer;
using coinfer::bench::OneDnnGemm;
namespace od = simdjson::ondemand;

namespace {

// ---- request and response bodies ----------------------------------------------------------

// The three tensor sizes: the digits model's [1, 64], a batch of 64 such rows, and one large
// tensor.
struct TensorCase {
  std::int64_t rows, cols;
  std::int64_t count() const { return rows * cols; }
};
constexpr TensorCase kTensorCases[] = {{1, 64}, {64, 64}, {1, 65536}};

// FP32 values uniform in [-1, 1), the same sequence for every benchmark of a size.
std::vector<float> tensor_values(std::int64_t count) {
  std::mt19937 rng(20261204);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = u(rng);
  return values;
}

// {"inputs":[{"name":"INPUT0","shape":[R,C],"datatype":"FP32","data":[...]}]} with flat data,
// each float in its shortest round-trip form (as a client serializing FP32 writes it), in a
// buffer with kJsonPadding spare bytes, as the HTTP layer hands bodies to the decoder.
struct Body {
  std::string text;
  std::size_t capacity() const { return text.capacity(); }
};

Body infer_request_body(const TensorCase& c) {
  std::string json = R"({"inputs":[{"name":"INPUT0","shape":[)" + std::to_string(c.rows) + "," +
                     std::to_string(c.cols) + R"(],"datatype":"FP32","data":[)";
  bool first = true;
  for (const float v : tensor_values(c.count())) {
    if (!first) json += ',';
    first = false;
    char number[32];
    json.append(number, std::to_chars(number, number + sizeof number, v).ptr);
  }
  json += "]}]}";
  Body body;
  body.text.reserve(json.size() + kJsonPadding);
  body.text.assign(json);
  return body;
}

std::string size_label(const TensorCase& c) {
  return "floats:" + std::to_string(c.count());
}

void set_data_counters(benchmark::State& state, std::int64_t floats, std::size_t bytes) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["floats"] = benchmark::Counter(static_cast<double>(floats),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// ---- decode: OipDecoder vs simdjson On Demand alone -----------------------------------------

// Stands in for a batch's staging rows: one preallocated FP32 buffer handed out for input 0.
class StagingRows final : public InputSink {
 public:
  explicit StagingRows(std::size_t count) : rows_(count) {}
  Status allocate(std::span<const Shape> shapes, const Parameters&,
                  std::span<std::span<std::byte>> destinations) override {
    if (element_count(shapes[0]) != static_cast<std::int64_t>(rows_.size())) {
      return Status::invalid("StagingRows: unexpected shape " + to_string(shapes[0]));
    }
    destinations[0] = std::as_writable_bytes(std::span(rows_));
    return {};
  }
  const std::vector<float>& rows() const noexcept { return rows_; }

 private:
  std::vector<float> rows_;  // FP32 [rows * cols], row-major
};

void decode_coinfer(benchmark::State& state, TensorCase c) {
  const Body body = infer_request_body(c);
  const IdentityModel model("identity", "1", 64);
  OipDecoder decoder;
  StagingRows sink(static_cast<std::size_t>(c.count()));
  for (auto _ : state) {
    InferRequest request;  // one per request, as the server's pipeline makes it
    const Status status =
        decoder.decode_infer(body.text, body.capacity(), model.metadata(), request, sink);
    if (!status) {
      state.SkipWithError(status.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(sink.rows().data());
    benchmark::ClobberMemory();
  }
  set_data_counters(state, c.count(), body.text.size());
}

// The peer: what a minimal hand-written decoder does with simdjson On Demand. It finds
// inputs[0].data and converts every element; it checks only that the body is JSON, that the
// elements are numbers and that they fit `out`. No name, datatype or shape validation.
simdjson::error_code read_first_input(od::parser& parser, const Body& body, std::span<float> out,
                                      std::size_t& count) {
  count = 0;
  od::document doc;
  if (auto error = parser.iterate(body.text.data(), body.text.size(), body.capacity()).get(doc)) {
    return error;
  }
  od::array inputs;
  if (auto error = doc["inputs"].get_array().get(inputs)) return error;
  for (auto input : inputs) {
    od::array data;
    if (auto error = input["data"].get_array().get(data)) return error;
    for (auto element : data) {
      double value;
      if (auto error = element.get_double().get(value)) return error;
      if (count == out.size()) return simdjson::CAPACITY;
      out[count++] = static_cast<float>(value);
    }
    return simdjson::SUCCESS;
  }
  return simdjson::NO_SUCH_FIELD;
}

void decode_simdjson(benchmark::State& state, TensorCase c) {
  const Body body = infer_request_body(c);
  od::parser parser;
  std::vector<float> rows(static_cast<std::size_t>(c.count()));  // FP32 [rows * cols]
  for (auto _ : state) {
    std::size_t count = 0;
    if (auto error = read_first_input(parser, body, rows, count); error || count != rows.size()) {
      state.SkipWithError(error ? simdjson::error_message(error) : "element count");
      break;
    }
    benchmark::DoNotOptimize(rows.data());
    benchmark::ClobberMemory();
  }
  set_data_counters(state, c.count(), body.text.size());
}

// ---- encode: encode_infer_response vs std::to_chars alone -----------------------------------

void encode_coinfer(benchmark::State& state, TensorCase c) {
  const std::vector<float> values = tensor_values(c.count());
  const TensorSpec specs[] = {{"OUTPUT0", DType::FP32, {-1, -1}}};
  InferResponse response;
  response.model_name = "identity";
  response.model_version = "1";
  response.outputs.emplace_back(DType::FP32, Shape{c.rows, c.cols});
  std::memcpy(response.outputs[0].bytes().data(), values.data(), values.size() * sizeof(float));
  std::string out;  // reused across responses, as a connection's write buffer is
  for (auto _ : state) {
    out.clear();
    encode_infer_response(response, specs, {}, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_data_counters(state, c.count(), out.size());
}

// The floor: the same floats in shortest round-trip form, comma-separated, into a buffer
// sized once; no JSON around them.
void encode_to_chars(benchmark::State& state, TensorCase c) {
  const std::vector<float> values = tensor_values(c.count());
  std::vector<char> buffer(values.size() * 16 + 2);
  std::size_t size = 0;
  for (auto _ : state) {
    char* cursor = buffer.data();
    char* const end = buffer.data() + buffer.size();
    *cursor++ = '[';
    for (const float v : values) {
      cursor = std::to_chars(cursor, end, v).ptr;
      *cursor++ = ',';
    }
    cursor[-1] = ']';
    size = static_cast<std::size_t>(cursor - buffer.data());
    benchmark::DoNotOptimize(buffer.data());
    benchmark::ClobberMemory();
  }
  set_data_counters(state, c.count(), size);
}

// ---- the batcher round trip -----------------------------------------------------------------

// kBurst requests of [1, 64] FP32 into the identity model, submitted at once; the benchmark's
// thread is the I/O thread and runs the io_context until every answer has been delivered back
// to it from the compute thread. With 1, one request's round trip: reserve, write the row,
// async_submit, the completion. With 64, a burst from 64 clients: the batcher's cost per request when many wait,
// which grows with what an arrival has to look at (with max_batch_size 1 the batcher keeps
// max_queue_size + 2 staging buffers).
template <int kBurst>
void batcher_requests(benchmark::State& state, int max_batch_size) {
  constexpr std::int64_t kCols = 64;
  boost::asio::io_context io;
  IdentityModel model("identity", "1", max_batch_size);
  CpuExecutor executor(1);
  BatchPolicy policy;
  policy.max_batch_size = max_batch_size;
  policy.max_queue_delay = std::chrono::microseconds(0);
  DynamicBatcher batcher(io.get_executor(), executor, model, policy);
  const Shape shapes[] = {{1, kCols}};
  const std::vector<float> row = tensor_values(kCols);
  const SubmitOptions options;
  for (auto _ : state) {
    std::array<BatchTicket, kBurst> tickets;  // in the awaiting coroutines' frames in the server
    int answered = 0;
    for (BatchTicket& ticket : tickets) {
      if (Status status = batcher.reserve(shapes, options, ticket); !status) {
        state.SkipWithError(status.message().c_str());
        return;
      }
      std::memcpy(ticket.input(0).data(), row.data(), row.size() * sizeof(float));
      batcher.async_submit(ticket, options, [&answered](Status s) { answered += s ? 1 : 0; });
    }
    io.restart();
    io.run();
    if (answered != kBurst) {
      state.SkipWithError("a request failed");
      return;
    }
    benchmark::DoNotOptimize(tickets[0].outputs()[0].bytes().data());
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
}

// ---- INT8 ops vs the oneDNN GEMM alone ------------------------------------------------------

struct LinearShape {
  const char* name;  // model.layer
  int k, n;          // in_features, out_features
  Activation activation;
  int fp32_channels;  // input channels multiplied in FP32 beside the GEMM, as served
};
// digits MLP (assets/digits_mlp): 64 -> 256 -> 256 -> 10, ReLU between.
// all-MiniLM-L6-v2, per encoder layer: Q, K, V and the attention output 384 -> 384, the
// intermediate 384 -> 1536 with GELU, the output 1536 -> 384; each with the 4 FP32 input
// channels the served model takes out of the INT8 GEMM (BertEncoderOptions).
constexpr LinearShape kLinearShapes[] = {
    {"digits.fc0", 64, 256, Activation::relu, 0},
    {"digits.fc1", 256, 256, Activation::relu, 0},
    {"digits.fc2", 256, 10, Activation::none, 0},
    {"minilm.attention", 384, 384, Activation::none, 4},
    {"minilm.intermediate", 384, 1536, Activation::gelu, 4},
    {"minilm.output", 1536, 384, Activation::none, 4},
};
constexpr int kBatchRows[] = {1, 8, 64};

// SmolLM2-135M's decode GEMMs: QKV 576 -> 960 (9 query and 3 KV heads of 64), the attention
// output 576 -> 576, gate and up 576 -> 2 x 1536, down 1536 -> 576, the tied head 576 ->
// 49,152.
constexpr LinearShape kDecodeShapes[] = {
    {"smollm2.qkv", 576, 960, Activation::none, 0},
    {"smollm2.attention", 576, 576, Activation::none, 0},
    {"smollm2.gate_up", 576, 3072, Activation::none, 0},
    {"smollm2.down", 1536, 576, Activation::none, 0},
    {"smollm2.head", 576, 49152, Activation::none, 0},
};
constexpr int kDecodeRows[] = {1, 8, 16};
// The decode rows' bytes per second with one compute thread and with two (the server's team on a
// 2-core machine), each over a triad run on as many threads.
constexpr int kDecodeThreads[] = {1, 2};
constexpr int kPrefillRows = 64;  // a prompt chunk: the block kernels' arithmetic, not their bytes
constexpr std::size_t kDecodeStepBytes = std::size_t{128} << 20;  // ~ SmolLM2's INT8 weights
constexpr int kMaxBatchRows = 64;

void set_flops_counter(benchmark::State& state, int m, const LinearShape& s) {
  state.counters["flops"] =
      benchmark::Counter(2.0 * m * s.k * s.n, benchmark::Counter::kIsIterationInvariantRate);
}

std::vector<float> uniform_floats(std::size_t count, float low, float high, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = u(rng);
  return values;
}

// The shape's FP32 side channels, spread evenly over its inputs.
std::vector<int> side_channels(const LinearShape& s) {
  std::vector<int> channels;
  for (int j = 0; j < s.fp32_channels; ++j) {
    channels.push_back((2 * j + 1) * s.k / (2 * s.fp32_channels));
  }
  return channels;
}

void int8_linear(benchmark::State& state, LinearShape s, int m) {
  const auto k = static_cast<std::size_t>(s.k), n = static_cast<std::size_t>(s.n);
  const std::vector<float> weight = uniform_floats(n * k, -0.1f, 0.1f, 1);  // FP32 [n, k]
  const std::vector<float> bias = uniform_floats(n, -0.1f, 0.1f, 2);        // FP32 [n]
  const std::vector<float> x = uniform_floats(static_cast<std::size_t>(m) * k, -2, 2, 3);  // [m, k]
  std::vector<float> y(static_cast<std::size_t>(m) * n);  // FP32 [m, n]
  const std::vector<int> channels = side_channels(s);
  Int8LinearOptions options;
  options.max_batch = kMaxBatchRows;
  options.fp32_input_channels = channels;
  Int8Linear linear;
  if (Status status = Int8Linear::create(weight, bias, s.n, s.k, s.activation, options, linear);
      !status) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  for (auto _ : state) {
    if (!linear.forward(x.data(), m, y.data())) {
      state.SkipWithError("Int8Linear::forward failed");
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_flops_counter(state, m, s);
}

// The peer (onednn_gemm.hpp): the matmul primitive created for exactly this m.
void onednn_gemm(benchmark::State& state, LinearShape s, int m) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  std::mt19937 rng(4);
  OneDnnGemm gemm(engine, m, s.n, s.k, /*runtime_m=*/false, rng);
  state.SetLabel(gemm.impl());
  for (auto _ : state) {
    if (!gemm.run()) {
      state.SkipWithError("oneDNN matmul failed");
      break;
    }
    benchmark::DoNotOptimize(gemm.result());
    benchmark::ClobberMemory();
  }
  set_flops_counter(state, m, s);
}

// The peer at decode: oneDNN's u8 x s8 GEMM (Int8Linear without its small-M kernel, weights
// per output channel, no side channels) over copies of one layer whose INT8 weights add up to
// kDecodeStepBytes, run in turn: each call reads its weights from memory, not from a cache the
// previous call warmed.
void llm_onednn(benchmark::State& state, LinearShape s, int m) {
  const auto k = static_cast<std::size_t>(s.k), n = static_cast<std::size_t>(s.n);
  const std::size_t copies = std::max<std::size_t>(2, (kDecodeStepBytes + n * k - 1) / (n * k));
  Int8LinearOptions options;
  options.max_batch = std::max(m, 8);
  options.small_m_rows = 0;
  std::vector<Int8Linear> layers(copies);
  for (std::size_t i = 0; i < copies; ++i) {
    const std::vector<float> weight = uniform_floats(n * k, -0.1f, 0.1f, static_cast<unsigned>(i + 1));
    if (Status status = Int8Linear::create(weight, {}, s.n, s.k, s.activation, options, layers[i]);
        !status) {
      state.SkipWithError(status.message().c_str());
      return;
    }
  }
  state.SetLabel("onednn");
  const std::vector<float> x = uniform_floats(static_cast<std::size_t>(m) * k, -2, 2, 3);
  std::vector<float> y(static_cast<std::size_t>(m) * n);
  std::size_t next = 0;
  for (auto _ : state) {
    if (!layers[next].forward(x.data(), m, y.data())) {
      state.SkipWithError("Int8Linear::forward failed");
      break;
    }
    next = next + 1 == copies ? 0 : next + 1;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(n * k),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["calls"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

// The calling thread's compute team sized for one benchmark, back to one thread after it.
struct TeamSize {
  explicit TeamSize(int threads) { set_compute_threads(threads); }
  ~TeamSize() { set_compute_threads(1); }
  TeamSize(const TeamSize&) = delete;
  TeamSize& operator=(const TeamSize&) = delete;
};

// Where a benchmark's layers keep their weights.
enum class Placement {
  arena,   // copies side by side in one PageArena (2 MiB pages), as LlamaModel holds its layers
  own,     // copies each in memory of its own (4 KiB pages: what the layers had before arenas)
  cached,  // one copy (arena), whose weights stay in the caches where they fit
};

// The same layer as LlamaPrecision::int8 (Q8_0 blocks, 1.0625 bytes per weight) or ::int4
// holds it (Q4_1 blocks, 0.625 bytes per weight; the head Q8_0), as many copies as llm_onednn
// makes (the same weights per call).
void llm_blocks(benchmark::State& state, LinearShape s, int m, WeightBlocks layers_format, int threads,
                BlockActivations activations, Placement placement, BlockKernels kernels) {
  const TeamSize team(threads);
  const bool head = std::string_view(s.name) == "smollm2.head";
  const WeightBlocks format = head ? WeightBlocks::q8_0 : layers_format;
  const auto k = static_cast<std::size_t>(s.k), n = static_cast<std::size_t>(s.n);
  // cached: what the tile's instructions allow without waiting on memory (the head's 28 MB
  // still streams).
  const std::size_t copies =
      placement == Placement::cached ? 1 : std::max<std::size_t>(2, (kDecodeStepBytes + n * k - 1) / (n * k));
  PageArena arena;
  std::vector<BlockLinear> layers(copies);
  for (std::size_t i = 0; i < copies; ++i) {
    const std::vector<float> weight = uniform_floats(n * k, -0.1f, 0.1f, static_cast<unsigned>(i + 1));
    std::vector<std::byte> blocks;
    ggml_quantize(static_cast<std::uint32_t>(format == WeightBlocks::q8_0 ? GgmlType::q8_0 : GgmlType::q4_1), weight.data(),
                  weight.size(), blocks);
    if (Status status = BlockLinear::create(format, blocks, {}, s.n, s.k, std::max(8, m), layers[i], activations, kernels,
                                            placement == Placement::own ? nullptr : &arena);
        !status) {
      state.SkipWithError(status.message().c_str());
      return;
    }
  }
  state.SetLabel(std::string(layers[0].kernel()) + "/" + to_string(format));
  const std::vector<float> x = uniform_floats(static_cast<std::size_t>(m) * k, -2, 2, 3);
  std::vector<float> y(static_cast<std::size_t>(m) * n);
  std::size_t next = 0;
  for (auto _ : state) {
    if (!layers[next].forward(x.data(), m, y.data())) {
      state.SkipWithError("BlockLinear::forward failed");
      break;
    }
    next = next + 1 == copies ? 0 : next + 1;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(layers[0].weight_bytes()),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["calls"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  set_flops_counter(state, m, s);
}

// The peer: a = b + s * c over three FP32 arrays of kDecodeStepBytes together; bytes counts
// the three arrays (STREAM's convention: two read, one written) per pass.
// huge: the three arrays in a PageArena (2 MiB pages, as the block layers' weights).
void triad(benchmark::State& state, int threads, bool huge) {
  const TeamSize team(threads);
  const std::size_t count = kDecodeStepBytes / 3 / sizeof(float);
  std::vector<float> a(count), b = uniform_floats(count, -1, 1, 1), c = uniform_floats(count, -1, 1, 2);
  PageArena arena;
  float* pa = a.data();
  const float* pb = b.data();
  const float* pc = c.data();
  if (huge) {
    const auto put = [&](const std::vector<float>& from) {
      auto* to = reinterpret_cast<float*>(arena.allocate(count * sizeof(float)));
      std::copy(from.begin(), from.end(), to);
      return to;
    };
    pa = put(a);
    pb = put(b);
    pc = put(c);
  }
  const float scalar = 3.0f;
  const auto n = static_cast<std::int64_t>(count);
  for (auto _ : state) {
    parallel_for(n, (n + threads - 1) / threads, threads, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) pa[i] = pb[i] + scalar * pc[i];
    });
    benchmark::DoNotOptimize(pa);
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(3 * count * sizeof(float)),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// The core's own ceiling for the block kernels at several rows: independent 512-bit vpdpbusd
// (12 chains, so latency does not bound it) per second. At 8 rows a Q8_0 block of 16 channels
// (576 bytes) takes 64 of them, so this rate x 9 bytes is the most weight bytes per second
// one core can multiply by 8 rows, whatever the memory gives.
__attribute__((target("avx512f,avx512vnni"))) void vpdpbusd_peak(benchmark::State& state) {
  // One asm statement for all 12 chains, so that the sums stay in registers: as an array with
  // one asm each, GCC kept them on the stack, and a store and reload per instruction bounded
  // the rate (3.4 G/s on a Zen 5 core, a quarter of what its vector units do).
  __m512i c0 = _mm512_set1_epi32(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0,
          c8 = c0, c9 = c0, c10 = c0, c11 = c0;
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x05060708);
  constexpr int kRepeats = 1000;
  for (auto _ : state) {
    for (int k = 0; k < kRepeats; ++k) {
      asm volatile(
          "vpdpbusd %13, %12, %0\n\tvpdpbusd %13, %12, %1\n\tvpdpbusd %13, %12, %2\n\t"
          "vpdpbusd %13, %12, %3\n\tvpdpbusd %13, %12, %4\n\tvpdpbusd %13, %12, %5\n\t"
          "vpdpbusd %13, %12, %6\n\tvpdpbusd %13, %12, %7\n\tvpdpbusd %13, %12, %8\n\t"
          "vpdpbusd %13, %12, %9\n\tvpdpbusd %13, %12, %10\n\tvpdpbusd %13, %12, %11"
          : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7), "+v"(c8),
            "+v"(c9), "+v"(c10), "+v"(c11)
          : "v"(a), "v"(b));
    }
  }
  for (const __m512i& c : {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11}) benchmark::DoNotOptimize(c);
  state.counters["vpdpbusd"] = benchmark::Counter(12.0 * kRepeats, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- the ratio table ------------------------------------------------------------------------

struct Comparison {
  std::string label, ours, peer, counter;
};

// Passes every report to the display reporter chosen by --benchmark_format and keeps each
// benchmark's counters (the median when repeated); at the end prints ours / peer per pair.
class RatioReporter final : public benchmark::BenchmarkReporter {
 public:
  RatioReporter(benchmark::BenchmarkReporter& display, std::vector<Comparison> comparisons)
      : display_(display), comparisons_(std::move(comparisons)) {}

  bool ReportContext(const Context& context) override { return display_.ReportContext(context); }

  void ReportRuns(const std::vector<Run>& runs) override {
    display_.ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      Figure& figure = figures_[run.run_name.function_name];
      if (figure.median && !median) continue;
      figure.median = median;
      for (const auto& [name, counter] : run.counters) figure.counters[name] = counter.value;
    }
  }

  void Finalize() override {
    display_.Finalize();
    std::string table;
    for (const Comparison& c : comparisons_) {
      const double ours = value(c.ours, c.counter), peer = value(c.peer, c.counter);
      if (ours <= 0 || peer <= 0) continue;  // filtered out, or failed
      const bool flops = c.counter == "flops", bytes = c.counter == "bytes";
      const double scale = flops || bytes ? 1e9 : 1e6;
      const char* unit = flops ? "GFLOP/s" : bytes ? "GB/s" : "M/s";
      char row[256];
      std::snprintf(row, sizeof row, "| %s | %.4g %s | %.4g %s | %.1f%% |\n", c.label.c_str(),
                    ours / scale, unit, peer / scale, unit, 100 * ours / peer);
      table += row;
    }
    if (table.empty()) return;
    const bool console = dynamic_cast<benchmark::ConsoleReporter*>(&display_) != nullptr;
    std::ostream& out = console ? display_.GetOutputStream() : display_.GetErrorStream();
    out << "\n| comparison | coinfer | peer | coinfer / peer |\n|---|---:|---:|---:|\n"
        << table << std::flush;
  }

 private:
  struct Figure {
    bool median = false;
    std::map<std::string, double> counters;
  };

  double value(const std::string& benchmark, const std::string& counter) const {
    const auto figure = figures_.find(benchmark);
    if (figure == figures_.end()) return 0;
    const auto found = figure->second.counters.find(counter);
    return found == figure->second.counters.end() ? 0 : found->second;
  }

  benchmark::BenchmarkReporter& display_;
  std::vector<Comparison> comparisons_;
  std::map<std::string, Figure> figures_;
};

std::vector<Comparison> register_benchmarks() {
  std::vector<Comparison> comparisons;
  for (const TensorCase& c : kTensorCases) {
    const std::string ours = "decode/coinfer/" + size_label(c);
    const std::string peer = "decode/simdjson_ondemand/" + size_label(c);
    benchmark::RegisterBenchmark(ours.c_str(), decode_coinfer, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(peer.c_str(), decode_simdjson, c)->Unit(benchmark::kMicrosecond);
    comparisons.push_back({"decode " + size_label(c) + " (floats/s)", ours, peer, "floats"});
  }
  for (const TensorCase& c : kTensorCases) {
    const std::string ours = "encode/coinfer/" + size_label(c);
    const std::string peer = "encode/to_chars_floor/" + size_label(c);
    benchmark::RegisterBenchmark(ours.c_str(), encode_coinfer, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(peer.c_str(), encode_to_chars, c)->Unit(benchmark::kMicrosecond);
    comparisons.push_back({"encode " + size_label(c) + " (floats/s)", ours, peer, "floats"});
  }
  for (const int max_batch_size : {1, 64}) {
    const std::string name = "batcher/round_trip/max_batch_size:" + std::to_string(max_batch_size);
    benchmark::RegisterBenchmark(name.c_str(), batcher_requests<1>, max_batch_size)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    const std::string burst = "batcher/burst_of_64/max_batch_size:" + std::to_string(max_batch_size);
    benchmark::RegisterBenchmark(burst.c_str(), batcher_requests<64>, max_batch_size)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  for (const LinearShape& s : kLinearShapes) {
    for (const int m : kBatchRows) {
      const std::string shape = std::string(s.name) + "/M:" + std::to_string(m);
      const std::string ours = "int8/int8_linear/" + shape;
      const std::string peer = "int8/onednn_gemm/" + shape;
      benchmark::RegisterBenchmark(ours.c_str(), int8_linear, s, m)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(peer.c_str(), onednn_gemm, s, m)->Unit(benchmark::kMicrosecond);
      comparisons.push_back({"int8 " + std::string(s.name) + " " + std::to_string(s.k) + "→" +
                                 std::to_string(s.n) + ", M " + std::to_string(m) + " (GFLOP/s)",
                             ours, peer, "flops"});
    }
  }
  for (const int threads : kDecodeThreads) {
    const std::string name = "llm/triad/threads:" + std::to_string(threads);
    benchmark::RegisterBenchmark(name.c_str(), triad, threads, false)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::RegisterBenchmark("llm/triad_2m/threads:1", triad, 1, true)->Unit(benchmark::kMillisecond)->UseRealTime();
  if (detect_small_m_isa() == SmallMIsa::avx512_vnni)
    benchmark::RegisterBenchmark("llm/vpdpbusd_peak", vpdpbusd_peak)->Unit(benchmark::kMicrosecond);
  struct Format {
    const char* name;
    WeightBlocks blocks;
    BlockActivations activations;
  };
  // _a16: BlockActivations::int16 (two bytes per activation, twice the multiplies), one thread.
  const Format formats[] = {{"int8_blocks", WeightBlocks::q8_0, BlockActivations::int8},
                            {"int4_blocks", WeightBlocks::q4_1, BlockActivations::int8},
                            {"int8_blocks_a16", WeightBlocks::q8_0, BlockActivations::int16},
                            {"int4_blocks_a16", WeightBlocks::q4_1, BlockActivations::int16}};
  // _vnni (where the CPU has AMX-INT8, M > 1): the AVX-512 VNNI tiles that AMX replaces for
  // decode steps.
  const bool amx = [] {
    const std::vector<std::byte> blocks(weight_block_bytes(WeightBlocks::q8_0));
    BlockLinear probe;
    return BlockLinear::create(WeightBlocks::q8_0, blocks, {}, 1, BlockLinear::block, 1, probe).ok() &&
           std::string_view(probe.kernel()) == "amx";
  }();
  for (const LinearShape& s : kDecodeShapes) {
    const std::string label = "llm " + std::string(s.name) + " " + std::to_string(s.k) + "→" + std::to_string(s.n);
    for (const int m : kDecodeRows) {
      const std::string shape = std::string(s.name) + "/M:" + std::to_string(m);
      const std::string peer = "llm/onednn/" + shape;
      benchmark::RegisterBenchmark(peer.c_str(), llm_onednn, s, m)->Unit(benchmark::kMicrosecond);
      for (const auto& [name, format, activations] : formats) {
        const std::string what = label + ", M " + std::to_string(m) + ": " + name;
        for (const int threads : kDecodeThreads) {
          if (threads > 1 && activations == BlockActivations::int16) continue;
          const std::string ours =
              "llm/" + std::string(name) + "/" + shape + (threads == 1 ? "" : "/threads:" + std::to_string(threads));
          benchmark::RegisterBenchmark(ours.c_str(), llm_blocks, s, m, format, threads, activations, Placement::arena,
                                       BlockKernels::amx)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
          comparisons.push_back({what + ", " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") +
                                     " / triad (GB/s)",
                                 ours, "llm/triad/threads:" + std::to_string(threads), "bytes"});
          if (threads == 1) comparisons.push_back({what + " / oneDNN INT8 (calls/s)", ours, peer, "calls"});
        }
        if (activations != BlockActivations::int8) continue;
        // One-thread variants of the 8-bit rows: "llm/<name><suffix>/<shape>".
        const std::string one_thread = "llm/" + std::string(name) + "/" + shape;
        auto variant = [&](const char* suffix, Placement placement, BlockKernels kernels) {
          const std::string full = "llm/" + std::string(name) + suffix + "/" + shape;
          benchmark::RegisterBenchmark(full.c_str(), llm_blocks, s, m, format, 1, activations, placement, kernels)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
          return full;
        };
        const std::string small = variant("_4k", Placement::own, BlockKernels::amx);
        comparisons.push_back({what + ", 1 thread: 2 MiB pages / 4 KiB pages (calls/s)", one_thread, small, "calls"});
        comparisons.push_back(
            {what + ", 1 thread / triad on 2 MiB pages (GB/s)", one_thread, "llm/triad_2m/threads:1", "bytes"});
        if (m == 1) continue;
        variant("_cached", Placement::cached, BlockKernels::amx);
        if (amx) {
          const std::string vnni = variant("_vnni", Placement::arena, BlockKernels::avx512_vnni);
          comparisons.push_back({what + ", 1 thread: AMX / the AVX-512 VNNI tiles (calls/s)", one_thread, vnni, "calls"});
          comparisons.push_back({what + "_vnni, 1 thread / triad (GB/s)", vnni, "llm/triad/threads:1", "bytes"});
        }
      }
    }
    // A prompt chunk's rows: the block kernels' arithmetic against oneDNN's INT8 GEMM (u8 x s8)
    // created for exactly these rows.
    if (std::string_view(s.name) == "smollm2.head") continue;  // prefill's head: one row
    const std::string shape = std::string(s.name) + "/M:" + std::to_string(kPrefillRows);
    const std::string peer = "llm/onednn_int8/" + shape;
    benchmark::RegisterBenchmark(peer.c_str(), onednn_gemm, s, kPrefillRows)->Unit(benchmark::kMicrosecond);
    for (const auto& [name, format, activations] : formats) {
      const std::string ours = "llm/" + std::string(name) + "/" + shape;
      benchmark::RegisterBenchmark(ours.c_str(), llm_blocks, s, kPrefillRows, format, 1, activations, Placement::arena,
                                   BlockKernels::amx)
          ->Unit(benchmark::kMicrosecond);
      comparisons.push_back({label + ", M " + std::to_string(kPrefillRows) + ": " + name + " / oneDNN INT8 (GFLOP/s)",
                             ours, peer, "flops"});
    }
  }
  return comparisons;
}

}  // namespace

int main(int argc, char** argv) {
  set_compute_threads(1);  // as the executor's compute thread: one core (two where a name says)
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const dnnl_version_t* onednn = dnnl_version();
  benchmark::AddCustomContext("onednn", std::to_string(onednn->major) + "." +
                                            std::to_string(onednn->minor) + "." +
                                            std::to_string(onednn->patch));
  // The kernel On Demand is compiled for here and in the decoder (builtin_implementation()
  // would name the shared library's own, built for any x86-64).
  benchmark::AddCustomContext("simdjson_kernel",
                              SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
  benchmark::AddCustomContext("compute_threads", "1");
  RatioReporter reporter(*benchmark::CreateDefaultDisplayReporter(), register_benchmarks());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
