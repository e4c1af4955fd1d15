// The language model's device forward (cuda::Int8Llama) on a small random llama against a
// double-precision forward on the host: steps that mix a prompt cut into two chunks, decodes
// and a one-token prompt over scattered KV blocks, each logit row against the host's logits
// of the same prefix (teacher-forced).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "coinfer/core/half.hpp"
#include "coinfer/ops/cuda/int8_llama.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;
using gpu_test::random_floats;

namespace {

struct TinyLlama {
  int layers = 2, hidden = 128, heads = 4, kv_heads = 2, head_dim = 32, ffn = 256, vocab = 512;
  int context = 128;
  float eps = 1e-5f, theta = 10000.0f;
  std::vector<float> embedding, output_norm;
  struct Layer {
    std::vector<float> attention_norm, qkv, qkv_bias, attention_out, ffn_norm, gate_up, down;
  };
  std::vector<Layer> blocks;

  explicit TinyLlama(std::mt19937& rng) {
    const auto h = static_cast<std::size_t>(hidden);
    const auto qkv_width = static_cast<std::size_t>((heads + 2 * kv_heads) * head_dim);
    embedding = random_floats(static_cast<std::size_t>(vocab) * h, rng, 1.0f);
    for (float& e : embedding) e = half_to_float(float_to_half(e));  // the device keeps FP16
    output_norm = random_floats(h, rng, 0.2f);
    for (float& v : output_norm) v += 1.0f;
    for (int l = 0; l < layers; ++l) {
      Layer b;
      b.attention_norm = random_floats(h, rng, 0.2f);
      b.ffn_norm = random_floats(h, rng, 0.2f);
      for (float& v : b.attention_norm) v += 1.0f;
      for (float& v : b.ffn_norm) v += 1.0f;
      b.qkv = random_floats(qkv_width * h, rng, 1.0f / std::sqrt(float(hidden)));
      b.qkv_bias = random_floats(qkv_width, rng, 0.1f);
      b.attention_out = random_floats(h * h, rng, 1.0f / std::sqrt(float(hidden)));
      b.gate_up = random_floats(2 * static_cast<std::size_t>(ffn) * h, rng,
                                1.0f / std::sqrt(float(hidden)));
      b.down = random_floats(h * static_cast<std::size_t>(ffn), rng, 1.0f / std::sqrt(float(ffn)));
      blocks.push_back(std::move(b));
    }
  }

  LlamaWeights weights() const {
    LlamaWeights w;
    w.layers = layers;
    w.hidden = hidden;
    w.heads = heads;
    w.kv_heads = kv_heads;
    w.head_dim = head_dim;
    w.ffn = ffn;
    w.vocab = vocab;
    w.context = context;
    w.rms_eps = eps;
    w.rope_theta = theta;
    for (const Layer& b : blocks) {
      w.blocks.push_back(
          {b.attention_norm, b.qkv, b.qkv_bias, b.attention_out, b.ffn_norm, b.gate_up, b.down});
    }
    w.embedding = embedding;
    w.output_norm = output_norm;
    w.head = embedding;  // tied
    return w;
  }

