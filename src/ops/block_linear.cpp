#include "coinfer/ops/block_linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define COINFER_BLOCK_AVX2 1
#endif

#include "coinfer/core/half.hpp"
#include "coinfer/ops/compute_threads.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace coinfer {
namespace {

constexpr int kBlock = BlockLinear::block;
constexpr int kTileRows = 4;

[[maybe_unused]] float load_half(const std::byte* p) noexcept {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
#if defined(COINFER_BLOCK_AVX2)
  return _cvtsh_ss(bits);
#else
  return half_to_float(bits);
#endif
}

// ---- Q8_0: one output channel at a time -----------------------------------------------------
// Q8_0 weights are repacked per output channel in groups of up to 8 blocks: the group's 8
// scales d (FP16, zero past its last block), then its blocks' 32 signed values as the file
// stores them. The kernel reduces a group's 8 integer dot products to one vector of 8 sums
// and applies the 8 scales with one multiply-add.
constexpr int kGroup = 8;
constexpr std::size_t kQ8HeadBytes = 16;

std::size_t q8_column_bytes(int blocks) noexcept {
  const std::size_t groups = static_cast<std::size_t>((blocks + kGroup - 1) / kGroup);
  return groups * kQ8HeadBytes + static_cast<std::size_t>(blocks) * 32;
}

// Activations of one forward: per row, int8 q [k], and per 32-input block its scale d and
// d * sum(q) (the Q4_1 min term's factor), padded with zeros to whole groups of 8 blocks.
struct Rows {
  const std::int8_t* q;
  const float* d;
  const float* sum;
  int k;
  int blocks;
  int padded;  // blocks rounded up to a multiple of 8: the stride of d and sum
};

// Quantizes x[0..k) into q, d and sum per block: d = max|x| / 127, q = round(x / d).
void quantize_row(const float* x, int k, std::int8_t* q, float* d, float* sum) noexcept {
  for (int b = 0; b < k / kBlock; ++b, x += kBlock, q += kBlock) {
#if defined(COINFER_BLOCK_AVX2)
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(x + 8 * i);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[i]));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float max = _mm_cvtss_f32(m4);
    const float scale = max / 127.0f;
    const __m256 inv = _mm256_set1_ps(max > 0 ? 127.0f / max : 0.0f);
    __m256i i32[4];
    for (int i = 0; i < 4; ++i) i32[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], inv));  // nearest even
    const __m256i total = _mm256_add_epi32(_mm256_add_epi32(i32[0], i32[1]), _mm256_add_epi32(i32[2], i32[3]));
    __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4e));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0xb1));
    // Packing works per 128-bit lane: 0-3 8-11 4-7 12-15 | ... ; the permute restores order.
    const __m256i i16a = _mm256_packs_epi32(i32[0], i32[1]);
    const __m256i i16b = _mm256_packs_epi32(i32[2], i32[3]);
    const __m256i i8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(i16a, i16b),
                                                   _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), i8);
    d[b] = scale;
    sum[b] = scale * static_cast<float>(_mm_cvtsi128_si32(t4));
#else
    float max = 0;
    for (int i = 0; i < kBlock; ++i) max = std::max(max, std::fabs(x[i]));
    const float inv = max > 0 ? 127.0f / max : 0.0f;
    int total = 0;
    for (int i = 0; i < kBlock; ++i) {
      q[i] = static_cast<std::int8_t>(std::nearbyint(x[i] * inv));
      total += q[i];
    }
    d[b] = max / 127.0f;
    sum[b] = d[b] * static_cast<float>(total);
#endif
  }
}

