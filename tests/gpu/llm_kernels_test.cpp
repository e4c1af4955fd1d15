// GPU tests of the language model's step kernels (ops/cuda/llm_kernels): each against the same
// math in double precision on the host, on a step laid out as the device runner's
// (generation::DeviceStep): ragged rows mixing a prefill chunk that continues a prompt, decodes
// and a padding row, scattered KV blocks, grouped-query heads (SmolLM2-135M's 9 over 3).
#include "coinfer/ops/cuda/llm_kernels.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "coinfer/core/half.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;
using gpu_test::random_floats;

namespace {

template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b;
  REQUIRE(DeviceBuffer::allocate(std::max<std::size_t>(v.size() * sizeof(T), 1), b).ok());
  REQUIRE(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  return b;
}

template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t count) {
  std::vector<T> v(count);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(v.data(), b.data(), count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return v;
}

template <class T>
T* as(DeviceBuffer& b) {
  return reinterpret_cast<T*>(b.data());
}

// The quantizer's contract against a double reference y: one scale max|y| / 127 per row, and
// each q within one step of y / scale (rounding of a value computed in float).
void check_quantized(const std::vector<std::int8_t>& q, const std::vector<float>& scale,
                     const std::vector<double>& y, int m, int n) {
  for (int r = 0; r < m; ++r) {
    double amax = 0;
    for (int c = 0; c < n; ++c)
      amax = std::max(amax, std::abs(y[static_cast<std::size_t>(r) * n + c]));
    CHECK(scale[static_cast<std::size_t>(r)] == doctest::Approx(amax / 127).epsilon(1e-5));
    int worst = 0;
    for (int c = 0; c < n; ++c) {
      const auto i = static_cast<std::size_t>(r) * n + c;
      const double want = std::round(y[i] * 127 / amax);
      worst = std::max(worst, static_cast<int>(std::abs(q[i] - want)));
    }
    CHECK(worst <= 1);
  }
}

}  // namespace

TEST_CASE("llm kernels: token embeddings come from the FP16 table, unknown ids as zeros") {
  std::mt19937 rng(3);
  const int vocab = 1000, n = 576;
  std::vector<std::uint16_t> table(static_cast<std::size_t>(vocab) * n);
  for (auto& v : table) v = float_to_half(std::normal_distribution<float>(0, 1)(rng));
  const std::vector<std::int32_t> ids{5, 999, 0, 5, -1, 1000};
  DeviceBuffer d_table = upload(table), d_ids = upload(ids), d_x;
  REQUIRE(DeviceBuffer::allocate(sizeof(float) * ids.size() * n, d_x).ok());
  REQUIRE(embed_tokens(as<std::int32_t>(d_ids), static_cast<int>(ids.size()),
                       as<std::uint16_t>(d_table), vocab, n, as<float>(d_x), nullptr)
              .ok());
  const auto x = download<float>(d_x, ids.size() * n);
  int wrong = 0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    for (int c = 0; c < n; ++c) {
      const bool known = ids[t] >= 0 && ids[t] < vocab;
      const float want =
          known ? half_to_float(table[static_cast<std::size_t>(ids[t]) * n + c]) : 0.0f;
      wrong += x[t * n + c] != want;
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("llm kernels: RMSNorm + quantize and SwiGLU + quantize match double precision") {
  std::mt19937 rng(5);
  const int m = 7, n = 576, f = 1536;
  const auto x = random_floats(static_cast<std::size_t>(m) * n, rng, 3.0f);
  auto weight = random_floats(n, rng, 0.5f);
  std::vector<double> y(x.size());
  for (int r = 0; r < m; ++r) {
    double squares = 0;
    for (int c = 0; c < n; ++c) squares += double(x[r * n + c]) * x[r * n + c];
    const double inv = 1.0 / std::sqrt(squares / n + 1e-5);
    for (int c = 0; c < n; ++c) y[r * n + c] = x[r * n + c] * inv * weight[c];
  }
  DeviceBuffer dx = upload(x), dw = upload(weight), dq, ds;
  REQUIRE(DeviceBuffer::allocate(x.size(), dq).ok());
  REQUIRE(DeviceBuffer::allocate(sizeof(float) * m, ds).ok());
  REQUIRE(rms_norm_quantize(as<float>(dx), as<float>(dw), m, n, 1e-5f, as<std::int8_t>(dq),
                            as<float>(ds), nullptr)
              .ok());
  check_quantized(download<std::int8_t>(dq, x.size()), download<float>(ds, m), y, m, n);

  const auto gate_up = random_floats(static_cast<std::size_t>(m) * 2 * f, rng, 2.0f);
  std::vector<double> h(static_cast<std::size_t>(m) * f);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < f; ++c) {
      const double g = gate_up[static_cast<std::size_t>(r) * 2 * f + c];
      h[static_cast<std::size_t>(r) * f + c] =
          g / (1 + std::exp(-g)) * gate_up[static_cast<std::size_t>(r) * 2 * f + f + c];
    }
  }
  DeviceBuffer dg = upload(gate_up), dh;
  REQUIRE(DeviceBuffer::allocate(h.size(), dh).ok());
  REQUIRE(silu_mul_quantize(as<float>(dg), m, f, as<std::int8_t>(dh), as<float>(ds), nullptr).ok());
  check_quantized(download<std::int8_t>(dh, h.size()), download<float>(ds, m), h, m, f);
}

