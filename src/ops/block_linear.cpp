#include "coinfer/ops/block_linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
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

// Activations of one forward: per row, int8 q [k], and per 32-input block its scale d, d *
// sum(q) (the Q4_1 min term's factor) and -128 * sum(q) (the VNNI Q8_0 tiles' starting sum).
// Rows below `stored` are results of their own (y's row r = the product + bias); with int16
// activations rows stored .. 2 stored - 1 hold what the first byte left of rows 0 .. stored - 1
// (the residual, quantized likewise), and their products are added into y's row r - stored,
// which every tile writes before (rows ascend).
//
// Layout: `panel` 0 stores each row's q in order and its scales in order (the AVX2 and portable
// tiles, and the VNNI tiles of steps of 1-4 rows and of prompt chunks). The VNNI tiles of a step
// of 5-16 rows read panels of P = 8 rows (their tile height) interleaved instead: a panel's
// block b holds, for each of its 8 groups of 4 inputs, the P rows' 4 bytes side by side (row i
// of the panel at byte 4 (s P + i) of group s), and its scales P to a block. A tile of the
// panel's rows then addresses every activation it broadcasts as one pointer plus a constant,
// however many rows it has; a panel starts where its first row would in the ordered layout
// (row r0 at q + r0 k, its scales at d + r0 blocks).
struct Rows {
  const std::int8_t* q;
  const float* d;
  const float* sum;
  const std::int32_t* fix;
  int k;
  int blocks;
  int stored;
};

// One block of 32 inputs: q = round(x / d) with d = max|x| / 127. Returns sum(q).
int quantize_block(const float* x, std::int8_t* q, float& d) noexcept {
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
  d = max / 127.0f;
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
  return _mm_cvtsi128_si32(t4);
#else
  float max = 0;
  for (int i = 0; i < kBlock; ++i) max = std::max(max, std::fabs(x[i]));
  const float inv = max > 0 ? 127.0f / max : 0.0f;
  int total = 0;
  for (int i = 0; i < kBlock; ++i) {
    q[i] = static_cast<std::int8_t>(std::nearbyint(x[i] * inv));
    total += q[i];
  }
  d = max / 127.0f;
  return total;
#endif
}

// Where forward() writes the quantized activations: Rows' arrays, in the layout of `panel`
// rows (0: ordered).
struct RowsOut {
  std::int8_t* q;
  float* d;
  float* sum;
  std::int32_t* fix;
  int k;
  int blocks;
  int panel;

  // Where row r goes: its first block's q and scales, and the steps from one block to the next
  // and from one group of 4 inputs to the next.
  struct Row {
    std::int8_t* q;
    float* d;
    float* sum;
    std::int32_t* fix;
    std::size_t q_step, group_step, scale_step;

    void put(int b, const std::int8_t* block_q, float block_d, int total) const noexcept {
      const std::size_t at = static_cast<std::size_t>(b) * scale_step;
      d[at] = block_d;
      sum[at] = block_d * static_cast<float>(total);
      fix[at] = -128 * total;
      std::int8_t* out = q + static_cast<std::size_t>(b) * q_step;
      if (group_step == 4) {
        std::memcpy(out, block_q, kBlock);
        return;
      }
      for (int group = 0; group < kBlock / 4; ++group) std::memcpy(out + group * group_step, block_q + 4 * group, 4);
    }
  };

  Row row(int r) const noexcept {
    const int p = panel == 0 ? 1 : panel;
    const int first = r - r % p, slot = r % p;  // the panel's first row, r's place in it
    const std::size_t scales = static_cast<std::size_t>(first) * blocks + slot;
    return {q + static_cast<std::size_t>(first) * k + 4 * slot, d + scales, sum + scales, fix + scales,
            static_cast<std::size_t>(kBlock) * p, 4 * static_cast<std::size_t>(p), static_cast<std::size_t>(p)};
  }

  // Row t of the tiles' rows from x [m, k]: row t of x for t < m; with int16 activations (split)
  // rows m .. 2m - 1 hold what the first byte leaves of row t - m, x - d q per block, quantized
  // the same way: x = d q + d2 q2 to within d2 / 2, about 1/250 of the first byte's error.
  void quantize(const float* x, int m, bool split, int t) const noexcept {
    const bool second = split && t >= m;
    x += static_cast<std::size_t>(second ? t - m : t) * k;
    const Row out = row(t);
    for (int b = 0; b < blocks; ++b, x += kBlock) {
      alignas(32) std::int8_t block_q[kBlock];
      float block_d;
      const int total = quantize_block(x, block_q, block_d);
      if (!second) {
        out.put(b, block_q, block_d, total);
        continue;
      }
      float left[kBlock];
      for (int i = 0; i < kBlock; ++i) left[i] = std::fma(-block_d, static_cast<float>(block_q[i]), x[i]);
      alignas(32) std::int8_t residual_q[kBlock];
      float residual_d;
      out.put(b, residual_q, residual_d, quantize_block(left, residual_q, residual_d));
    }
  }
};

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

