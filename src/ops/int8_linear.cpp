#include "coinfer/ops/int8_linear.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/gelu.hpp"
#include "coinfer/ops/quantize.hpp"
#include "coinfer/ops/small_m_gemm.hpp"

namespace coinfer {

// Design: a few oneDNN matmul primitives per layer, created at load for fixed batch sizes
// M = 1, 2, 4, ... up to max_gemm_rows (the buckets); a batch of m rows runs as chunks of
// max_gemm_rows rows, each through the smallest bucket that holds it, its extra rows stale and
// their results ignored. Every bucket's primitive is made for the layout the largest one chose,
// so the buckets share one reordered copy of the weights. oneDNN 2.6 picks its fast kernels
// (VNNI/AMX brgemm) only when M is known at creation: with a run-time M
// (DNNL_RUNTIME_DIM_VAL) it falls back to a generic JIT GEMM measured 5-13x slower at these
// shapes (bench/int8_gemm_bench.cpp). INT32 accumulation is exact, so a row's result does not
// depend on the bucket. The source is u8: activations are quantized
// symmetrically to [-127, 127] and stored +128. oneDNN's u8 x s8 kernels are its native ones on
// AVX2/AVX-512(-VNNI); with an s8 source it shifts and compensates internally on every call,
// which measured ~20x slower at M = 1 here. We compensate ourselves with a constant per column:
//   sum_k (q_x + 128) q_w = acc_true + 128 * sum_k q_w[n][k]   (exact in INT32).
// Without VNNI the kernels add pairs of u8 x s8 products in saturating INT16 (vpmaddubsw), so
// the sum is exact only while 255 * (|q_w[k]| + |q_w[k+1]|) <= 32767: weight_qmax 63.
//
// FP32 input channels (outlier decomposition): their weight columns are zero in W_q (so they
// neither set a row's weight scale nor add to the GEMM), their activations are zeroed before
// the row's scale is taken, and the epilogue adds sum_j x[m][c_j] * W[n][c_j] in FP32.
struct Int8Linear::State {
  int n = 0;              // out_features
  int k = 0;              // in_features
  int max_batch = 0;      // rows one forward() takes
  int gemm_rows = 0;      // rows one GEMM runs (chunk size); the scratch below holds this many
  int weight_qmax = 127;  // largest |W_q|
  Activation activation = Activation::none;

  std::vector<float> col_scale;    // FP32 [n]: per-output-channel weight scales
  std::vector<float> bias;         // FP32 [n] (zeros when the layer has none)
  std::vector<float> fp32_weight;  // FP32 [n, k] row-major; empty unless kept
  std::vector<std::int32_t> comp;  // INT32 [n]: 128 * sum_k W_q[n][k], the u8-shift term
  std::vector<std::uint8_t> x_q;   // UINT8 [gemm_rows, k] row-major: quantized activations +128
  std::vector<float> row_scale;    // FP32 [gemm_rows]: per-row activation scales

  std::vector<int> side_channels;  // the FP32 input channels c_j, ascending; usually empty
  std::vector<float> side_weight;  // FP32 [channels, n]: W[:, c_j] transposed, one row per c_j
  std::vector<std::uint16_t> side_half;  // the same in FP16 instead, when asked, in panels of
                                         // 16 columns (side_panel_at; side_weight is empty)
  std::vector<float> side_x;       // FP32 [gemm_rows, channels]: x[m][c_j] of the chunk
  std::vector<std::uint32_t> keep;  // [k]: 0 at the side channels, all ones elsewhere (the
                                    // channels that set a row's activation scale)

  std::vector<std::int32_t> acc;  // INT32 [gemm_rows, n] row-major: GEMM accumulator

  dnnl::engine engine;
  dnnl::stream stream;
  // One per bucket, ascending M.
  struct Bucket {
    int m = 0;
    dnnl::matmul matmul;
    // INT8 quantized W in the layout this primitive asked for (each M may pick its own; buckets
    // that ask for the same layout share one copy).
    dnnl::memory weights;
    dnnl::memory src;  // views x_q as u8 [m, k]
    dnnl::memory dst;  // views acc as s32 [m, n]
  };
  std::vector<Bucket> buckets;
  int weight_copies = 0;              // distinct reordered weight copies among the buckets
  std::size_t weight_copy_bytes = 0;  // their bytes
  dnnl::memory scratchpad;  // user-mode, sized for the largest bucket: none allocated per call