TEST_CASE("llm kernels: RoPE, the KV write and paged attention over ragged rows with GQA") {
  std::mt19937 rng(17);
  const int heads = 9, kv_heads = 3, head_dim = 64, block_size = 16, blocks = 64;
  const int context = 256, half = head_dim / 2, width = (heads + 2 * kv_heads) * head_dim;
  const int kv_width = kv_heads * head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));

  for (const bool neox : {false, true}) {
    CAPTURE(neox);
    // Rows: a prompt's second chunk (positions 20..56), two decodes (at 70 and 0), padding.
    struct Row {
      int history, length;
    };
    const std::vector<Row> shape = {{20, 37}, {70, 1}, {0, 1}, {0, 0}};
    std::vector<int> pool(blocks);
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    const int table_width = 8;
    std::vector<std::int32_t> tables(shape.size() * table_width, 0), positions, slots,
        query_start{0}, context_lens;
    std::size_t next = 0;
    std::vector<std::vector<int>> row_tables;
    for (std::size_t r = 0; r < shape.size(); ++r) {
      const int end = shape[r].history + shape[r].length;
      std::vector<int> table;
      for (int b = 0; b < (end + block_size - 1) / block_size; ++b) table.push_back(pool[next++]);
      std::copy(table.begin(), table.end(),
                tables.begin() + static_cast<std::ptrdiff_t>(r) * table_width);
      row_tables.push_back(table);
      if (shape[r].length == 0) {  // padding: one inert token
        positions.push_back(0);
        slots.push_back(-1);
      }
      for (int p = shape[r].history; p < end; ++p) {
        positions.push_back(p);
        slots.push_back(table[p / block_size] * block_size + p % block_size);
      }
      query_start.push_back(static_cast<std::int32_t>(positions.size()));
      context_lens.push_back(end);
    }
    const int tokens = static_cast<int>(positions.size());
    const int rows = static_cast<int>(shape.size());

    // Earlier steps' K (already rotated) and V in the cache, as FP16; this step's Q, K, V.
    std::vector<std::uint16_t> k_cache(static_cast<std::size_t>(blocks) * block_size * kv_width),
        v_cache(k_cache.size());
    for (auto& v : k_cache) v = float_to_half(std::normal_distribution<float>(0, 1)(rng));
    for (auto& v : v_cache) v = float_to_half(std::normal_distribution<float>(0, 1)(rng));
    const auto qkv = random_floats(static_cast<std::size_t>(tokens) * width, rng);
    std::vector<float> cos_table(static_cast<std::size_t>(context) * half),
        sin_table(cos_table.size());
    for (int p = 0; p < context; ++p) {
      for (int i = 0; i < half; ++i) {
        const double angle = p * std::pow(10000.0, -2.0 * i / head_dim);
        cos_table[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::cos(angle));
        sin_table[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::sin(angle));
      }
    }

    // The host: rotate in double, write K and V rounded to FP16, attend in double.
    std::vector<double> rotated(qkv.begin(), qkv.end());
    for (int t = 0; t < tokens; ++t) {
      for (int head = 0; head < heads + kv_heads; ++head) {
        double* v = rotated.data() + static_cast<std::size_t>(t) * width + head * head_dim;
        for (int i = 0; i < half; ++i) {
          const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
          const double c = cos_table[static_cast<std::size_t>(positions[t]) * half + i];
          const double s = sin_table[static_cast<std::size_t>(positions[t]) * half + i];
          const double x0 = v[a], x1 = v[b];
          v[a] = x0 * c - x1 * s;
          v[b] = x0 * s + x1 * c;
        }
      }
    }
    // The CPU runner's layout: [block][kv_head][slot][head_dim].
    const auto kv_at = [&](int block, int kv_head, int offset) {
      return ((static_cast<std::size_t>(block) * kv_heads + kv_head) * block_size + offset) *
             head_dim;
    };
    std::vector<std::uint16_t> k_host = k_cache, v_host = v_cache;
    for (int t = 0; t < tokens; ++t) {
      if (slots[t] < 0) continue;
      for (int c = 0; c < kv_width; ++c) {
        const std::size_t at =
            kv_at(slots[t] / block_size, c / head_dim, slots[t] % block_size) + c % head_dim;
        const std::size_t from = static_cast<std::size_t>(t) * width + heads * head_dim + c;
        k_host[at] = float_to_half(static_cast<float>(rotated[from]));
        v_host[at] = float_to_half(qkv[from + kv_width]);
      }
    }
    std::vector<double> want(static_cast<std::size_t>(tokens) * heads * head_dim, 0.0);
    for (int r = 0; r < rows; ++r) {
      if (context_lens[r] == 0) continue;
      for (int t = query_start[r]; t < query_start[r + 1]; ++t) {
        for (int h = 0; h < heads; ++h) {
          const int g = h / (heads / kv_heads);
          const double* q = rotated.data() + static_cast<std::size_t>(t) * width + h * head_dim;
          std::vector<double> scores;
          for (int p = 0; p <= positions[t]; ++p) {
            const std::size_t at = kv_at(row_tables[r][p / block_size], g, p % block_size);
            double dot = 0;
            for (int d = 0; d < head_dim; ++d) dot += q[d] * scale * half_to_float(k_host[at + d]);
            scores.push_back(dot);
          }
          const double top = *std::max_element(scores.begin(), scores.end());
          double sum = 0;
          for (double& s : scores) sum += (s = std::exp(s - top));
          double* o = want.data() + static_cast<std::size_t>(t) * heads * head_dim + h * head_dim;
          for (int p = 0; p <= positions[t]; ++p) {
            const std::size_t at = kv_at(row_tables[r][p / block_size], g, p % block_size);
            for (int d = 0; d < head_dim; ++d)
              o[d] += scores[p] / sum * half_to_float(v_host[at + d]);
          }
        }
      }
    }

    DeviceBuffer d_qkv = upload(qkv), d_pos = upload(positions), d_slots = upload(slots),
                 d_cos = upload(cos_table), d_sin = upload(sin_table), d_k = upload(k_cache),
                 d_v = upload(v_cache), d_start = upload(query_start),
                 d_lens = upload(context_lens), d_tables = upload(tables), d_out;
    REQUIRE(DeviceBuffer::allocate(sizeof(float) * want.size(), d_out).ok());
    REQUIRE(cudaMemset(d_out.data(), 0xff, sizeof(float) * want.size()) == cudaSuccess);
    REQUIRE(rope_write_kv(as<float>(d_qkv), as<std::int32_t>(d_pos), as<std::int32_t>(d_slots),
                          tokens, heads, kv_heads, head_dim, block_size, as<float>(d_cos),
                          as<float>(d_sin), neox, as<std::uint16_t>(d_k), as<std::uint16_t>(d_v),
                          nullptr)
                .ok());
    REQUIRE(paged_attention(as<float>(d_qkv), width, as<std::uint16_t>(d_k), as<std::uint16_t>(d_v),
                            as<std::int32_t>(d_pos), as<std::int32_t>(d_start),
                            as<std::int32_t>(d_lens), as<std::int32_t>(d_tables), table_width, rows,
                            tokens, heads, kv_heads, head_dim, block_size, scale, as<float>(d_out),
                            nullptr)
                .ok());

    // Rotated Q and K against double; the caches written exactly where the slots say, and
    // nowhere else; the attention against double.
    const auto got_qkv = download<float>(d_qkv, qkv.size());
    double worst_rotation = 0;
    for (std::size_t i = 0; i < qkv.size(); ++i) {
      worst_rotation = std::max(worst_rotation, std::abs(got_qkv[i] - rotated[i]));
    }
    CHECK(worst_rotation < 1e-5);
    const auto got_k = download<std::uint16_t>(d_k, k_cache.size());
    const auto got_v = download<std::uint16_t>(d_v, v_cache.size());
    std::size_t k_off = 0, v_off = 0;
    for (std::size_t i = 0; i < k_cache.size(); ++i) {
      // A rotated key may round to the neighbouring half; an untouched entry never differs.
      if (got_k[i] != k_host[i] && std::abs(half_to_float(got_k[i]) - half_to_float(k_host[i])) >
                                       1e-3f * (1 + std::abs(half_to_float(k_host[i])))) {
        ++k_off;
      }
      v_off += got_v[i] != v_host[i];
    }
    CHECK(k_off == 0);
    CHECK(v_off == 0);
    const auto got = download<float>(d_out, want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - want[i]));
    CHECK(worst < 1e-3);  // K rounded to FP16 by both; the rest FP32 against double

    // The tiled prefill kernel over the same step (the 37-token chunk in tiles of 8 query
    // tokens across tiles of 32 positions; the decodes and the padding row tiles of one).
    REQUIRE(cudaMemset(d_out.data(), 0xff, sizeof(float) * want.size()) == cudaSuccess);
    REQUIRE(prefill_attention(as<float>(d_qkv), width, as<std::uint16_t>(d_k),
                              as<std::uint16_t>(d_v), as<std::int32_t>(d_pos),
                              as<std::int32_t>(d_start), as<std::int32_t>(d_lens),
                              as<std::int32_t>(d_tables), table_width, rows, tokens, 37, heads,
                              kv_heads, head_dim, block_size, scale, as<float>(d_out), nullptr)
                .ok());
    const auto tiled = download<float>(d_out, want.size());
    double worst_tiled = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst_tiled = std::max(worst_tiled, std::abs(tiled[i] - want[i]));
    CHECK(worst_tiled < 1e-3);
  }

  // Shapes the kernel does not take are refused, not launched.
  CHECK(paged_attention(nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 1, 1,
                        9, 3, 48, 16, 1.0f, nullptr, nullptr)
            .message() == "paged_attention: head_dim 48 is not a multiple of 32 up to 128");
  CHECK(paged_attention(nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 1, 1,
                        9, 2, 64, 16, 1.0f, nullptr, nullptr)
            .message() == "paged_attention: 9 query heads over 2 KV heads");
}