// ---- AVX-512 VNNI: 16 output channels interleaved -------------------------------------------
// Where the CPU has AVX-512 VNNI the weights are repacked in groups of 16 channels instead, so
// a chunk of 4 inputs of every channel is one 512-bit vector and vpdpbusd (u8 x s8, four
// products into each 32-bit lane) multiplies it with a row's 4 activations broadcast straight
// from memory: twice the channels per instruction of the 8-lane layout, and one instruction
// where AVX2 takes a vpmaddubsw, an add and per block a vpmaddwd. A block: the 16 channels' d
// (FP16), then for Q4_1 their m (FP16; for Q8_0 32 bytes unused), then from the next cache line
// the values (Q4_1: 4 chunks as the 8-lane layout's, 64 bytes each; Q8_0: 8 chunks of 64
// bytes), so that each value vector sits on a line of its own. (A group's scales all before its
// values instead, Q8_0 then at the file's 1.0625 bytes per weight, read 10-25 % slower from
// memory at 8 rows: two streams per group where the prefetchers follow one.) The activations
// are the signed operand, the one vpdpbusd can broadcast from memory:
// - Q4_1: the nibbles are the unsigned operand as they are.
// - Q8_0: the weights are stored as w + 128 (top bit flipped at repack); a block's sum starts
//   at -128 x the row's block sum of q (Rows::fix), which leaves exactly x . w. No per-row sign
//   fix-ups as AVX2 needs.
// The integer sums equal the AVX2 tiles' and are scaled by the same FP32 operations in the same
// order, so every output has the same bits.
constexpr int kWideLanes = 16;

template <WeightBlocks F>
constexpr std::size_t wide_block_bytes() noexcept {
  return F == WeightBlocks::q4_1 ? 32 + 32 + 256 : 32 + 32 + 512;
}
std::size_t wide_block_bytes(WeightBlocks f) noexcept {
  return f == WeightBlocks::q4_1 ? wide_block_bytes<WeightBlocks::q4_1>() : wide_block_bytes<WeightBlocks::q8_0>();
}
constexpr std::size_t kWideValues = 64;  // d, then m or nothing