  // Small-M kernels: chunks of at most small_m_rows rows run small_m_gemm() on the shared
  // weight copy (small_m_weights points into it) instead of a bucket's primitive.
  int small_m_rows = 0;
  SmallMIsa small_m_isa = SmallMIsa::none;
  SmallMWeights small_m_weights;
};

namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

// Rows per chunk of the row-by-row loops spread over the compute team.
constexpr std::int64_t row_grain = 16;

// Columns the small-M path multiplies and finishes at a time: a multiple of every kernel's
// column grain (4, 16, 32, 64).
constexpr int small_m_epilogue_columns = 64;

// One pass of the epilogue over a row: the first pass removes the u8-shift term, dequantizes
// and adds the bias; every pass then adds the products of up to 8 FP32 side channels
// (`Count` of them, channel by channel in order: the loop over the columns vectorizes with the
// channels unrolled inside it), and the last one applies ReLU when asked. A row with more
// side channels takes several passes, 8 channels each, so that the order of the FMAs per
// element (and so every bit) is that of one channel at a time.
// A pass covers `cols` columns; side_weight's rows are side_stride floats apart (the layer's
// out_features: a pass may cover part of a row).
template <int Count, bool First, bool Relu>
void epilogue_pass(const std::int32_t* a, int cols, const std::int32_t* comp, float rs,
                   const float* col_scale, const float* bias, const float* xs,
                   const float* side_weight, std::size_t side_stride, float* out) {
  for (int c = 0; c < cols; ++c) {
    float v = First ? dequantize(static_cast<float>(a[c] - comp[c]), rs, col_scale[c], bias[c])
                    : out[c];
    for (int j = 0; j < Count; ++j) {
      v = std::fma(xs[j], side_weight[static_cast<std::size_t>(j) * side_stride + c], v);
    }
    out[c] = Relu ? std::max(v, 0.0f) : v;
  }
}

constexpr int side_channels_per_pass = 8;

using EpiloguePass = void (*)(const std::int32_t*, int, const std::int32_t*, float, const float*,
                              const float*, const float*, const float*, std::size_t, float*);

template <bool First, bool Relu, int... Count>
constexpr std::array<EpiloguePass, sizeof...(Count)> epilogue_passes(
    std::integer_sequence<int, Count...>) {
  return {&epilogue_pass<Count, First, Relu>...};
}

// The pass for 0..8 side channels.
template <bool First, bool Relu>
EpiloguePass epilogue_pass_for(int count) {
  static constexpr auto passes = epilogue_passes<First, Relu>(
      std::make_integer_sequence<int, side_channels_per_pass + 1>{});
  return passes[static_cast<std::size_t>(count)];
}

// One row of the epilogue over `cols` columns: as few passes as the side channels allow (one
// for up to 8).
void epilogue_row(const std::int32_t* a, int cols, const std::int32_t* comp, float rs,
                  const float* col_scale, const float* bias, bool relu, int side,
                  const float* xs, const float* side_weight, std::size_t side_stride,
                  float* out) {
  int done = std::min(side, side_channels_per_pass);
  bool last = done == side;
  (last && relu ? epilogue_pass_for<true, true>(done) : epilogue_pass_for<true, false>(done))(
      a, cols, comp, rs, col_scale, bias, xs, side_weight, side_stride, out);
  while (!last) {
    const int count = std::min(side - done, side_channels_per_pass);
    last = done + count == side;
    const float* weights = side_weight + static_cast<std::size_t>(done) * side_stride;
    (last && relu ? epilogue_pass_for<false, true>(count) : epilogue_pass_for<false, false>(count))(
        a, cols, comp, rs, col_scale, bias, xs + done, weights, side_stride, out);
    done += count;
  }
}

// FP16 side-channel weights (Int8LinearOptions::fp16_side_weights) are stored in panels of
// side_panel_columns output columns: panel p holds, channel after channel, the 16 weights of
// columns 16p..16p+15 (zeros past out_features). An epilogue over a range of columns reads
// its side weights as one contiguous stream, which the hardware prefetchers follow; rows of
// [channels, out_features] put each channel's few columns on another page, and the loads
// waited on memory (half of the side pass's samples in a profile at 16 decode streams).
constexpr int side_panel_columns = 16;

std::size_t side_panel_at(int channels, int j, int c) noexcept {
  return (static_cast<std::size_t>(c / side_panel_columns) * static_cast<std::size_t>(channels) +
          static_cast<std::size_t>(j)) * side_panel_columns +
         static_cast<std::size_t>(c % side_panel_columns);
}

// After the first pass has dequantized every row, a tile of `Rows` rows adds
// x[m][c_j] * W[n][c_j] for all the side channels, eight columns at a time, the tile's sums
// held in registers across the channels: each weight is widened from FP16 (F16C) once for the
// tile instead of once per row. Every element still gets the same fused multiply-adds in the
// same order (channel by channel from the dequantized value, ReLU last when asked), so its
// bits are those of a row-at-a-time loop. Columns [c0, c1) of rows `stride` floats apart.
template <int Rows, bool Relu>
void side_tile_half(int c0, int c1, int side, const float* xs, const std::uint16_t* panels,
                    std::size_t stride, float* out) {
  const auto xs_stride = static_cast<std::size_t>(side);
  int c = c0;
  for (; c % 8 == 0 && c + 8 <= c1; c += 8) {
    const std::uint16_t* sw = panels + side_panel_at(side, 0, c);
    __m256 acc[Rows];
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) acc[r] = _mm256_loadu_ps(out + r * stride + c);
    for (int j = 0; j < side; ++j) {
      const __m256 w = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
          sw + static_cast<std::size_t>(j) * side_panel_columns)));
