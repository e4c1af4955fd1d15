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
#include "coinfer/ops/small_m_gemm.hpp"

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

// Activations of one forward: per row, int8 q [k], and per 32-input block its scale d and
// d * sum(q) (the Q4_1 min term's factor).
struct Rows {
  const std::int8_t* q;
  const float* d;
  const float* sum;
  int k;
  int blocks;
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

// ---- weights: 8 output channels interleaved -------------------------------------------------
// Weights are repacked at create() in groups of 8 output channels (the last group padded with
// zero channels), block by block: the 8 channels' scales d (FP16), for Q4_1 their mins m
// (FP16), then the values in chunks of 32 bytes, each holding 4 inputs of each of the 8
// channels (bytes 4c .. 4c + 3 for channel c). A chunk is then one vector with a channel per
// 32-bit lane, which vpmaddubsw multiplies with a row's 4 activations broadcast: 8 output
// channels per instruction and no horizontal sums; a block's scales apply as one vector.
// - Q8_0: 8 chunks per block (inputs 4s .. 4s + 3 in chunk s). Signed weights: vpmaddubsw
//   takes |w| and the activations with w's sign.
// - Q4_1: 4 chunks per block; chunk c holds inputs 8c + i in its low nibbles and 8c + 4 + i in
//   its high nibbles. A block's products per lane add up in 16 bits (16 x 15 x 127 < 2^15)
//   before one vpmaddwd.
// The same bytes per weight as the file; each is read once per call, for every row of a tile.
constexpr int kLanes = 8;

template <WeightBlocks F>
constexpr std::size_t group_block_bytes() noexcept {
  return F == WeightBlocks::q4_1 ? 16 + 16 + 128 : 16 + 256;
}
std::size_t group_block_bytes(WeightBlocks f) noexcept {
  return f == WeightBlocks::q4_1 ? group_block_bytes<WeightBlocks::q4_1>() : group_block_bytes<WeightBlocks::q8_0>();
}
template <WeightBlocks F>
constexpr std::size_t values_offset() noexcept { return F == WeightBlocks::q4_1 ? 32 : 16; }

// Repacks up to 8 output channels (rows of `count` blocks in ggml's layout, row_bytes apart).
void repack_group(WeightBlocks f, const std::byte* blocks, std::size_t row_bytes, int channels,
                  int count, std::byte* out) noexcept {
  const std::size_t bytes = group_block_bytes(f);
  for (int b = 0; b < count; ++b, out += bytes) {
    std::memset(out, 0, bytes);
    for (int c = 0; c < channels; ++c) {
      const std::byte* block = blocks + static_cast<std::size_t>(c) * row_bytes + b * weight_block_bytes(f);
      std::memcpy(out + 2 * c, block, 2);  // d
      if (f == WeightBlocks::q8_0) {
        for (int step = 0; step < 8; ++step) std::memcpy(out + 16 + 32 * step + 4 * c, block + 2 + 4 * step, 4);
        continue;
      }
      std::memcpy(out + 16 + 2 * c, block + 2, 2);  // m
      const auto nibble = [&](int j) {
        const auto byte = static_cast<std::uint8_t>(block[4 + (j % 16)]);
        return j < 16 ? (byte & 0x0f) : (byte >> 4);
      };
      for (int chunk = 0; chunk < 4; ++chunk) {
        for (int i = 0; i < 4; ++i) {
          const int packed = nibble(8 * chunk + i) | nibble(8 * chunk + 4 + i) << 4;
          out[32 + 32 * chunk + 4 * c + i] = static_cast<std::byte>(packed);
        }
      }
    }
  }
}

#if defined(COINFER_BLOCK_AVX2)
__m256 load_halves(const std::byte* p) noexcept {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__m256i broadcast4(const std::int8_t* p) noexcept {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Keeps the compiler from regrouping a tile's 16-bit sums (Q4_1): GCC 12 otherwise turns each
// row's running sum into a tree over all of a block's products, computed first and spilled to
// the stack (a fifth to a quarter of the time at 4 rows and more). Q8_0's 32-bit sums are
// faster left to it.
inline void keep_in_register(__m256i& v) noexcept { __asm__("" : "+x"(v)); }

// A block's integer dot products (one 32-bit lane per channel) into the tile's sums: times the
// weights' d and the activations' scale, plus for Q4_1 the weights' m times the activations'
// scaled sum.
template <WeightBlocks F, int R>
inline void scale_block(const std::byte* w, const Rows& x, int r0, int b, const __m256i* dots,
                        __m256* acc) noexcept {
  const __m256 dw = load_halves(w);
  for (int r = 0; r < R; ++r) {
    const std::size_t at = static_cast<std::size_t>(r0 + r) * x.blocks + b;
    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[r]), _mm256_mul_ps(dw, _mm256_broadcast_ss(x.d + at)), acc[r]);
    if constexpr (F == WeightBlocks::q4_1)
      acc[r] = _mm256_fmadd_ps(load_halves(w + 16), _mm256_broadcast_ss(x.sum + at), acc[r]);
  }
}

// y[r0 + r][0..valid) = acc[r] + bias.
template <int R>
inline void store_tile(const __m256* acc, int r0, const float* bias, float* y, int y_stride,
                       int valid) noexcept {
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

// Rows r0 .. r0 + R - 1 of one group of 8 channels: y[r][0..valid) = x[r] . W[c] + bias[c].
template <WeightBlocks F, int R>
void tile(const std::byte* w, const Rows& x, int r0, const float* bias, float* y, int y_stride,
          int valid) noexcept {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i low = _mm256_set1_epi8(0x0f);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int b = 0; b < x.blocks; ++b, w += group_block_bytes<F>()) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + 4 * group_block_bytes<F>(), _MM_HINT_T0);
    const std::byte* values = w + values_offset<F>();
    __m256i dots[R];
    if constexpr (F == WeightBlocks::q4_1) {
      for (int r = 0; r < R; ++r) dots[r] = _mm256_setzero_si256();  // 16-bit sums
      for (int chunk = 0; chunk < 4; ++chunk) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + 32 * chunk));
        const __m256i w0 = _mm256_and_si256(v, low);
        const __m256i w1 = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        for (int r = 0; r < R; ++r) {
          const std::int8_t* a = x.q + static_cast<std::size_t>(r0 + r) * x.k + b * kBlock + 8 * chunk;
          dots[r] = _mm256_add_epi16(dots[r], _mm256_maddubs_epi16(w0, broadcast4(a)));
          dots[r] = _mm256_add_epi16(dots[r], _mm256_maddubs_epi16(w1, broadcast4(a + 4)));
          keep_in_register(dots[r]);
        }
      }
      for (int r = 0; r < R; ++r) dots[r] = _mm256_madd_epi16(dots[r], ones);
    } else {
      for (int r = 0; r < R; ++r) dots[r] = _mm256_setzero_si256();  // 32-bit sums
      for (int step = 0; step < 8; ++step) {
        const __m256i ws = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + 32 * step));
        const __m256i magnitude = _mm256_sign_epi8(ws, ws);
        for (int r = 0; r < R; ++r) {
          const std::int8_t* a = x.q + static_cast<std::size_t>(r0 + r) * x.k + b * kBlock + 4 * step;
          // Pairs of products stay below 2^15 (2 x 127 x 127), not two pairs: 32 bits per step.
          const __m256i p = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(broadcast4(a), ws));
          dots[r] = _mm256_add_epi32(dots[r], _mm256_madd_epi16(p, ones));
        }
      }
    }
    scale_block<F, R>(w, x, r0, b, dots, acc);
  }
  store_tile<R>(acc, r0, bias, y, y_stride, valid);
}