// Repacks up to `lanes` (8 or 16) output channels, rows of `count` blocks in ggml's layout
// row_bytes apart, into the layouts above: per block the channels' d, then Q4_1's m, then the
// values in chunks of 4 inputs x `lanes` channels (16 lanes, Q8_0: as w + 128).
void repack_group(WeightBlocks f, int lanes, const std::byte* blocks, std::size_t row_bytes,
                  int channels, int count, std::byte* out) noexcept {
  const bool wide = lanes == kWideLanes;
  const std::size_t bytes = wide ? wide_block_bytes(f) : group_block_bytes(f);
  const std::size_t chunk_bytes = 4 * static_cast<std::size_t>(lanes);
  const std::size_t values_at = wide ? kWideValues : f == WeightBlocks::q4_1 ? 4 * lanes : 2 * lanes;
  const auto flipped = static_cast<std::byte>(wide && f == WeightBlocks::q8_0 ? 0x80 : 0);
  for (int b = 0; b < count; ++b, out += bytes) {
    std::memset(out, 0, bytes);
    std::byte* values = out + values_at;
    for (int c = 0; c < channels; ++c) {
      const std::byte* block = blocks + static_cast<std::size_t>(c) * row_bytes + b * weight_block_bytes(f);
      std::memcpy(out + 2 * c, block, 2);  // d
      if (f == WeightBlocks::q8_0) {
        for (int step = 0; step < 8; ++step) {
          for (int i = 0; i < 4; ++i) values[chunk_bytes * step + 4 * c + i] = block[2 + 4 * step + i] ^ flipped;
        }
        continue;
      }
      std::memcpy(out + 2 * lanes + 2 * c, block + 2, 2);  // m
      const auto nibble = [&](int j) {
        const auto byte = static_cast<std::uint8_t>(block[4 + (j % 16)]);
        return j < 16 ? (byte & 0x0f) : (byte >> 4);
      };
      for (int chunk = 0; chunk < 4; ++chunk) {
        for (int i = 0; i < 4; ++i) {
          const int packed = nibble(8 * chunk + i) | nibble(8 * chunk + 4 + i) << 4;
          values[chunk_bytes * chunk + 4 * c + i] = static_cast<std::byte>(packed);
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

// y[r0 + r][0..valid) = acc[r] + bias, or for a residual row (Rows::stored) y[r0 + r - stored]
// += acc[r].
template <int R>
inline void store_tile(const __m256* acc, int r0, int stored, const float* bias, float* y, int y_stride,
                       int valid) noexcept {
  const __m256 bv = _mm256_loadu_ps(bias);
  for (int r = 0; r < R; ++r) {
    const bool residual = r0 + r >= stored;
    float* out = y + static_cast<std::size_t>(r0 + r - (residual ? stored : 0)) * y_stride;
    alignas(32) float lanes[kLanes];
    if (valid != kLanes && residual) std::memcpy(lanes, out, static_cast<std::size_t>(valid) * sizeof(float));
    const __m256 base = !residual ? bv : valid == kLanes ? _mm256_loadu_ps(out) : _mm256_load_ps(lanes);
    const __m256 v = _mm256_add_ps(acc[r], base);
    if (valid == kLanes) {
      _mm256_storeu_ps(out, v);
    } else {
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
  store_tile<R>(acc, r0, x.stored, bias, y, y_stride, valid);
}

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512vnni,amx-tile,amx-int8")
// GCC 12 takes the "undefined" pass-through operand of the masked builtins behind
// _mm512_cvtepi32_ps, _mm512_cvtph_ps and others for a read of an uninitialized variable.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace wide {
// vpdpbusd with the signed operand, 4 bytes at s8x4, broadcast from memory to every lane. Written
// out: GCC 12 copies the intrinsic's accumulator to a fresh register and spills a tile's sums on
// every step (as small_m_gemm.cpp found), and does not fold the broadcast.
using Word = std::int32_t __attribute__((may_alias));
inline __m512i dpbusd(__m512i c, __m512i u8, const std::int8_t* s8x4) noexcept {
  asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(c) : "v"(u8), "m"(*reinterpret_cast<const Word*>(s8x4)));
  return c;
}
// The same with the signed operand in a register (4 bytes broadcast), for tiles that use one
// broadcast for two groups.
inline __m512i dpbusd(__m512i c, __m512i u8, __m512i s8) noexcept {
  asm("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(u8), "v"(s8));
  return c;
}

inline __m512i broadcast4(const std::int8_t* p) noexcept {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// How far ahead of its loads a tile prefetches its groups' weights, one line per load: the
// distance has to cover the memory's latency at the pace the tile eats bytes. At 1-3 rows a
// block takes a few nanoseconds and 2 KB ahead is enough; a decode step's tiles of 4 and 8 rows
// take 4-8 times as long per byte, and 2 KB ahead was then only ~40 ns: at 8 rows the Q8_0
// tiles read 25-30 GB/s from memory against 36-45 with the weights in cache, 28-41 GB/s with
// 8 KB (one Zen 5 core, bench/micro_bench.cpp's int8_blocks and int8_blocks_cached,
// 2026-12-07). Prompt chunks keep 2 KB: their later row tiles find the weights in cache, and
// 8 KB cost the Q8_0 path 4-6 % of its prefill-heavy tokens/s at 16 streams.
constexpr int kPrefetchNear = 2048;
constexpr int kPrefetchFar = 8192;

// A block's integer sums of one row and 16 channels into the row's FP32 sums: times the
// weights' d (dw) and the row's block scale d, plus for Q4_1 the weights' m (mw) times the row's
// scaled block sum. The VNNI and AMX tiles both scale with this, so they give the same bits.
template <WeightBlocks F>
inline __m512 add_block(__m512 acc, __m512i dots, __m512 dw, [[maybe_unused]] __m512 mw, float d,
                        [[maybe_unused]] float sum) noexcept {
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), _mm512_mul_ps(dw, _mm512_set1_ps(d)), acc);
  if constexpr (F == WeightBlocks::q4_1) acc = _mm512_fmadd_ps(mw, _mm512_set1_ps(sum), acc);
  return acc;
}

// A block's 16 FP16 scales (d, or 32 bytes on Q4_1's m) as FP32.
inline __m512 load_scales(const std::byte* p) noexcept {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Tile row r's sums of 16 channels (mask: the valid ones) into y (at the group's first
// channel): y[r] = sums + bias, or for a residual row (Rows::stored) y[r - stored] += sums.
inline void store_row(__m512 sums, int r, int stored, __m512 bias, __mmask16 mask, float* y,
                      int y_stride) noexcept {
  const bool residual = r >= stored;  // add into the row's first term, written before
  float* out = y + static_cast<std::size_t>(r - (residual ? stored : 0)) * y_stride;
  const __m512 base = residual ? _mm512_maskz_loadu_ps(mask, out) : bias;
  _mm512_mask_storeu_ps(out, mask, _mm512_add_ps(sums, base));
}

// Rows r0 .. r0 + R - 1 of V adjacent groups of 16 channels (group_bytes apart):
// y[r][0..valid) = x[r] . W[c] + bias[c], prefetching `Prefetch` bytes ahead. The rows are a
// panel of P (Rows' layout), r0 a multiple of P; P = 0: the rows in order.
template <WeightBlocks F, int R, int V, int P, int Prefetch>
void tile(const std::byte* w, std::size_t group_bytes, const Rows& x, int r0,
          const float* bias, float* y, int y_stride, int valid) noexcept {
  static_assert(P == 0 || R <= P);
  const __m512i low = _mm512_set1_epi8(0x0f);
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  // Row i's group s of 4 inputs at a + 4 s + i row_step, its scales at d[i scale_step].
  const std::size_t row_step = P > 0 ? 4 : static_cast<std::size_t>(x.k);
  const std::size_t group_step = P > 0 ? 4 * P : 4;
  const std::size_t scale_step = P > 0 ? 1 : static_cast<std::size_t>(x.blocks);
  const std::size_t first = static_cast<std::size_t>(r0) * x.blocks;
  const std::int8_t* a = x.q + static_cast<std::size_t>(r0) * x.k;
  const float* d = x.d + first;
  const float* sum = x.sum + first;
  const std::int32_t* fix = x.fix + first;
  constexpr int next = P > 0 ? P : 1;  // from one block's scales to the next
  for (int b = 0; b < x.blocks; ++b, a += kBlock * next, d += next, sum += next, fix += next, w += wide_block_bytes<F>()) {
    const std::byte* values = w + kWideValues;
    __m512i dots[R][V];
    if constexpr (F == WeightBlocks::q4_1) {
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) dots[r][v] = _mm512_setzero_si512();
      }
      for (int chunk = 0; chunk < 4; ++chunk) {
        __m512i w0[V], w1[V];
        for (int v = 0; v < V; ++v) {
          const std::byte* at = values + v * group_bytes + 64 * chunk;
          _mm_prefetch(reinterpret_cast<const char*>(at) + Prefetch, _MM_HINT_T0);
          const __m512i packed = _mm512_load_si512(at);
          w0[v] = _mm512_and_si512(packed, low);
          w1[v] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low);
        }
        for (int r = 0; r < R; ++r) {
          const std::int8_t* a0 = a + 2 * chunk * group_step + r * row_step;
          const std::int8_t* a1 = a0 + group_step;
          if constexpr (V == 1) {
            dots[r][0] = dpbusd(dpbusd(dots[r][0], w0[0], a0), w1[0], a1);
          } else {
            const __m512i b0 = broadcast4(a0), b1 = broadcast4(a1);
            for (int v = 0; v < V; ++v) dots[r][v] = dpbusd(dpbusd(dots[r][v], w0[v], b0), w1[v], b1);
          }
        }
      }
    } else {
      for (int r = 0; r < R; ++r) {
        const __m512i start = _mm512_set1_epi32(fix[r * scale_step]);  // -128 x the row's block sum
        for (int v = 0; v < V; ++v) dots[r][v] = start;
      }
      for (int step = 0; step < 8; ++step) {
        __m512i ws[V];
        for (int v = 0; v < V; ++v) {
          const std::byte* at = values + v * group_bytes + 64 * step;
          _mm_prefetch(reinterpret_cast<const char*>(at) + Prefetch, _MM_HINT_T0);
          ws[v] = _mm512_load_si512(at);  // w + 128
        }
        for (int r = 0; r < R; ++r) {
          const std::int8_t* at = a + step * group_step + r * row_step;
          if constexpr (V == 1) {
            dots[r][0] = dpbusd(dots[r][0], ws[0], at);
          } else {
            const __m512i broadcast = broadcast4(at);
            for (int v = 0; v < V; ++v) dots[r][v] = dpbusd(dots[r][v], ws[v], broadcast);
          }
        }
      }
    }
    for (int v = 0; v < V; ++v) {
      const std::byte* g = w + v * group_bytes;
      const __m512 dw = load_scales(g), mw = F == WeightBlocks::q4_1 ? load_scales(g + 32) : dw;
      for (int r = 0; r < R; ++r) {
        acc[r][v] = add_block<F>(acc[r][v], dots[r][v], dw, mw, d[r * scale_step], sum[r * scale_step]);
      }
    }
  }
  for (int v = 0; v < V; ++v) {
    const int left = valid - kWideLanes * v;
    if (left <= 0) break;
    const auto mask = static_cast<__mmask16>(left >= kWideLanes ? 0xffff : (1u << left) - 1);
    const __m512 bv = _mm512_loadu_ps(bias + kWideLanes * v);
    for (int r = 0; r < R; ++r) store_row(acc[r][v], r0 + r, x.stored, bv, mask, y + kWideLanes * v, y_stride);
  }
}

// Tiles: up to 4 rows take 2 groups at a time (8 integer and 8 FP32 sums in registers); up to
// 16 (decode steps) take one group at a time, 8 rows a tile, so that the first pass over a
// group's weights (the one that waits on memory) already serves 8 rows rather than leaving the
// next 4 to a second pass once they are in cache; more rows (prompt chunks, whose weights stay
// in cache across tiles) take 2 groups and 6 rows a tile, one load of a row's inputs for two
// vpdpbusd (24 sums in registers). The activations of steps of 5-16 rows are in panels of 8
// (panel_rows), which their 8-row tiles broadcast from memory; steps of up to 4 rows and prompt
// chunks keep them in order: their tiles load each broadcast once for two groups anyway, and
// interleaving cost more than it gave (a chunk's rows: 5-8 % of the time of a layer with few
// outputs, the stores of 4 bytes apiece over hundreds of rows; one row: up to 8 %).
constexpr int kPairRows = 4;
constexpr int kSingleRows = 8;
constexpr int kDecodeRows = 16;
constexpr int kChunkRows = 6;

int panel_rows(int m) noexcept { return m > kPairRows && m <= kDecodeRows ? kSingleRows : 0; }

// Groups [group_begin, group_end) of 16 channels for every row.
template <WeightBlocks F>
void groups(const std::byte* weights, std::size_t group_bytes, const Rows& x, int m,
            const float* bias, int group_begin, int group_end, float* y, int n) noexcept {
  // Rows 0 .. m - 1 in tiles of up to T rows (activations in panels of P) over V groups from w.
  // Returns V, the groups it took.
  auto rows = [&]<int T, int V, int P>(const std::byte* w, int c0) {
    auto run = [&]<int R>(int r0) {
      constexpr int prefetch = T != kChunkRows && R >= 4 ? kPrefetchFar : kPrefetchNear;
      tile<F, R, V, P, prefetch>(w, group_bytes, x, r0, bias + c0, y + c0, n, std::min(V * kWideLanes, n - c0));
    };
    int r0 = 0;
    for (; r0 + T <= m; r0 += T) run.template operator()<T>(r0);
    [&]<int... R>(std::integer_sequence<int, R...>) {
      ((m - r0 == R + 1 ? run.template operator()<R + 1>(r0) : void()), ...);
    }(std::make_integer_sequence<int, T - 1>{});
    return V;
  };
  for (int g = group_begin; g < group_end;) {
    const std::byte* w = weights + static_cast<std::size_t>(g) * group_bytes;
    const int c0 = g * kWideLanes;
    const bool pair = g + 2 <= group_end;
    if (m <= kPairRows) {
      g += pair ? rows.template operator()<kPairRows, 2, 0>(w, c0) : rows.template operator()<kPairRows, 1, 0>(w, c0);
    } else if (m <= kDecodeRows) {
      g += rows.template operator()<kSingleRows, 1, kSingleRows>(w, c0);
    } else {  // prompt chunks; the last group alone where the count is odd
      g += pair ? rows.template operator()<kChunkRows, 2, 0>(w, c0) : rows.template operator()<kChunkRows, 1, 0>(w, c0);
    }
  }
}
}  // namespace wide

// ---- AMX-INT8: a decode step's rows in one tile multiply -----------------------------------
// Where the CPU has AMX (Intel Xeon since Sapphire Rapids) a decode step (Q8_0 5-16 rows, Q4_1
// 9-16) runs each 32-input block of a 16-channel group as one tile multiply: tdpbsud takes the
// rows' 32 activations (signed, R rows x 32 bytes, loaded straight from the rows in order) and
// the block's values as they lie in the VNNI layout (unsigned: a chunk of 4 inputs x 16
// channels is one 64-byte row of the B tile; Q4_1's nibbles unpacked to bytes first), 128
// vpdpbusd's worth of products at 16 rows. The block's integer sums are the VNNI tile's exactly
// (Q8_0's start at Rows::fix is added after the multiply instead of before) and are scaled by
// the same FP32 operations in the same order, so every output keeps its bits. Each block's sums
// still go through memory to be scaled (a tile store of ~5 ns, then vector loads), which is
// what bounds it: prompt chunks in tiles of 16 rows ran no faster than the VNNI tiles (95-103 %
// at 64 rows, a tenth to a fifth of oneDNN's per-channel AMX GEMM), so they keep those.
namespace amx {

// Linux hands a process AMX's tile data only on request (arch_prctl ARCH_REQ_XCOMP_PERM).
bool usable() noexcept {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    constexpr unsigned kTile = 1u << 24, kInt8 = 1u << 25;  // CPUID.(7, 0):EDX
    if ((d & kTile) == 0 || (d & kInt8) == 0) return false;
    constexpr long kRequestPermission = 0x1023, kTileData = 18;
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return ok;
}

// Tiles: tmm0-3 the sums of four blocks in turn (R rows x 16 int32), tmm4 and tmm5 the
// activations of even and odd blocks (R rows x 32 bytes), tmm6 and tmm7 their weights (8 rows
// of 4 inputs x 16 channels).
struct alignas(64) Config {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t columns[16] = {};  // bytes per row
  std::uint8_t rows[16] = {};
  explicit Config(int r) {
    for (int t : {0, 1, 2, 3}) columns[t] = 64, rows[t] = static_cast<std::uint8_t>(r);
    for (int t : {4, 5}) columns[t] = kBlock, rows[t] = static_cast<std::uint8_t>(r);
    for (int t : {6, 7}) columns[t] = 64, rows[t] = kBlock / 4;
  }
};
static_assert(sizeof(Config) == 64);

// The steps that run tile multiplies: from 5 rows for Q8_0 (at 5-8 rows 0-16 % more calls a
// second than the VNNI tiles, 15-26 % at 16), from 9 for Q4_1 (at 8 rows the unpacking of the
// nibbles into the B tile cost 17-22 %, at 10 even, 13-25 % more at 12, 15-30 % at 16), to 16,
// one tile's rows. One Xeon core, bench/micro_bench.cpp's llm/*_vnni rows, 2026-12-07.
template <WeightBlocks F>
constexpr int kFewestRows = F == WeightBlocks::q8_0 ? 5 : 9;
constexpr int kMostRows = 16;
inline int fewest_rows(WeightBlocks f) noexcept {
  return f == WeightBlocks::q8_0 ? kFewestRows<WeightBlocks::q8_0> : kFewestRows<WeightBlocks::q4_1>;
}

struct alignas(64) Scratch {
  std::int32_t sums[4][kMostRows * kWideLanes];
  std::uint8_t values[4][kBlock * kWideLanes];  // Q4_1's nibbles as bytes
};

// A Q4_1 block's 4 chunks of nibbles (inputs 8c .. 8c + 3 low, 8c + 4 .. 8c + 7 high) as the
// B tile's 8 rows of bytes.
inline void unpack(const std::byte* values, std::uint8_t* out) noexcept {
  const __m512i low = _mm512_set1_epi8(0x0f);
  for (int chunk = 0; chunk < 4; ++chunk) {
    const __m512i packed = _mm512_load_si512(values + 64 * chunk);
    _mm512_store_si512(out + 128 * chunk, _mm512_and_si512(packed, low));
    _mm512_store_si512(out + 128 * chunk + 64, _mm512_and_si512(_mm512_srli_epi16(packed, 4), low));
  }
}

// Rows 0 .. R - 1 (in order) of one group of 16 channels: y[r][0..valid) = x[r] . W[c] + bias[c].
template <WeightBlocks F, int R>
void group(const std::byte* w, const Rows& x, const float* bias, float* y, int y_stride, int valid,
           Scratch& scratch) noexcept {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  constexpr std::size_t bytes = wide_block_bytes<F>();
  // Block b multiplies into tmm(b % 4) from activations in tmm4 + b % 2 and weights in
  // tmm6 + b % 2, three blocks ahead of the one whose sums are scaled: a multiply's sums take
  // longer to come than a block's scaling. The tile numbers are the instructions' immediates,
  // hence macros.
#define COINFER_AMX_MULTIPLY(C, A, B, b)                                          \
  do {                                                                            \
    const std::byte* v_ = w + static_cast<std::size_t>(b) * bytes;                \
    for (std::size_t line = 0; line < bytes; line += 64) {                        \
      _mm_prefetch(reinterpret_cast<const char*>(v_) + wide::kPrefetchFar + line, _MM_HINT_T0); \
    }                                                                             \
    v_ += kWideValues;                                                            \
    _tile_loadd(A, x.q + static_cast<std::size_t>(b) * kBlock, x.k);              \
    if constexpr (F == WeightBlocks::q4_1) {                                      \
      _tile_loadd(B, scratch.values[C], 64);                                      \
    } else {                                                                      \
      _tile_loadd(B, v_, 64);                                                     \
    }                                                                             \
    _tile_zero(C);                                                                \
    _tile_dpbsud(C, A, B);                                                        \
    if constexpr (F == WeightBlocks::q4_1) {                                      \
      if ((b) + 2 < x.blocks) unpack(v_ + 2 * bytes, scratch.values[((C) + 2) % 4]); \
    }                                                                             \
  } while (false)
#define COINFER_AMX_SCALE(C, b)                                                                       \
  do {                                                                                                \
    _tile_stored(C, scratch.sums[C], 64);                                                             \
    const std::byte* g_ = w + static_cast<std::size_t>(b) * bytes;                                    \
    const __m512 dw_ = wide::load_scales(g_), mw_ = wide::load_scales(g_ + 32);                       \
    for (int r = 0; r < R; ++r) {                                                                     \
      const std::size_t at = static_cast<std::size_t>(r) * x.blocks + (b);                            \
      __m512i dots = _mm512_load_si512(scratch.sums[C] + r * kWideLanes);                             \
      if constexpr (F == WeightBlocks::q8_0) dots = _mm512_add_epi32(dots, _mm512_set1_epi32(x.fix[at])); \
      acc[r] = wide::add_block<F>(acc[r], dots, dw_, mw_, x.d[at], x.sum[at]);                         \
    }                                                                                                 \
  } while (false)
  const int n_blocks = x.blocks;
  // Q4_1: a block's nibbles are unpacked two blocks before its tile load, which would wait for
  // the stores to reach the cache if it came right after them.
  if constexpr (F == WeightBlocks::q4_1) {
    for (int b = 0; b < std::min(2, n_blocks); ++b) unpack(w + b * bytes + kWideValues, scratch.values[b]);
  }
  COINFER_AMX_MULTIPLY(0, 4, 6, 0);
  if (n_blocks > 1) COINFER_AMX_MULTIPLY(1, 5, 7, 1);
  if (n_blocks > 2) COINFER_AMX_MULTIPLY(2, 4, 6, 2);
  for (int b = 0; b < n_blocks; b += 4) {
    if (b + 3 < n_blocks) COINFER_AMX_MULTIPLY(3, 5, 7, b + 3);
    COINFER_AMX_SCALE(0, b);
    if (b + 1 >= n_blocks) break;
    if (b + 4 < n_blocks) COINFER_AMX_MULTIPLY(0, 4, 6, b + 4);
    COINFER_AMX_SCALE(1, b + 1);
    if (b + 2 >= n_blocks) break;
    if (b + 5 < n_blocks) COINFER_AMX_MULTIPLY(1, 5, 7, b + 5);
    COINFER_AMX_SCALE(2, b + 2);
    if (b + 3 >= n_blocks) break;
    if (b + 6 < n_blocks) COINFER_AMX_MULTIPLY(2, 4, 6, b + 6);
    COINFER_AMX_SCALE(3, b + 3);
  }
#undef COINFER_AMX_MULTIPLY
#undef COINFER_AMX_SCALE
  const auto mask = static_cast<__mmask16>(valid >= kWideLanes ? 0xffff : (1u << valid) - 1);
  const __m512 bv = _mm512_loadu_ps(bias);
  for (int r = 0; r < R; ++r) wide::store_row(acc[r], r, x.stored, bv, mask, y, y_stride);
}

// Groups [group_begin, group_end) of 16 channels for all m rows (kFewestRows<F> .. kMostRows,
// in order). Loads the tile configuration on the calling thread and releases it after.
template <WeightBlocks F>
void groups(const std::byte* weights, std::size_t group_bytes, const Rows& x, int m, const float* bias,
            int group_begin, int group_end, float* y, int n) noexcept {
  const Config config(m);
  _tile_loadconfig(&config);
  Scratch scratch;
  auto run = [&]<int R>() {
    for (int g = group_begin; g < group_end; ++g) {
      const int c0 = g * kWideLanes;
      group<F, R>(weights + static_cast<std::size_t>(g) * group_bytes, x, bias + c0, y + c0, n,
                  std::min(kWideLanes, n - c0), scratch);
    }
  };
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((m == R + kFewestRows<F> ? run.template operator()<R + kFewestRows<F>>() : void()), ...);
  }(std::make_integer_sequence<int, kMostRows - kFewestRows<F> + 1>{});
  _tile_release();
}

}  // namespace amx
#pragma GCC diagnostic pop
#pragma GCC pop_options
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
    const bool residual = r0 + r >= x.stored;  // Rows::stored: add into the row's first term
    float* out = y + static_cast<std::size_t>(r0 + r - (residual ? x.stored : 0)) * y_stride;
    for (int c = 0; c < valid; ++c) out[c] = acc[r][c] + (residual ? out[c] : bias[c]);
  }
}
#endif