#if defined(COINFER_BLOCK_AVX2)
float hsum(__m256 v) noexcept {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__m256 load_halves(const std::byte* p) noexcept {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// One Q8_0 output channel for rows r0 .. r0 + R - 1: y[r][col] = sum over blocks of
// d_w * d_x * dot(q_w, q_x) + bias.
template <int R>
void q8_tile(const std::byte* w, const Rows& x, int r0, float bias, float* y, int y_stride) noexcept {
  const __m256i ones = _mm256_set1_epi16(1);
  // A group's |weights| (vpmaddubsw takes unsigned x signed) and the weights whose signs go onto
  // the activations, set up once for all R rows; zero past the group's last block.
  alignas(32) std::int8_t magnitudes[kGroup][kBlock];
  alignas(32) std::int8_t signs[kGroup][kBlock];
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int b0 = 0; b0 < x.blocks; b0 += kGroup) {
    const int nb = std::min(kGroup, x.blocks - b0);
    const __m256 dw = load_halves(w);
    const std::byte* q = w + kQ8HeadBytes;
    w = q + static_cast<std::size_t>(nb) * 32;
    _mm_prefetch(reinterpret_cast<const char*>(w) + 512, _MM_HINT_T0);
    for (int b = 0; b < kGroup; ++b) {
      const __m256i ws = b < nb ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + b * 32))
                                : _mm256_setzero_si256();
      _mm256_store_si256(reinterpret_cast<__m256i*>(signs[b]), ws);
      _mm256_store_si256(reinterpret_cast<__m256i*>(magnitudes[b]), _mm256_sign_epi8(ws, ws));
    }
    const std::int8_t* a = x.q + b0 * kBlock;
    for (int r = 0; r < R; ++r) {
      const std::int8_t* ar = a + static_cast<std::size_t>(r0 + r) * x.k;
      // The 8 lanes of block b's dot product; pairs of products stay below 2^15 (2 x 127 x
      // 127). A block past the group's end has zero weights (the activations read for it are
      // block 0's, multiplied by zero).
      const auto dot = [&](int b) {
        __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + (b < nb ? b : 0) * kBlock));
        av = _mm256_sign_epi8(av, _mm256_load_si256(reinterpret_cast<const __m256i*>(signs[b])));
        return _mm256_madd_epi16(
            _mm256_maddubs_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(magnitudes[b])), av), ones);
      };
      // hadd twice: per 128-bit lane, blocks 0-3's (then 4-7's) sums of their lanes 0-3 (low
      // half) and 4-7 (high half); adding the halves leaves one lane per block.
      const __m256i s03 = _mm256_hadd_epi32(_mm256_hadd_epi32(dot(0), dot(1)), _mm256_hadd_epi32(dot(2), dot(3)));
      const __m256i s47 = _mm256_hadd_epi32(_mm256_hadd_epi32(dot(4), dot(5)), _mm256_hadd_epi32(dot(6), dot(7)));
      const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(s03, s47, 0x20),
                                            _mm256_permute2x128_si256(s03, s47, 0x31));
      const std::size_t at = static_cast<std::size_t>(r0 + r) * x.padded + b0;
      const __m256 scale = _mm256_mul_ps(dw, _mm256_loadu_ps(x.d + at));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) y[static_cast<std::size_t>(r0 + r) * y_stride] = hsum(acc[r]) + bias;
}
#else
template <int R>
void q8_tile(const std::byte* w, const Rows& x, int r0, float bias, float* y, int y_stride) noexcept {
  float acc[R] = {};
  for (int b0 = 0; b0 < x.blocks; b0 += kGroup) {
    const int nb = std::min(kGroup, x.blocks - b0);
    const std::byte* q = w + kQ8HeadBytes;
    for (int b = 0; b < nb; ++b) {
      const float dw = load_half(w + 2 * b);
      for (int r = 0; r < R; ++r) {
        const std::size_t row = static_cast<std::size_t>(r0 + r);
        const std::int8_t* a = x.q + row * x.k + (b0 + b) * kBlock;
        std::int32_t sum = 0;
        for (int j = 0; j < kBlock; ++j) sum += static_cast<std::int8_t>(q[b * 32 + j]) * a[j];
        acc[r] += dw * x.d[row * x.padded + b0 + b] * static_cast<float>(sum);
      }
    }
    w = q + static_cast<std::size_t>(nb) * 32;
  }
  for (int r = 0; r < R; ++r) y[static_cast<std::size_t>(r0 + r) * y_stride] = acc[r] + bias;
}
#endif