  // y[o] = sum_i W[o, i] x[i] (+ bias[o]).
  static std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x,
                                    std::size_t out, const std::vector<float>* bias = nullptr) {
    std::vector<double> y(out);
    for (std::size_t o = 0; o < out; ++o) {
      double sum = bias ? (*bias)[o] : 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) sum += double(w[o * x.size() + i]) * x[i];
      y[o] = sum;
    }
    return y;
  }

  std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<float>& w) const {
    double squares = 0;
    for (double v : x) squares += v * v;
    const double inv = 1.0 / std::sqrt(squares / double(x.size()) + eps);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
    return y;
  }

  // Logits at every position of `tokens`, causal, in double (RoPE pairs (2i, 2i + 1)).
  std::vector<std::vector<double>> forward(const std::vector<std::int32_t>& tokens) const {
    const auto n = tokens.size();
    const auto h = static_cast<std::size_t>(hidden);
    const int group = heads / kv_heads, half = head_dim / 2;
    std::vector<std::vector<double>> x(n, std::vector<double>(h));
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t c = 0; c < h; ++c)
        x[t][c] = embedding[static_cast<std::size_t>(tokens[t]) * h + c];
    }
    for (const Layer& b : blocks) {
      std::vector<std::vector<double>> qkv(n);
      for (std::size_t t = 0; t < n; ++t) {
        qkv[t] = matvec(b.qkv, rms_norm(x[t], b.attention_norm),
                        static_cast<std::size_t>((heads + 2 * kv_heads) * head_dim), &b.qkv_bias);
        for (int head = 0; head < heads + kv_heads; ++head) {
          double* v = qkv[t].data() + head * head_dim;
          for (int i = 0; i < half; ++i) {
            const double angle = double(t) * std::pow(double(theta), -2.0 * i / head_dim);
            const double x0 = v[2 * i], x1 = v[2 * i + 1];
            v[2 * i] = x0 * std::cos(angle) - x1 * std::sin(angle);
            v[2 * i + 1] = x0 * std::sin(angle) + x1 * std::cos(angle);
          }
        }
      }
      for (std::size_t t = 0; t < n; ++t) {
        std::vector<double> attention(static_cast<std::size_t>(heads * head_dim), 0.0);
        for (int head = 0; head < heads; ++head) {
          const int g = head / group;
          const double* q = qkv[t].data() + head * head_dim;
          std::vector<double> scores(t + 1);
          for (std::size_t p = 0; p <= t; ++p) {
            const double* k = qkv[p].data() + (heads + g) * head_dim;
            double dot = 0;
            for (int d = 0; d < head_dim; ++d) dot += q[d] * k[d];
            scores[p] = dot / std::sqrt(double(head_dim));
          }
          const double top = *std::max_element(scores.begin(), scores.end());
          double sum = 0;
          for (double& s : scores) sum += (s = std::exp(s - top));
          for (std::size_t p = 0; p <= t; ++p) {
            const double* v = qkv[p].data() + (heads + kv_heads + g) * head_dim;
            for (int d = 0; d < head_dim; ++d)
              attention[head * head_dim + d] += scores[p] / sum * v[d];
          }
        }
        const auto o = matvec(b.attention_out, attention, h);
        for (std::size_t c = 0; c < h; ++c) x[t][c] += o[c];
      }
      for (std::size_t t = 0; t < n; ++t) {
        const auto gu =
            matvec(b.gate_up, rms_norm(x[t], b.ffn_norm), 2 * static_cast<std::size_t>(ffn));
        std::vector<double> act(static_cast<std::size_t>(ffn));
        for (int c = 0; c < ffn; ++c) act[c] = gu[c] / (1 + std::exp(-gu[c])) * gu[ffn + c];
        const auto d = matvec(b.down, act, h);
        for (std::size_t c = 0; c < h; ++c) x[t][c] += d[c];
      }
    }
    std::vector<std::vector<double>> logits(n);
    for (std::size_t t = 0; t < n; ++t) {
      logits[t] = matvec(embedding, rms_norm(x[t], output_norm), static_cast<std::size_t>(vocab));
    }
    return logits;
  }
};