// Groups [group_begin, group_end) of 8 channels for every row.
template <WeightBlocks F>
void groups(const std::byte* weights, std::size_t group_bytes, const Rows& x, int m, const float* bias,
            int group_begin, int group_end, float* y, int n) noexcept {
  auto run = [&]<int R>(const std::byte* w, int r0, int c0, int valid) {
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

const char* to_string(BlockActivations activations) noexcept {
  return activations == BlockActivations::int16 ? "int16" : "int8";
}

std::size_t weight_block_bytes(WeightBlocks format) noexcept {
  return format == WeightBlocks::q4_1 ? 20 : 34;
}

constexpr std::size_t kLineBytes = 64;
// Frees weights of the layer's own; an arena's (create's `arena`) are the arena's to free.
struct AlignedFree {
  bool owned = true;
  void operator()(std::byte* p) const noexcept {
    if (owned) ::operator delete[](p, std::align_val_t{kLineBytes});
  }
};

struct BlockLinear::State {
  WeightBlocks format = WeightBlocks::q4_1;
  int n = 0, k = 0, max_batch = 0;
  int lanes = 0;                   // output channels per group: 8, or 16 for the VNNI tiles
  int groups = 0;
  std::size_t group_bytes = 0;     // repacked weights of one group (repack_group)
  // groups x group_bytes, from a 64-byte boundary: a vector load never straddles two lines.
  std::unique_ptr<std::byte[], AlignedFree> weights;
  std::size_t weights_size = 0;
  std::vector<float> bias;         // padded to whole groups, zeros without one
  std::vector<std::int8_t> xq;  // Rows' arrays, for max_batch rows (twice with int16) and a panel
  std::vector<float> xd, xsum;
  std::vector<std::int32_t> xfix;
  bool vnni = false;  // wide::tile (AVX-512 VNNI, 16-channel groups) instead of tile (AVX2)
  bool amx = false;   // and amx::groups for steps of amx::fewest_rows(format) .. kMostRows
  BlockActivations activations = BlockActivations::int8;
};

BlockLinear::BlockLinear() = default;
BlockLinear::~BlockLinear() = default;
BlockLinear::BlockLinear(BlockLinear&&) noexcept = default;
BlockLinear& BlockLinear::operator=(BlockLinear&&) noexcept = default;

Status BlockLinear::create(WeightBlocks format, std::span<const std::byte> blocks,
                           std::span<const float> bias, int out_features, int in_features,
                           int max_batch, BlockLinear& out, BlockActivations activations,
                           BlockKernels kernels, PageArena* arena) {
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
  s->activations = activations;
#if defined(COINFER_BLOCK_AVX2)
  // As the INT8 small-M kernels choose theirs: the CPU's VNNI and AMX, unless oneDNN's ISA is
  // capped below them (ONEDNN_MAX_CPU_ISA=AVX2 runs the AVX2 tiles on any machine,
  // =AVX512_CORE_VNNI the VNNI tiles on one with AMX).
  s->vnni = kernels != BlockKernels::avx2 && detect_small_m_isa() == SmallMIsa::avx512_vnni;
  s->amx = s->vnni && kernels == BlockKernels::amx && onednn_allows_amx() && amx::usable();
#else
  (void)kernels;
#endif
  s->lanes = s->vnni ? kWideLanes : kLanes;
  s->groups = (out_features + s->lanes - 1) / s->lanes;
  s->group_bytes = static_cast<std::size_t>(count) * (s->vnni ? wide_block_bytes(format) : group_block_bytes(format));
  s->weights_size = s->group_bytes * static_cast<std::size_t>(s->groups);
  if (arena != nullptr) {
    s->weights = std::unique_ptr<std::byte[], AlignedFree>(arena->allocate(s->weights_size), AlignedFree{false});
  } else {
    s->weights.reset(static_cast<std::byte*>(::operator new[](s->weights_size, std::align_val_t{kLineBytes})));
  }
  for (int g = 0; g < s->groups; ++g) {
    const std::byte* from = blocks.data() + static_cast<std::size_t>(g) * s->lanes * row_bytes;
    const int channels = std::min(s->lanes, out_features - g * s->lanes);
    std::byte* to = s->weights.get() + static_cast<std::size_t>(g) * s->group_bytes;
    repack_group(format, s->lanes, from, row_bytes, channels, count, to);
  }
  s->bias.assign(static_cast<std::size_t>(s->groups) * s->lanes, 0.0f);
  std::copy(bias.begin(), bias.end(), s->bias.begin());
  // int16: each row's residual as a row of its own, after all of them (Rows::stored).
  // A whole last panel of up to 8 rows (RowsOut) past them.
  const auto rows = static_cast<std::size_t>(max_batch) * (activations == BlockActivations::int16 ? 2 : 1) + 8;
  s->xq.resize(rows * static_cast<std::size_t>(in_features));
  s->xd.resize(rows * static_cast<std::size_t>(count));
  s->xsum.resize(s->xd.size());
  s->xfix.resize(s->xd.size());
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
  const bool split = s.activations == BlockActivations::int16;
  const int tile_rows = split ? 2 * m : m;  // int16: the residual rows too, in the same tiles
  int panel = 0;
#if defined(COINFER_BLOCK_AVX2)
  // AMX loads a tile's rows in order; the VNNI tiles of 5-16 rows read panels.
  const bool use_amx = s.amx && tile_rows >= amx::fewest_rows(s.format) && tile_rows <= amx::kMostRows;
  if (s.vnni && !use_amx) panel = wide::panel_rows(tile_rows);
#endif
  const RowsOut out{s.xq.data(), s.xd.data(), s.xsum.data(), s.xfix.data(), s.k, blocks, panel};
  // Whole panels to a thread: rows of one panel share cache lines, and two threads writing
  // them took 15-30 % longer over a 250-row prompt chunk than one.
  const int per = std::max(panel, 1);
  parallel_for((tile_rows + per - 1) / per, std::max(1, 8 / per), 0, [&](int, std::int64_t b, std::int64_t e) {
    for (auto t = b * per; t < std::min<std::int64_t>(e * per, tile_rows); ++t) out.quantize(x, m, split, static_cast<int>(t));
  });
  const Rows rows{s.xq.data(), s.xd.data(), s.xsum.data(), s.xfix.data(), s.k, blocks, m};
  // How the groups are shared: a decode step (up to 16 rows, memory-bound) gives each thread of
  // the team one contiguous run, so that each streams its half of the weights front to back
  // with the prefetcher (and the tiles' prefetch) running ahead; chunks handed out in turn cut
  // those streams into pieces of a few tens of KB and cost one stream 10-20 % of its tokens/s
  // (docs/BENCHMARKS.md). Larger steps (prompt chunks, compute-bound) take chunks small enough
  // to balance the threads. The VNNI tiles take groups in pairs.
  const int unit = s.vnni ? 2 : 1;
  const int units = (s.groups + unit - 1) / unit;
  const int team = std::max(1, compute_team_size());
  constexpr int kStreamedRows = 16;
  const int grain = m <= kStreamedRows ? (units + team - 1) / team : std::max(1, std::min(8 / unit, units / (4 * team)));
  parallel_for(units, grain, 0, [&](int, std::int64_t b, std::int64_t e) {
    const auto begin = static_cast<int>(b) * unit, end = std::min(s.groups, static_cast<int>(e) * unit);
    const std::byte* w = s.weights.get();
#if defined(COINFER_BLOCK_AVX2)
    if (use_amx) {
      (s.format == WeightBlocks::q4_1 ? amx::groups<WeightBlocks::q4_1> : amx::groups<WeightBlocks::q8_0>)(
          w, s.group_bytes, rows, tile_rows, s.bias.data(), begin, end, y, s.n);
      return;
    }
    if (s.vnni) {
      (s.format == WeightBlocks::q4_1 ? wide::groups<WeightBlocks::q4_1> : wide::groups<WeightBlocks::q8_0>)(
          w, s.group_bytes, rows, tile_rows, s.bias.data(), begin, end, y, s.n);
      return;
    }
#endif
    (s.format == WeightBlocks::q4_1 ? groups<WeightBlocks::q4_1> : groups<WeightBlocks::q8_0>)(
        w, s.group_bytes, rows, tile_rows, s.bias.data(), begin, end, y, s.n);
  });
  return {};
}

WeightBlocks BlockLinear::format() const noexcept { return state_->format; }
BlockActivations BlockLinear::activations() const noexcept { return state_->activations; }
int BlockLinear::in_features() const noexcept { return state_->k; }
int BlockLinear::out_features() const noexcept { return state_->n; }
int BlockLinear::max_batch() const noexcept { return state_->max_batch; }
const char* BlockLinear::kernel() const noexcept {
#if defined(COINFER_BLOCK_AVX2)
  return state_->amx ? "amx" : state_->vnni ? "avx512_vnni" : "avx2";
#else
  return "portable";
#endif
}
std::size_t BlockLinear::weight_bytes() const noexcept {
  return state_->weights_size + state_->bias.size() * sizeof(float);
}

}  // namespace coinfer