// Output channels [col_begin, col_end) of Q8_0 weights for every row.
void q8_columns(const std::byte* weights, std::size_t col_bytes, const Rows& x, int m, const float* bias,
                int col_begin, int col_end, float* y, int n) noexcept {
  for (int c = col_begin; c < col_end; ++c) {
    const std::byte* w = weights + static_cast<std::size_t>(c) * col_bytes;
    const float b = bias ? bias[c] : 0.0f;
    int r0 = 0;
    for (; r0 + kTileRows <= m; r0 += kTileRows) q8_tile<kTileRows>(w, x, r0, b, y + c, n);
    switch (m - r0) {
      case 3: q8_tile<3>(w, x, r0, b, y + c, n); break;
      case 2: q8_tile<2>(w, x, r0, b, y + c, n); break;
      case 1: q8_tile<1>(w, x, r0, b, y + c, n); break;
      default: break;
    }
  }
}

// Repacks one Q8_0 output channel's blocks (ggml's layout: FP16 d, 32 values) into groups.
void repack_q8_column(const std::byte* blocks, int count, std::byte* out) noexcept {
  for (int b0 = 0; b0 < count; b0 += kGroup) {
    const int nb = std::min(kGroup, count - b0);
    std::memset(out, 0, kQ8HeadBytes);
    for (int b = 0; b < nb; ++b) {
      const std::byte* block = blocks + static_cast<std::size_t>(b0 + b) * 34;
      std::memcpy(out + 2 * b, block, 2);
      std::memcpy(out + kQ8HeadBytes + b * 32, block + 2, 32);
    }
    out += kQ8HeadBytes + static_cast<std::size_t>(nb) * 32;
  }
}

// ---- Q4_1: 8 output channels interleaved ----------------------------------------------------
// Q4_1 weights are repacked in groups of 8 output channels (the last group padded with zero
// channels), block by block: the 8 channels' scales d (FP16), their mins m (FP16), then 128
// bytes of 4-bit values in 4 chunks of 32. Byte 4 * channel + i of chunk c holds input 8c + i
// of the block in its low nibble and input 8c + 4 + i in its high nibble. So one 32-byte vector
// is 4 inputs of each of the 8 channels, a channel per 32-bit lane, which vpmaddubsw multiplies
// with a row's 4 activations broadcast: 8 output channels per instruction with no horizontal
// sums. A block's 8 products per lane add up in 16 bits (8 x 2 x 15 x 127 < 2^15) before one
// vpmaddwd, and the 8 channels' scales apply as vectors. The same 0.625 bytes per weight as the
// file; each byte is read once per call, for every row of a tile.
constexpr int kLanes = 8;
constexpr std::size_t kQ4Bytes = 16 + 16 + 128;  // one block of 8 channels

void repack_q4_group(const std::byte* blocks, std::size_t row_bytes, int channels, int count,
                     std::byte* out) noexcept {
  const auto nibble = [](const std::byte* block, int j) {
    const auto byte = static_cast<std::uint8_t>(block[4 + (j % 16)]);
    return j < 16 ? (byte & 0x0f) : (byte >> 4);
  };
  for (int b = 0; b < count; ++b, out += kQ4Bytes) {
    std::memset(out, 0, kQ4Bytes);
    for (int c = 0; c < channels; ++c) {
      const std::byte* block = blocks + static_cast<std::size_t>(c) * row_bytes + static_cast<std::size_t>(b) * 20;
      std::memcpy(out + 2 * c, block, 2);           // d
      std::memcpy(out + 16 + 2 * c, block + 2, 2);  // m
      for (int chunk = 0; chunk < 4; ++chunk) {
        for (int i = 0; i < 4; ++i) {
          const int packed = nibble(block, 8 * chunk + i) | nibble(block, 8 * chunk + 4 + i) << 4;
          out[32 + 32 * chunk + 4 * c + i] = static_cast<std::byte>(packed);
        }
      }
    }
  }
}