#pragma GCC unroll 8
      for (int r = 0; r < Rows; ++r) {
        acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(xs[r * xs_stride + j]), w, acc[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      _mm256_storeu_ps(out + r * stride + c,
                       Relu ? _mm256_max_ps(acc[r], _mm256_setzero_ps()) : acc[r]);
    }
  }
  for (; c < c1; ++c) {  // a range that does not start or end on eight columns
    for (int r = 0; r < Rows; ++r) {
      float v = out[r * stride + c];
      for (int j = 0; j < side; ++j) {
        v = std::fma(xs[r * xs_stride + j], _cvtsh_ss(panels[side_panel_at(side, j, c)]), v);
      }
      out[r * stride + c] = Relu ? std::max(v, 0.0f) : v;
    }
  }
}

constexpr int side_tile_rows = 8;

using SideTileHalf = void (*)(int, int, int, const float*, const std::uint16_t*, std::size_t,
                              float*);

template <bool Relu, int... Rows>
constexpr std::array<SideTileHalf, sizeof...(Rows)> side_tiles_half(
    std::integer_sequence<int, Rows...>) {
  return {&side_tile_half<Rows + 1, Relu>...};
}

// The tile for 1..side_tile_rows rows.
template <bool Relu>
SideTileHalf side_tile_half_for(int rows) {
  static constexpr auto tiles =
      side_tiles_half<Relu>(std::make_integer_sequence<int, side_tile_rows>{});
  return tiles[static_cast<std::size_t>(rows - 1)];
}

// The epilogue of m rows (above) over columns [c0, c1) of n; GELU is a second pass over the
// row while it is in L1 (gelu() in a loop does not vectorize; gelu_in_place() does, with the
// same bits). side: the number of FP32 side channels; side_x FP32 [m, side], side_weight FP32
// [side, n] (or, when side_half is not null, side_half FP16 in panels: side_panel_at); acc and
// y are [m, n].
void epilogue(const std::int32_t* acc, int m, int n, int c0, int c1, const std::int32_t* comp,
              const float* row_scale, const float* col_scale, const float* bias,
              Activation activation, int side, const float* side_x, const float* side_weight,
              const std::uint16_t* side_half, float* y) {
  const auto stride = static_cast<std::size_t>(n);
  const auto first = static_cast<std::size_t>(c0);
  if (side_half != nullptr && side > 0) {
    for (int r = 0; r < m; ++r) {
      const std::size_t offset = static_cast<std::size_t>(r) * stride + first;
      epilogue_pass_for<true, false>(0)(acc + offset, c1 - c0, comp + first, row_scale[r],
                                        col_scale + first, bias + first, nullptr, nullptr,
                                        stride, y + offset);
    }
    const bool relu = activation == Activation::relu;
    for (int r = 0; r < m; r += side_tile_rows) {
      const int rows = std::min(side_tile_rows, m - r);
      (relu ? side_tile_half_for<true>(rows) : side_tile_half_for<false>(rows))(
          c0, c1, side, side_x + static_cast<std::size_t>(r) * static_cast<std::size_t>(side),
          side_half, stride, y + static_cast<std::size_t>(r) * stride);
    }
    if (activation == Activation::gelu) {
      for (int r = 0; r < m; ++r) {
        gelu_in_place(y + static_cast<std::size_t>(r) * stride + first,
                      static_cast<std::size_t>(c1 - c0));
      }
    }
    return;
  }
  for (int r = 0; r < m; ++r) {
    const std::size_t offset = static_cast<std::size_t>(r) * stride + first;
    const float* xs = side_x + static_cast<std::size_t>(r) * static_cast<std::size_t>(side);
    epilogue_row(acc + offset, c1 - c0, comp + first, row_scale[r], col_scale + first,
                 bias + first, activation == Activation::relu, side, xs, side_weight + first,
                 stride, y + offset);
    if (activation == Activation::gelu) {
      gelu_in_place(y + offset, static_cast<std::size_t>(c1 - c0));
    }
  }
}