namespace {

// The sampler's distribution over one row, in double on the host, by sorting: the top_k
// likeliest, weights relative to the likeliest, min-p, then the smallest likeliest set that
// reaches top_p of their weight.
std::vector<double> host_distribution(const std::vector<float>& logits, const RowSampling& p) {
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  if (p.top_k > 0 && static_cast<std::size_t>(p.top_k) < order.size()) order.resize(p.top_k);
  const double top = logits[order[0]];
  std::vector<std::pair<int, double>> kept;
  for (int id : order) {
    const double w = std::exp((logits[id] - top) / p.temperature);
    if (w > 0 && w >= p.min_p) kept.emplace_back(id, w);
  }
  double mass = 0;
  for (const auto& [id, w] : kept) mass += w;
  if (p.top_p < 1.0f) {
    double sum = 0;
    std::size_t n = 0;
    while (n < kept.size() && sum < p.top_p * mass) sum += kept[n++].second;
    kept.resize(n);
    mass = sum;
  }
  std::vector<double> probability(logits.size(), 0.0);
  for (const auto& [id, w] : kept) probability[static_cast<std::size_t>(id)] = w / mass;
  return probability;
}

}  // namespace

TEST_CASE("llm kernels: sampling on the device, greedy exactly and draws by the distribution") {
  std::mt19937 rng(29);
  // Greedy at SmolLM2's vocabulary: the first of two equal maxima, as the CPU's argmax.
  {
    const int vocab = 49152;
    auto logits = random_floats(2 * static_cast<std::size_t>(vocab), rng, 2.0f);
    logits[777] = logits[40000] = 50.0f;  // row 0: a tie
    logits[vocab + 49151] = 60.0f;        // row 1: the last token
    std::vector<RowSampling> params(2);
    params[1].temperature = 0.7f;
    params[1].top_k = 1;  // top_k 1 is greedy too
    DeviceBuffer d_logits = upload(logits), d_params = upload(params), d_scratch, d_tokens;
    REQUIRE(DeviceBuffer::allocate(sizeof(float) * logits.size(), d_scratch).ok());
    REQUIRE(DeviceBuffer::allocate(sizeof(std::int32_t) * 2, d_tokens).ok());
    REQUIRE(sample_rows(as<float>(d_logits), 2, vocab, as<RowSampling>(d_params),
                        as<float>(d_scratch), as<std::int32_t>(d_tokens), nullptr)
                .ok());
    CHECK(download<std::int32_t>(d_tokens, 2) == std::vector<std::int32_t>{777, 49151});
  }

  // Draws: the same row under n stratified uniforms ((i + 0.5) / n) lands on each token
  // n * p times, give or take the two ends of its interval. A vocabulary that is not a
  // multiple of the block's threads, so that the spans are uneven.
  const int vocab = 2047, n = 8192;
  const auto row = random_floats(vocab, rng, 2.5f);
  for (const RowSampling& setting :
       {RowSampling{0.8f, 50, 0.9f, 0.02f, 0.0f}, RowSampling{1.3f, -1, 0.5f, 0.0f, 0.0f},
        RowSampling{1.0f, 0, 1.0f, 0.1f, 0.0f}, RowSampling{2.0f, 7, 1.0f, 0.0f, 0.0f}}) {
    CAPTURE(setting.temperature);
    CAPTURE(setting.top_k);
    CAPTURE(setting.top_p);
    CAPTURE(setting.min_p);
    std::vector<float> logits;
    std::vector<RowSampling> params(n, setting);
    for (int i = 0; i < n; ++i) {
      logits.insert(logits.end(), row.begin(), row.end());
      params[static_cast<std::size_t>(i)].uniform = (static_cast<float>(i) + 0.5f) / n;
    }
    DeviceBuffer d_logits = upload(logits), d_params = upload(params), d_scratch, d_tokens;
    REQUIRE(DeviceBuffer::allocate(sizeof(float) * logits.size(), d_scratch).ok());
    REQUIRE(DeviceBuffer::allocate(sizeof(std::int32_t) * n, d_tokens).ok());
    REQUIRE(sample_rows(as<float>(d_logits), n, vocab, as<RowSampling>(d_params),
                        as<float>(d_scratch), as<std::int32_t>(d_tokens), nullptr)
                .ok());
    const auto tokens = download<std::int32_t>(d_tokens, n);
    std::vector<int> counts(vocab, 0);
    for (std::int32_t t : tokens) {
      REQUIRE(t >= 0);
      REQUIRE(t < vocab);
      ++counts[static_cast<std::size_t>(t)];
    }
    const auto probability = host_distribution(row, setting);
    double worst = 0;
    int outside = 0;  // tokens drawn that the distribution excludes
    for (int t = 0; t < vocab; ++t) {
      worst = std::max(worst, std::abs(counts[t] - n * probability[t]));
      outside += probability[t] == 0 && counts[t] > 0;
    }
    CHECK(outside == 0);
    CHECK(worst <= 2.0);
  }
}