#if defined(COINFER_BLOCK_AVX2)
std::int32_t load_i32(const std::int8_t* p) noexcept {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Rows r0 .. r0 + R - 1 of one group of 8 channels: y[r][0..valid) = x[r] . W[c] + bias[c].
template <int R>
void q4_tile(const std::byte* w, const Rows& x, int r0, const float* bias, float* y, int y_stride,
             int valid) noexcept {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i low = _mm256_set1_epi8(0x0f);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int b = 0; b < x.blocks; ++b, w += kQ4Bytes) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + 4 * kQ4Bytes, _MM_HINT_T0);
    __m256i sum[R];
    for (int r = 0; r < R; ++r) sum[r] = _mm256_setzero_si256();
    for (int chunk = 0; chunk < 4; ++chunk) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 + 32 * chunk));
      const __m256i w0 = _mm256_and_si256(v, low);
      const __m256i w1 = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
      for (int r = 0; r < R; ++r) {
        const std::int8_t* a = x.q + static_cast<std::size_t>(r0 + r) * x.k + b * kBlock + 8 * chunk;
        const __m256i p0 = _mm256_maddubs_epi16(w0, _mm256_set1_epi32(load_i32(a)));
        const __m256i p1 = _mm256_maddubs_epi16(w1, _mm256_set1_epi32(load_i32(a + 4)));
        sum[r] = _mm256_add_epi16(sum[r], _mm256_add_epi16(p0, p1));
      }
    }
    const __m256 dw = load_halves(w);
    const __m256 mw = load_halves(w + 16);
    for (int r = 0; r < R; ++r) {
      const std::size_t at = static_cast<std::size_t>(r0 + r) * x.padded + b;
      const __m256 dots = _mm256_cvtepi32_ps(_mm256_madd_epi16(sum[r], ones));
      acc[r] = _mm256_fmadd_ps(dots, _mm256_mul_ps(dw, _mm256_broadcast_ss(x.d + at)), acc[r]);
      acc[r] = _mm256_fmadd_ps(mw, _mm256_broadcast_ss(x.sum + at), acc[r]);
    }
  }
  const __m256 bv = _mm256_loadu_ps(bias);
  for (int r = 0; r < R; ++r) {
    float* out = y + static_cast<std::size_t>(r0 + r) * y_stride;
    const __m256 v = _mm256_add_ps(acc[r], bv);
    if (valid == kLanes) {
      _mm256_storeu_ps(out, v);
    } else {
      alignas(32) float lanes[kLanes];
      _mm256_store_ps(lanes, v);
      std::memcpy(out, lanes, static_cast<std::size_t>(valid) * sizeof(float));
    }
  }
}
#else
template <int R>
void q4_tile(const std::byte* w, const Rows& x, int r0, const float* bias, float* y, int y_stride,
             int valid) noexcept {
  float acc[R][kLanes] = {};
  for (int b = 0; b < x.blocks; ++b, w += kQ4Bytes) {
    for (int r = 0; r < R; ++r) {
      const std::size_t row = static_cast<std::size_t>(r0 + r);
      const std::int8_t* a = x.q + row * x.k + b * kBlock;
      for (int c = 0; c < kLanes; ++c) {
        std::int32_t dot = 0;
        for (int chunk = 0; chunk < 4; ++chunk) {
          for (int i = 0; i < 4; ++i) {
            const auto byte = static_cast<std::uint8_t>(w[32 + 32 * chunk + 4 * c + i]);
            dot += (byte & 0x0f) * a[8 * chunk + i] + (byte >> 4) * a[8 * chunk + 4 + i];
          }
        }
        const std::size_t at = row * x.padded + b;
        acc[r][c] += load_half(w + 2 * c) * x.d[at] * static_cast<float>(dot) +
                     load_half(w + 16 + 2 * c) * x.sum[at];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < valid; ++c) y[static_cast<std::size_t>(r0 + r) * y_stride + c] = acc[r][c] + bias[c];
  }
}
#endif

// Groups [group_begin, group_end) of 8 channels for every row.
void q4_groups(const std::byte* weights, std::size_t group_bytes, const Rows& x, int m, const float* bias,
               int group_begin, int group_end, float* y, int n) noexcept {
  for (int g = group_begin; g < group_end; ++g) {
    const std::byte* w = weights + static_cast<std::size_t>(g) * group_bytes;
    const int c0 = g * kLanes;
    const int valid = std::min(kLanes, n - c0);
    int r0 = 0;
    for (; r0 + kTileRows <= m; r0 += kTileRows) q4_tile<kTileRows>(w, x, r0, bias + c0, y + c0, n, valid);
    switch (m - r0) {
      case 3: q4_tile<3>(w, x, r0, bias + c0, y + c0, n, valid); break;
      case 2: q4_tile<2>(w, x, r0, bias + c0, y + c0, n, valid); break;
      case 1: q4_tile<1>(w, x, r0, bias + c0, y + c0, n, valid); break;
      default: break;
    }
  }
}

}  // namespace