// Rows of x (FP32 [m, k]) quantized as quantize_activations_per_row_u8 does, with the FP32
// side channels left out of each row's scale (their weights in W_q are zero, so what they
// quantize to does not matter) and copied to side_x, FP32 [m, channels].
void quantize_with_side_channels(const float* x, int m, int k, std::span<const int> channels,
                                 const std::uint32_t* keep, float* side_x, std::uint8_t* x_q,
                                 float* row_scale) {
  const auto width = static_cast<std::size_t>(k);
  for (int r = 0; r < m; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * width;
    float* xs = side_x + static_cast<std::size_t>(r) * channels.size();
    for (std::size_t j = 0; j < channels.size(); ++j) {
      xs[j] = xr[static_cast<std::size_t>(channels[j])];
    }
  }
  quantize_activations_per_row_u8(x, m, k, keep, x_q, row_scale);
}

// The small-M kernels' view of oneDNN's weights memory for a [K, N] s8 matmul, if they read its
// layout: row-major [N][K] ("ba") or the VNNI blocking "BA16a{B}b4a" (B = 16, 32, 64), whose
// groups of 4 inputs follow each other within a column block.
bool small_m_view(const dnnl::memory::desc& md, int k, int n, SmallMWeights& out) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 2 || d.offset0 != 0 || d.extra.flags != 0) {
    return false;
  }
  const auto& b = d.format_desc.blocking;
  SmallMWeights w;
  w.n = n;
  w.k = k;
  if (b.inner_nblks == 0 && b.strides[0] == 1 && b.strides[1] == k) {
    w.layout = SmallMWeights::Layout::rows;
  } else if (b.inner_nblks == 3 && b.inner_idxs[0] == 0 && b.inner_idxs[1] == 1 &&
             b.inner_idxs[2] == 0 && b.inner_blks[2] == 4 &&
             b.strides[0] == b.inner_blks[0] * b.inner_blks[1] * 4) {
    w.layout = SmallMWeights::Layout::blocked;
    w.block = static_cast<int>(b.inner_blks[1]);
    w.block_stride = b.strides[1];
    w.k_groups = (k + 3) / 4;
  } else {
    return false;
  }
  out = w;
  return true;
}

// quantize_weights_per_channel with |q| <= qmax instead of 127 (same rounding).
void quantize_weights_with_qmax(const float* w, int n, int k, int qmax, std::int8_t* q,
                                float* scales) {
  for (int r = 0; r < n; ++r) {
    const auto offset = static_cast<std::size_t>(r) * static_cast<std::size_t>(k);
    float max_abs = 0.0f;
    for (int c = 0; c < k; ++c) max_abs = std::max(max_abs, std::abs(w[offset + c]));
    if (!(max_abs > 0.0f)) {
      std::fill(q + offset, q + offset + k, std::int8_t{0});
      scales[r] = 0.0f;
      continue;
    }
    const float limit = static_cast<float>(qmax);
    const float inv = limit / max_abs;
    for (int c = 0; c < k; ++c) {
      const float v = std::clamp(std::nearbyint(w[offset + c] * inv), -limit, limit);
      q[offset + c] = static_cast<std::int8_t>(v == v ? v : 0.0f);
    }
    scales[r] = max_abs / limit;
  }
}

}  // namespace

Int8Linear::Int8Linear() = default;
Int8Linear::~Int8Linear() = default;
Int8Linear::Int8Linear(Int8Linear&&) noexcept = default;
Int8Linear& Int8Linear::operator=(Int8Linear&&) noexcept = default;

Status Int8Linear::create(std::span<const float> weight, std::span<const float> bias,
                          int out_features, int in_features, Activation activation, int max_batch,
                          Int8Linear& out, bool keep_fp32_weight) {
  Int8LinearOptions options;
  options.max_batch = max_batch;
  options.keep_fp32_weight = keep_fp32_weight;
  return create(weight, bias, out_features, in_features, activation, options, out);
}

int Int8Linear::saturation_free_weight_qmax() noexcept {
  // VNNI (vpdpbusd) and AMX accumulate u8 x s8 straight into INT32; the AVX-512 VNNI ISAs
  // carry bit 0x40 and AVX2-VNNI bit 0x400 in oneDNN's ISA masks.
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const bool vnni = (isa & 0x40u) != 0 || (isa & 0x400u) != 0;
  return vnni ? 127 : 63;
}