// AVX-512 VNNI on 256-bit vectors (AVX512VL): vpdpbusd multiplies u8 by s8 and adds each
// lane's four products to its 32-bit sum in one instruction, where AVX2 takes vpmaddubsw, an
// add and, per block, vpmaddwd. The integer sums are the same (exact either way: the AVX2 16-bit
// sums cannot overflow), and so are the bits of every output. Its own function beside tile()
// rather than a branch in it: only this one is compiled for the AVX-512 target, and the
// intrinsics cannot be inlined into code built for AVX2.
template <WeightBlocks F, int R>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni"))) void tile_vnni(
    const std::byte* w, const Rows& x, int r0, const float* bias, float* y, int y_stride,
    int valid) noexcept {
  const __m256i low = _mm256_set1_epi8(0x0f);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int b = 0; b < x.blocks; ++b, w += group_block_bytes<F>()) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + 4 * group_block_bytes<F>(), _MM_HINT_T0);
    const std::byte* values = w + values_offset<F>();
    __m256i dots[R];
    for (int r = 0; r < R; ++r) dots[r] = _mm256_setzero_si256();
    if constexpr (F == WeightBlocks::q4_1) {
      for (int chunk = 0; chunk < 4; ++chunk) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + 32 * chunk));
        const __m256i w0 = _mm256_and_si256(v, low);
        const __m256i w1 = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        for (int r = 0; r < R; ++r) {
          const std::int8_t* a = x.q + static_cast<std::size_t>(r0 + r) * x.k + b * kBlock + 8 * chunk;
          dots[r] = _mm256_dpbusd_epi32(dots[r], w0, broadcast4(a));
          dots[r] = _mm256_dpbusd_epi32(dots[r], w1, broadcast4(a + 4));
        }
      }
    } else {
      for (int step = 0; step < 8; ++step) {
        const __m256i ws = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + 32 * step));
        const __m256i magnitude = _mm256_sign_epi8(ws, ws);
        for (int r = 0; r < R; ++r) {
          const std::int8_t* a = x.q + static_cast<std::size_t>(r0 + r) * x.k + b * kBlock + 4 * step;
          dots[r] = _mm256_dpbusd_epi32(dots[r], magnitude, _mm256_sign_epi8(broadcast4(a), ws));
        }
      }
    }
    scale_block<F, R>(w, x, r0, b, dots, acc);
  }
  store_tile<R>(acc, r0, bias, y, y_stride, valid);
}
#else
template <WeightBlocks F, int R>
void tile(const std::byte* w, const Rows& x, int r0, const float* bias, float* y, int y_stride,
          int valid) noexcept {
  float acc[R][kLanes] = {};
  for (int b = 0; b < x.blocks; ++b, w += group_block_bytes<F>()) {
    const std::byte* values = w + values_offset<F>();
    for (int r = 0; r < R; ++r) {
      const std::size_t row = static_cast<std::size_t>(r0 + r);
      const std::int8_t* a = x.q + row * x.k + b * kBlock;
      const std::size_t at = row * x.blocks + b;
      for (int c = 0; c < kLanes; ++c) {
        std::int32_t dot = 0;
        if constexpr (F == WeightBlocks::q4_1) {
          for (int chunk = 0; chunk < 4; ++chunk) {
            for (int i = 0; i < 4; ++i) {
              const auto byte = static_cast<std::uint8_t>(values[32 * chunk + 4 * c + i]);
              dot += (byte & 0x0f) * a[8 * chunk + i] + (byte >> 4) * a[8 * chunk + 4 + i];
            }
          }
          acc[r][c] += load_half(w + 2 * c) * x.d[at] * static_cast<float>(dot) +
                       load_half(w + 16 + 2 * c) * x.sum[at];
        } else {
          for (int step = 0; step < 8; ++step) {
            for (int i = 0; i < 4; ++i)
              dot += static_cast<std::int8_t>(values[32 * step + 4 * c + i]) * a[4 * step + i];
          }
          acc[r][c] += load_half(w + 2 * c) * x.d[at] * static_cast<float>(dot);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < valid; ++c) y[static_cast<std::size_t>(r0 + r) * y_stride + c] = acc[r][c] + bias[c];
  }
}
#endif

// Groups [group_begin, group_end) of 8 channels for every row.
template <WeightBlocks F, bool Vnni>
void groups(const std::byte* weights, std::size_t group_bytes, const Rows& x, int m, const float* bias,
            int group_begin, int group_end, float* y, int n) noexcept {
  auto run = [&]<int R>(const std::byte* w, int r0, int c0, int valid) {
#if defined(COINFER_BLOCK_AVX2)
    if constexpr (Vnni) {
      tile_vnni<F, R>(w, x, r0, bias + c0, y + c0, n, valid);
      return;
    }
#endif
    tile<F, R>(w, x, r0, bias + c0, y + c0, n, valid);
  };
  for (int g = group_begin; g < group_end; ++g) {
    const std::byte* w = weights + static_cast<std::size_t>(g) * group_bytes;
    const int c0 = g * kLanes;
    const int valid = std::min(kLanes, n - c0);
    int r0 = 0;
    for (; r0 + kTileRows <= m; r0 += kTileRows) run.template operator()<kTileRows>(w, r0, c0, valid);
    switch (m - r0) {
      case 3: run.template operator()<3>(w, r0, c0, valid); break;
      case 2: run.template operator()<2>(w, r0, c0, valid); break;
      case 1: run.template operator()<1>(w, r0, c0, valid); break;
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
  int groups = 0;                  // of 8 output channels
  std::size_t group_bytes = 0;     // repacked weights of one group (repack_group)
  std::vector<std::byte> weights;  // groups x group_bytes
  std::vector<float> bias;         // padded to whole groups, zeros without one
  std::vector<std::int8_t> xq;
  std::vector<float> xd, xsum;
  bool vnni = false;  // tile_vnni (AVX-512 VNNI on 256-bit vectors) instead of tile (AVX2)
};

BlockLinear::BlockLinear() = default;
BlockLinear::~BlockLinear() = default;
BlockLinear::BlockLinear(BlockLinear&&) noexcept = default;
BlockLinear& BlockLinear::operator=(BlockLinear&&) noexcept = default;

Status BlockLinear::create(WeightBlocks format, std::span<const std::byte> blocks,
                           std::span<const float> bias, int out_features, int in_features,
                           int max_batch, BlockLinear& out, bool vnni) {
  if (out_features < 1 || in_features < kBlock || in_features % kBlock != 0 || in_features > 65536 ||
      max_batch < 1) {
    return Status::invalid("block linear: " + std::to_string(out_features) + " outputs over " +
                           std::to_string(in_features) + " inputs, up to " + std::to_string(max_batch) +
                           " rows (inputs must be a positive multiple of 32, at most 65536)");
  }
  const int count = in_features / kBlock;
  const std::size_t row_bytes = static_cast<std::size_t>(count) * weight_block_bytes(format);
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
#if defined(COINFER_BLOCK_AVX2)
  // As the INT8 small-M kernels choose theirs: the CPU's VNNI, unless oneDNN's ISA is capped
  // below it (ONEDNN_MAX_CPU_ISA=AVX2 runs the AVX2 tiles on any machine).
  s->vnni = vnni && detect_small_m_isa() == SmallMIsa::avx512_vnni;
#else
  (void)vnni;
#endif
  s->groups = (out_features + kLanes - 1) / kLanes;
  s->group_bytes = static_cast<std::size_t>(count) * group_block_bytes(format);
  s->weights.resize(s->group_bytes * static_cast<std::size_t>(s->groups));
  for (int g = 0; g < s->groups; ++g) {
    repack_group(format, blocks.data() + static_cast<std::size_t>(g) * kLanes * row_bytes, row_bytes,
                 std::min(kLanes, out_features - g * kLanes), count,
                 s->weights.data() + static_cast<std::size_t>(g) * s->group_bytes);
  }
  s->bias.assign(static_cast<std::size_t>(s->groups) * kLanes, 0.0f);
  std::copy(bias.begin(), bias.end(), s->bias.begin());
  const auto rows = static_cast<std::size_t>(max_batch);
  s->xq.resize(rows * static_cast<std::size_t>(in_features));
  s->xd.resize(rows * static_cast<std::size_t>(count));
  s->xsum.resize(s->xd.size());
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
  parallel_for(m, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
    for (auto r = b; r < e; ++r) {
      quantize_row(x + r * s.k, s.k, s.xq.data() + r * s.k, s.xd.data() + r * blocks,
                   s.xsum.data() + r * blocks);
    }
  });
  const Rows rows{s.xq.data(), s.xd.data(), s.xsum.data(), s.k, blocks};
  // Chunks of groups small enough to balance two or more threads, large enough that each
  // streams a contiguous run of weights.
  const int grain = std::max(1, std::min(8, s.groups / (4 * std::max(1, compute_team_size()))));
  parallel_for(s.groups, grain, 0, [&](int, std::int64_t b, std::int64_t e) {
    const auto begin = static_cast<int>(b), end = static_cast<int>(e);
    const auto* w = s.weights.data();
    if (s.format == WeightBlocks::q4_1) {
      (s.vnni ? groups<WeightBlocks::q4_1, true> : groups<WeightBlocks::q4_1, false>)(
          w, s.group_bytes, rows, m, s.bias.data(), begin, end, y, s.n);
    } else {
      (s.vnni ? groups<WeightBlocks::q8_0, true> : groups<WeightBlocks::q8_0, false>)(
          w, s.group_bytes, rows, m, s.bias.data(), begin, end, y, s.n);
    }
  });
  return {};
}

WeightBlocks BlockLinear::format() const noexcept { return state_->format; }
int BlockLinear::in_features() const noexcept { return state_->k; }
int BlockLinear::out_features() const noexcept { return state_->n; }
int BlockLinear::max_batch() const noexcept { return state_->max_batch; }
const char* BlockLinear::kernel() const noexcept {
#if defined(COINFER_BLOCK_AVX2)
  return state_->vnni ? "avx512_vnni" : "avx2";
#else
  return "portable";
#endif
}
std::size_t BlockLinear::weight_bytes() const noexcept {
  return state_->weights.size() + state_->bias.size() * sizeof(float);
}

}  // namespace coinfer