const char* to_string(WeightBlocks format) noexcept {
  return format == WeightBlocks::q4_1 ? "q4_1" : "q8_0";
}

std::size_t weight_block_bytes(WeightBlocks format) noexcept {
  return format == WeightBlocks::q4_1 ? 20 : 34;
}

struct BlockLinear::State {
  WeightBlocks format = WeightBlocks::q4_1;
  int n = 0, k = 0, max_batch = 0;
  // Q8_0: column_bytes per output channel (repack_q8_column); Q4_1: column_bytes per group of 8
  // output channels (repack_q4_group).
  std::size_t column_bytes = 0;
  std::vector<std::byte> weights;
  std::vector<float> bias;  // Q8_0: empty for none; Q4_1: padded to whole groups of 8, zeros
  int groups = 0;           // Q4_1: groups of 8 output channels
  std::vector<std::int8_t> xq;
  std::vector<float> xd, xsum;
};

BlockLinear::BlockLinear() = default;
BlockLinear::~BlockLinear() = default;
BlockLinear::BlockLinear(BlockLinear&&) noexcept = default;
BlockLinear& BlockLinear::operator=(BlockLinear&&) noexcept = default;

Status BlockLinear::create(WeightBlocks format, std::span<const std::byte> blocks,
                           std::span<const float> bias, int out_features, int in_features,
                           int max_batch, BlockLinear& out) {
  if (out_features < 1 || in_features < kBlock || in_features % kBlock != 0 || in_features > 65536 ||
      max_batch < 1) {
    return Status::invalid("block linear: " + std::to_string(out_features) + " outputs over " +
                           std::to_string(in_features) + " inputs, up to " + std::to_string(max_batch) +
                           " rows (inputs must be a positive multiple of 32, at most 65536)");
  }
  const std::size_t row_bytes = static_cast<std::size_t>(in_features / kBlock) * weight_block_bytes(format);
  if (blocks.size() != row_bytes * static_cast<std::size_t>(out_features)) {
    return Status::invalid("block linear: " + std::to_string(blocks.size()) + " bytes of " +
                           to_string(format) + " blocks, expected " +
                           std::to_string(row_bytes * static_cast<std::size_t>(out_features)));
  }
  if (!bias.empty() && static_cast<int>(bias.size()) != out_features) {
    return Status::invalid("block linear: " + std::to_string(bias.size()) + " biases for " +
                           std::to_string(out_features) + " outputs");
  }
  auto s = std::make_unique<State>();
  s->format = format;
  s->n = out_features;
  s->k = in_features;
  s->max_batch = max_batch;
  const int count = in_features / kBlock;
  if (format == WeightBlocks::q4_1) {
    s->groups = (out_features + kLanes - 1) / kLanes;
    s->column_bytes = static_cast<std::size_t>(count) * kQ4Bytes;
    s->weights.resize(s->column_bytes * static_cast<std::size_t>(s->groups));
    for (int g = 0; g < s->groups; ++g) {
      repack_q4_group(blocks.data() + static_cast<std::size_t>(g) * kLanes * row_bytes, row_bytes,
                      std::min(kLanes, out_features - g * kLanes), count,
                      s->weights.data() + static_cast<std::size_t>(g) * s->column_bytes);
    }
    s->bias.assign(static_cast<std::size_t>(s->groups) * kLanes, 0.0f);
    std::copy(bias.begin(), bias.end(), s->bias.begin());
  } else {
    s->column_bytes = q8_column_bytes(count);
    s->weights.resize(s->column_bytes * static_cast<std::size_t>(out_features));
    for (int c = 0; c < out_features; ++c) {
      repack_q8_column(blocks.data() + static_cast<std::size_t>(c) * row_bytes, count,
                       s->weights.data() + static_cast<std::size_t>(c) * s->column_bytes);
    }
    s->bias.assign(bias.begin(), bias.end());
  }
  const auto rows = static_cast<std::size_t>(max_batch);
  const int padded = (count + kGroup - 1) / kGroup * kGroup;
  s->xq.resize(rows * static_cast<std::size_t>(in_features));
  s->xd.assign(rows * static_cast<std::size_t>(padded), 0.0f);  // the padding stays zero
  s->xsum.assign(s->xd.size(), 0.0f);
  out.state_ = std::move(s);
  return {};
}