Status Int8Linear::create(std::span<const float> weight, std::span<const float> bias,
                          int out_features, int in_features, Activation activation,
                          const Int8LinearOptions& options, Int8Linear& out) {
  const int max_batch = options.max_batch;
  if (out_features < 1 || in_features < 1 || max_batch < 1) {
    return Status::invalid(
        "Int8Linear: out_features, in_features and max_batch must be >= 1 (got " +
        std::to_string(out_features) + ", " + std::to_string(in_features) + ", " +
        std::to_string(max_batch) + ")");
  }
  // INT32 accumulation stays exact while k * 255 * 127 < 2^31.
  if (in_features > max_in_features) {
    return Status::invalid("Int8Linear: in_features " + std::to_string(in_features) + " exceeds " +
                           std::to_string(max_in_features) + " (INT32 accumulator range)");
  }
  if (options.max_gemm_rows < 0 || options.weight_qmax < 0 || options.weight_qmax > 127) {
    return Status::invalid("Int8Linear: max_gemm_rows must be >= 0 and weight_qmax 0..127 (got " +
                           std::to_string(options.max_gemm_rows) + ", " +
                           std::to_string(options.weight_qmax) + ")");
  }
  std::vector<int> side_channels(options.fp32_input_channels.begin(),
                                 options.fp32_input_channels.end());
  std::sort(side_channels.begin(), side_channels.end());
  if (!side_channels.empty() &&
      (side_channels.front() < 0 || side_channels.back() >= in_features ||
       std::adjacent_find(side_channels.begin(), side_channels.end()) != side_channels.end())) {
    return Status::invalid("Int8Linear: fp32_input_channels must be distinct channels in 0.." +
                           std::to_string(in_features - 1));
  }
  const int gemm_rows =
      options.max_gemm_rows == 0 ? max_batch : std::min(options.max_gemm_rows, max_batch);
  const auto n = static_cast<std::size_t>(out_features);
  const auto k = static_cast<std::size_t>(in_features);
  if (weight.size() != n * k) {
    return Status::invalid("Int8Linear: weight has " + std::to_string(weight.size()) +
                           " elements, expected [" + std::to_string(n) + ", " + std::to_string(k) +
                           "]");
  }
  if (!bias.empty() && bias.size() != n) {
    return Status::invalid("Int8Linear: bias has " + std::to_string(bias.size()) +
                           " elements, expected " + std::to_string(n));
  }
  const int qmax = options.weight_qmax == 0 ? saturation_free_weight_qmax() : options.weight_qmax;
  try {
    auto s = std::make_unique<State>();
    s->n = out_features;
    s->k = in_features;
    s->max_batch = max_batch;
    s->gemm_rows = gemm_rows;
    s->weight_qmax = qmax;
    s->activation = activation;
    s->col_scale.resize(n);
    s->bias.assign(n, 0.0f);
    std::copy(bias.begin(), bias.end(), s->bias.begin());
    if (options.keep_fp32_weight) s->fp32_weight.assign(weight.begin(), weight.end());
    const auto rows = static_cast<std::size_t>(gemm_rows);
    s->x_q.resize(rows * k + 4);  // + 4: a blocked small-M kernel reads k rounded up to 4
    s->row_scale.resize(rows);
    s->acc.resize(rows * n);

    // The FP32 side channels leave the INT8 weights: W_q's columns there are zero.
    std::span<const float> int8_weight = weight;
    std::vector<float> masked_weight;
    if (!side_channels.empty()) {
      const std::size_t side = side_channels.size();
      s->side_channels = side_channels;
      s->side_weight.resize(side * n);
      s->side_x.resize(rows * side);
      s->keep.assign(k, 0xffffffffu);
      for (int c : side_channels) s->keep[static_cast<std::size_t>(c)] = 0;
      masked_weight.assign(weight.begin(), weight.end());
      for (std::size_t j = 0; j < side; ++j) {
        const auto c = static_cast<std::size_t>(side_channels[j]);
        for (std::size_t o = 0; o < n; ++o) {
          s->side_weight[j * n + o] = weight[o * k + c];
          masked_weight[o * k + c] = 0.0f;
        }
      }
      int8_weight = masked_weight;
    }
    if (options.fp16_side_weights && !s->side_weight.empty()) {
      const int side = static_cast<int>(side_channels.size());
      const int columns = (out_features + side_panel_columns - 1) / side_panel_columns *
                          side_panel_columns;
      s->side_half.assign(side_panel_at(side, 0, columns), 0);
      for (int j = 0; j < side; ++j) {
        for (int c = 0; c < out_features; ++c) {
          s->side_half[side_panel_at(side, j, c)] =
              _cvtss_sh(s->side_weight[static_cast<std::size_t>(j) * n + static_cast<std::size_t>(c)],
                        _MM_FROUND_TO_NEAREST_INT);
        }
      }
      s->side_weight = {};
    }

    // W quantized: INT8 [n, k] row-major, the layout the user-side weights memory describes.
    std::vector<std::int8_t> w_q(n * k);
    if (qmax == 127) {
      quantize_weights_per_channel(int8_weight.data(), out_features, in_features, w_q.data(),
                                   s->col_scale.data());
    } else {
      quantize_weights_with_qmax(int8_weight.data(), out_features, in_features, qmax, w_q.data(),
                                 s->col_scale.data());
    }
    s->comp.resize(n);
    for (std::size_t c = 0; c < n; ++c) {
      std::int32_t sum = 0;
      for (std::size_t i = 0; i < k; ++i) sum += w_q[c * k + i];
      s->comp[c] = 128 * sum;
    }

    s->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    s->stream = dnnl::stream(s->engine);
    const dnnl::memory::dim K = in_features;
    const dnnl::memory::dim N = out_features;
    const dnnl::memory::desc user_weights_md({K, N}, dt::s8, dims{1, K});
    dnnl::memory user_weights(user_weights_md, s->engine, w_q.data());
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    std::size_t scratchpad_bytes = 0;
    std::vector<int> bucket_rows;
    for (int m = 1;; m = std::min(2 * m, gemm_rows)) {
      bucket_rows.push_back(m);
      if (m == gemm_rows) break;
    }
    // The largest bucket's primitive picks the weights layout; every other bucket is made for
    // that layout, so the layer holds one reordered copy whatever the CPU (on AVX-512/AMX
    // oneDNN may pick a different blocking per M). A bucket whose primitive would then be a
    // reference kernel asks for its own layout (and copy) instead.
    const dnnl::memory::desc any_weights_md({K, N}, dt::s8, dnnl::memory::format_tag::any);
    auto make_pd = [&](int m, const dnnl::memory::desc& weights_md) {
      const dnnl::memory::desc src_md({m, K}, dt::u8, dims{K, 1});
      const dnnl::memory::desc dst_md({m, N}, dt::s32, dims{N, 1});
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, weights_md, dst_md), attr,
                                          s->engine);
    };
    auto largest = make_pd(gemm_rows, any_weights_md);
    // The small-M kernels read the same copy: where they cannot read oneDNN's choice (its AVX2
    // GEMM picks [K][N]), oneDNN is asked for the row-major layout, which that GEMM runs as fast.
    const int small_m_rows = options.small_m_rows < 0 ? Int8LinearOptions::default_small_m_rows
                                                      : options.small_m_rows;
    SmallMIsa isa = small_m_rows > 0 ? detect_small_m_isa() : SmallMIsa::none;
    if (isa == SmallMIsa::avx2 && qmax > 63) isa = SmallMIsa::none;  // would saturate
    SmallMWeights view;
    if (isa != SmallMIsa::none &&
        !(small_m_view(largest.weights_desc(), in_features, out_features, view) &&
          small_m_supports(isa, view))) {
      try {
        auto rows_pd = make_pd(gemm_rows, user_weights_md);
        if (!std::string_view(rows_pd.impl_info_str()).starts_with("ref")) largest = rows_pd;
      } catch (const dnnl::error&) {
        // keep oneDNN's choice; no small-M kernel below
      }
    }
    const dnnl::memory::desc shared_md = largest.weights_desc();
    dnnl::memory shared_weights(shared_md, s->engine);
    dnnl::reorder(user_weights, shared_weights).execute(s->stream, user_weights, shared_weights);
    if (isa != SmallMIsa::none && small_m_view(shared_md, in_features, out_features, view) &&
        small_m_supports(isa, view)) {
      view.data = static_cast<const std::int8_t*>(shared_weights.get_data_handle());
      s->small_m_rows = std::min(small_m_rows, gemm_rows);
      s->small_m_isa = isa;
      s->small_m_weights = view;
    }
    s->weight_copies = 1;
    s->weight_copy_bytes = shared_md.get_size();
    for (const int m : bucket_rows) {
      dnnl::matmul::primitive_desc pd = largest;
      if (m != gemm_rows) {
        bool own = false;
        try {
          pd = make_pd(m, shared_md);
          own = std::string_view(pd.impl_info_str()).starts_with("ref");
        } catch (const dnnl::error&) {
          own = true;  // no kernel takes that layout at this M
        }
        if (own) pd = make_pd(m, any_weights_md);
      }
      State::Bucket bucket;
      bucket.m = m;
      bucket.matmul = dnnl::matmul(pd);
      if (pd.weights_desc() == shared_md) {
        bucket.weights = shared_weights;  // a shared handle, not a copy
      } else {
        bucket.weights = dnnl::memory(pd.weights_desc(), s->engine);
        dnnl::reorder(user_weights, bucket.weights)
            .execute(s->stream, user_weights, bucket.weights);
        ++s->weight_copies;
        s->weight_copy_bytes += pd.weights_desc().get_size();
      }
      const dnnl::memory::dim M = m;
      bucket.src = dnnl::memory(dnnl::memory::desc({M, K}, dt::u8, dims{K, 1}), s->engine,
                                s->x_q.data());
      bucket.dst = dnnl::memory(dnnl::memory::desc({M, N}, dt::s32, dims{N, 1}), s->engine,
                                s->acc.data());
      scratchpad_bytes = std::max(scratchpad_bytes, pd.scratchpad_desc().get_size());
      s->buckets.push_back(std::move(bucket));
    }
    s->stream.wait();
    s->scratchpad = dnnl::memory(
        dnnl::memory::desc({static_cast<dnnl::memory::dim>(scratchpad_bytes)}, dt::u8, dims{1}),
        s->engine);
    out.state_ = std::move(s);
    return {};
  } catch (const dnnl::error& e) {
    return {Errc::internal, std::string("Int8Linear: oneDNN: ") + e.what()};
  } catch (const std::exception& e) {
    return {Errc::internal, std::string("Int8Linear: ") + e.what()};
  }
}