double cosine(const float* a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    ab += a[i] * b[i];
    aa += double(a[i]) * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace

TEST_CASE("llama on the device: chunked prefill, decodes and paged KV match a double forward") {
  std::mt19937 rng(41);
  const TinyLlama model(rng);
  const int block_size = 16, kv_blocks = 32;
  Int8Llama device;
  Int8LlamaOptions options;
  options.kv_blocks = kv_blocks;
  options.block_size = block_size;
  options.max_step_tokens = 64;
  options.max_rows = 8;
  REQUIRE(Int8Llama::create(model.weights(), options, device).ok());

  // Three sequences' tokens (teacher-forced) and their blocks, scattered over the cache.
  std::uniform_int_distribution<int> id(0, model.vocab - 1);
  std::vector<std::vector<std::int32_t>> sequences(3);
  for (auto& s : sequences) {
    for (int i = 0; i < 24; ++i) s.push_back(id(rng));
  }
  std::vector<std::int32_t> pool(kv_blocks);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  const std::vector<std::vector<std::int32_t>> tables = {{pool[0], pool[1]}, {pool[2]}, {pool[3]}};
  const int table_width = 8;

  // Steps: (sequence, first position, tokens, logit rows) per row.
  struct Row {
    int sequence, position, count, logit_rows;
  };
  const std::vector<std::vector<Row>> steps = {
      {{0, 0, 13, 0}, {1, 0, 5, 1}},                // A's first chunk, B's prompt
      {{0, 13, 7, 1}, {1, 5, 1, 1}, {2, 0, 1, 1}},  // A's second chunk, B decodes, C's prompt
      {{0, 20, 1, 1}, {1, 6, 1, 1}, {2, 1, 1, 1}},  // everyone decodes
  };
  std::vector<std::vector<std::vector<double>>> reference;
  for (const auto& s : sequences) reference.push_back(model.forward(s));

  double worst_cosine = 1.0;
  int agree = 0, compared = 0;
  for (const auto& rows : steps) {
    std::vector<std::int32_t> ids, positions, slots, starts{0}, lengths, block_tables, logit_tokens;
    std::vector<std::pair<int, int>> expected;  // (sequence, position) per logit row
    for (const Row& r : rows) {
      const auto& table = tables[static_cast<std::size_t>(r.sequence)];
      for (int p = r.position; p < r.position + r.count; ++p) {
        ids.push_back(sequences[static_cast<std::size_t>(r.sequence)][static_cast<std::size_t>(p)]);
        positions.push_back(p);
        slots.push_back(table[static_cast<std::size_t>(p / block_size)] * block_size +
                        p % block_size);
        if (p >= r.position + r.count - r.logit_rows) {
          logit_tokens.push_back(static_cast<std::int32_t>(ids.size()) - 1);
          expected.emplace_back(r.sequence, p);
        }
      }
      starts.push_back(static_cast<std::int32_t>(ids.size()));
      lengths.push_back(r.position + r.count);
      std::vector<std::int32_t> row(table_width, 0);
      std::copy(table.begin(), table.end(), row.begin());
      block_tables.insert(block_tables.end(), row.begin(), row.end());
    }
    LlamaStepView view;
    view.token_ids = ids;
    view.positions = positions;
    view.slots = slots;
    view.query_start = starts;
    view.context_lens = lengths;
    view.block_tables = block_tables;
    view.table_width = table_width;
    view.logit_tokens = logit_tokens;
    for (const Row& r : rows) view.max_query_tokens = std::max(view.max_query_tokens, r.count);
    std::vector<float> logits;
    REQUIRE(device.forward(view, logits, nullptr).ok());
    REQUIRE(logits.size() == expected.size() * static_cast<std::size_t>(model.vocab));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& want = reference[static_cast<std::size_t>(expected[i].first)]
                                  [static_cast<std::size_t>(expected[i].second)];
      const float* got = logits.data() + i * static_cast<std::size_t>(model.vocab);
      worst_cosine = std::min(worst_cosine, cosine(got, want));
      const auto top_got = std::max_element(got, got + model.vocab) - got;
      const auto top_want = std::max_element(want.begin(), want.end()) - want.begin();
      agree += top_got == top_want;
      ++compared;
    }
  }
  CAPTURE(worst_cosine);
  CHECK(compared == 8);
  CHECK(worst_cosine > 0.995);  // W8A8 per channel and per token against double
  CHECK(agree >= 7);

  // Decode steps replayed from a CUDA graph give the eager step's logits bit for bit (INT8
  // GEMMs accumulate exactly; every other kernel works per row): the first step of a size runs
  // eagerly and is captured, the next replays it with new inputs. Three sequences padded to a
  // bucket of 4 rows, tables as wide as the context.
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  const auto decode = [&](int step, bool graph, std::vector<float>& logits) {
    const int width = graph ? device.max_table_width() : table_width;
    const int rows = graph ? 4 : 3;
    std::vector<std::int32_t> ids, positions, slots, starts{0}, lengths, block_tables, wanted;
    for (int r = 0; r < rows; ++r) {
      std::vector<std::int32_t> row(static_cast<std::size_t>(width), 0);
      if (r < 3) {
        const auto& table = tables[static_cast<std::size_t>(r)];
        const int p = (r == 0 ? 21 : r == 1 ? 7 : 2) + step;  // each sequence's next position
        ids.push_back(sequences[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)]);
        positions.push_back(p);
        slots.push_back(table[static_cast<std::size_t>(p / block_size)] * block_size +
                        p % block_size);
        lengths.push_back(p + 1);
        std::copy(table.begin(), table.end(), row.begin());
      } else {  // padding: writes nothing, attends to nothing
        ids.push_back(0);
        positions.push_back(0);
        slots.push_back(-1);
        lengths.push_back(0);
      }
      starts.push_back(r + 1);
      wanted.push_back(r);
      block_tables.insert(block_tables.end(), row.begin(), row.end());
    }
    LlamaStepView view;
    view.token_ids = ids;
    view.positions = positions;
    view.slots = slots;
    view.query_start = starts;
    view.context_lens = lengths;
    view.block_tables = block_tables;
    view.table_width = width;
    view.logit_tokens = wanted;
    view.returned_logits = 3;
    const Status s = device.forward(view, logits, stream, graph);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(logits.size() == 3 * static_cast<std::size_t>(model.vocab));
  };
  for (int step = 0; step < 2; ++step) {  // the eager step and the graph step write equal K, V
    std::vector<float> eager, replayed;
    decode(step, true, replayed);
    decode(step, false, eager);
    CHECK(eager == replayed);
    decode(step, true, replayed);
    CHECK(eager == replayed);
  }
  CHECK(device.graphs() == 1);
  CHECK(device.graph_error().ok());
  cudaStreamDestroy(stream);

  // Copy-on-write moves a block's keys and values in every layer; a bad block is refused.
  CHECK(device.copy_block(pool[0], pool[9], nullptr).ok());
  CHECK(device.copy_block(0, kv_blocks, nullptr).message() ==
        "Int8Llama: block copy 0 -> 32 outside the 32-block cache");
}