Status BlockLinear::forward(const float* x, int m, float* y) {
  State& s = *state_;
  if (m < 1 || m > s.max_batch) {
    return Status::invalid("block linear: " + std::to_string(m) + " rows (1 to " +
                           std::to_string(s.max_batch) + " fit)");
  }
  const int blocks = s.k / kBlock;
  const int padded = (blocks + kGroup - 1) / kGroup * kGroup;
  parallel_for(m, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
    for (auto r = b; r < e; ++r) {
      quantize_row(x + r * s.k, s.k, s.xq.data() + r * s.k, s.xd.data() + r * padded,
                   s.xsum.data() + r * padded);
    }
  });
  const Rows rows{s.xq.data(), s.xd.data(), s.xsum.data(), s.k, blocks, padded};
  const float* bias = s.bias.empty() ? nullptr : s.bias.data();
  // Chunks of columns small enough to balance two or more threads, large enough that each
  // streams a contiguous run of weights.
  const int team = std::max(1, compute_team_size());
  if (s.format == WeightBlocks::q4_1) {
    const int grain = std::max(1, std::min(8, s.groups / (4 * team)));
    parallel_for(s.groups, grain, 0, [&](int, std::int64_t b, std::int64_t e) {
      q4_groups(s.weights.data(), s.column_bytes, rows, m, bias, static_cast<int>(b), static_cast<int>(e), y, s.n);
    });
    return {};
  }
  const int grain = std::max(8, std::min(64, s.n / (4 * team)));
  parallel_for(s.n, grain, 0, [&](int, std::int64_t b, std::int64_t e) {
    q8_columns(s.weights.data(), s.column_bytes, rows, m, bias, static_cast<int>(b), static_cast<int>(e), y, s.n);
  });
  return {};
}

WeightBlocks BlockLinear::format() const noexcept { return state_->format; }
int BlockLinear::in_features() const noexcept { return state_->k; }
int BlockLinear::out_features() const noexcept { return state_->n; }
int BlockLinear::max_batch() const noexcept { return state_->max_batch; }
const char* BlockLinear::kernel() const noexcept {
#if defined(COINFER_BLOCK_AVX2)
  return "avx2";
#else
  return "portable";
#endif
}
std::size_t BlockLinear::weight_bytes() const noexcept {
  return state_->weights.size() + state_->bias.size() * sizeof(float);  // repacked: the file's
                                                                         // bytes, plus the scales'
                                                                         // padding of a last group
}

}  // namespace coinfer