Status Int8Linear::forward(const float* x, int m, float* y) {
  State* s = state_.get();
  if (s == nullptr) return {Errc::internal, "Int8Linear::forward on a layer never created"};
  if (m < 1 || m > s->max_batch) {
    return Status::invalid("Int8Linear: batch of " + std::to_string(m) + " rows, expected 1.." +
                           std::to_string(s->max_batch));
  }
  const std::uint16_t* side_half = s->side_half.empty() ? nullptr : s->side_half.data();
  for (int first = 0; first < m; first += s->gemm_rows) {
    const int rows = std::min(s->gemm_rows, m - first);
    const float* x_chunk = x + static_cast<std::size_t>(first) * static_cast<std::size_t>(s->k);
    float* y_chunk = y + static_cast<std::size_t>(first) * static_cast<std::size_t>(s->n);
    // Quantization and the epilogue are row by row: spread over the compute team, as the
    // GEMM is by oneDNN.
    parallel_for(rows, row_grain, 0, [&](int, std::int64_t begin, std::int64_t end) {
      const auto first_row = static_cast<std::size_t>(begin);
      const auto count = static_cast<int>(end - begin);
      const float* xr = x_chunk + first_row * static_cast<std::size_t>(s->k);
      std::uint8_t* qr = s->x_q.data() + first_row * static_cast<std::size_t>(s->k);
      if (s->side_channels.empty()) {
        quantize_activations_per_row_u8(xr, count, s->k, qr, s->row_scale.data() + begin);
      } else {
        quantize_with_side_channels(xr, count, s->k, s->side_channels, s->keep.data(),
                                    s->side_x.data() + first_row * s->side_channels.size(), qr,
                                    s->row_scale.data() + begin);
      }
    });
    if (rows <= s->small_m_rows) {
      // The small-M kernel: the team takes the output columns in chunks, each multiplied for
      // every row and finished by the epilogue while its accumulators are in cache. Every
      // weight byte is read from memory once per chunk of rows.
      const SmallMWeights& w = s->small_m_weights;
      // Chunks start on a side-weight panel (grains are powers of two).
      const int grain = std::max(small_m_column_grain(w), side_panel_columns);
      const int tiles = (s->n + grain - 1) / grain;
      // About four chunks per thread: even shares when a thread is slowed, few hand-overs.
      const int chunk = std::max(1, tiles / (4 * std::max(compute_team_size(), 1)));
      parallel_for(tiles, chunk, 0, [&](int, std::int64_t begin, std::int64_t end) {
        const int first = static_cast<int>(begin) * grain;
        const int last = std::min(s->n, static_cast<int>(end) * grain);
        // 64 columns at a time: their accumulators and FP32 side-channel weights (8 KiB for
        // 32 channels) stay in L1 while every row's epilogue reads them.
        for (int c0 = first; c0 < last; c0 += small_m_epilogue_columns) {
          const int c1 = std::min(last, c0 + small_m_epilogue_columns);
          small_m_gemm(s->small_m_isa, w, s->x_q.data(), rows, s->k, c0, c1, s->acc.data(), s->n);
          epilogue(s->acc.data(), rows, s->n, c0, c1, s->comp.data(), s->row_scale.data(),
                   s->col_scale.data(), s->bias.data(), s->activation,
                   static_cast<int>(s->side_channels.size()), s->side_x.data(),
                   s->side_weight.data(), side_half, y_chunk);
        }
      });
      continue;
    }
    const State::Bucket& bucket = *std::find_if(s->buckets.begin(), s->buckets.end(),
                                                [rows](const auto& b) { return b.m >= rows; });
    // Rows rows..bucket.m-1 hold whatever an earlier, larger chunk left: their results are
    // ignored.

    // The C API takes the arguments as an array: the C++ one wants an unordered_map, which
    // would allocate on every call.
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, bucket.src.get()},
        {DNNL_ARG_WEIGHTS, bucket.weights.get()},
        {DNNL_ARG_DST, bucket.dst.get()},
        {DNNL_ARG_SCRATCHPAD, s->scratchpad.get()},
    };
    if (const auto st = dnnl_primitive_execute(bucket.matmul.get(), s->stream.get(), 4, args);
        st != dnnl_success) {
      return {Errc::internal, "Int8Linear: oneDNN matmul failed (dnnl_status " +
                                  std::to_string(static_cast<int>(st)) + ")"};
    }
    if (const auto st = dnnl_stream_wait(s->stream.get()); st != dnnl_success) {
      return {Errc::internal, "Int8Linear: oneDNN stream wait failed (dnnl_status " +
                                  std::to_string(static_cast<int>(st)) + ")"};
    }
    parallel_for(rows, row_grain, 0, [&](int, std::int64_t begin, std::int64_t end) {
      const auto first_row = static_cast<std::size_t>(begin);
      const auto side = s->side_channels.size();
      epilogue(s->acc.data() + first_row * static_cast<std::size_t>(s->n),
               static_cast<int>(end - begin), s->n, 0, s->n, s->comp.data(),
               s->row_scale.data() + begin,
               s->col_scale.data(), s->bias.data(), s->activation, static_cast<int>(side),
               s->side_x.data() + first_row * side, s->side_weight.data(), side_half,
               y_chunk + first_row * static_cast<std::size_t>(s->n));
    });
  }
  return {};
}

int Int8Linear::in_features() const noexcept {
  return state_ ? state_->k : 0;
}
int Int8Linear::out_features() const noexcept {
  return state_ ? state_->n : 0;
}
int Int8Linear::max_batch() const noexcept {
  return state_ ? state_->max_batch : 0;
}
int Int8Linear::max_gemm_rows() const noexcept {
  return state_ ? state_->gemm_rows : 0;
}
int Int8Linear::weight_qmax() const noexcept {
  return state_ ? state_->weight_qmax : 0;
}
std::span<const int> Int8Linear::fp32_input_channels() const noexcept {
  if (!state_) return {};
  return state_->side_channels;
}
Activation Int8Linear::activation() const noexcept {
  return state_ ? state_->activation : Activation::none;
}
std::span<const float> Int8Linear::weight_scales() const noexcept {
  if (!state_) return {};
  return state_->col_scale;
}
std::span<const float> Int8Linear::bias() const noexcept {
  if (!state_) return {};
  return state_->bias;
}
const char* Int8Linear::small_m_kernel() const noexcept {
  if (!state_ || state_->small_m_isa == SmallMIsa::none) return "none";
  if (state_->small_m_weights.layout == SmallMWeights::Layout::blocked) return "avx512_vnni/blocked";
  return state_->small_m_isa == SmallMIsa::avx2 ? "avx2/rows" : "avx512_vnni/rows";
}
int Int8Linear::small_m_rows() const noexcept {
  return state_ ? state_->small_m_rows : 0;
}
int Int8Linear::weight_copies() const noexcept {
  return state_ ? state_->weight_copies : 0;
}
std::size_t Int8Linear::weight_bytes() const noexcept {
  if (!state_) return 0;
  const State& s = *state_;
  return s.weight_copy_bytes +
         sizeof(float) * (s.col_scale.size() + s.bias.size() + s.side_weight.size()) +
         sizeof(std::uint16_t) * s.side_half.size() +
         sizeof(std::int32_t) * s.comp.size();
}
std::span<const float> Int8Linear::fp32_weight() const noexcept {
  if (!state_) return {};
  return state_->fp32_weight;
}

}  // namespace coinfer
