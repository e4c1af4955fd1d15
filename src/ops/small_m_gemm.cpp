#include "coinfer/ops/small_m_gemm.hpp"

#include <immintrin.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

// The AVX-512 kernels are compiled for their ISA (a target region below) and only called after
// detect_small_m_isa() found it; the rest of the library stays at the build's -march.

namespace coinfer {
namespace {

std::int32_t load_i32(const std::uint8_t* p) noexcept {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
namespace vnni {
// vpdpbusd through inline assembly: GCC 12 copies the accumulator of the intrinsic
// (_mm512_dpbusd_epi32) to a fresh register and spills a tile's 24 accumulators to the stack
// on every step; with the instruction written out they stay in registers.
inline __m512i dpbusd(__m512i c, __m512i x, __m512i w) noexcept {
  asm("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(x), "v"(w));
  return c;
}
inline __m256i dpbusd(__m256i c, __m256i x, __m256i w) noexcept {
  asm("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(x), "v"(w));
  return c;
}

// ---- blocked weights, AVX-512 VNNI -----------------------------------------------------------
// One column block (V x 16 columns) for R rows: R x V accumulators of 16 INT32 lanes. Each
// group of 4 inputs is V vector loads, then per row one broadcast of its 4 activation bytes
// and V vpdpbusd.
// How far ahead of the loads the weights are prefetched: the hardware prefetchers alone leave a
// tile of several rows waiting on memory (measured: 5.7 -> 9.8 GB/s at M = 8).
constexpr int kPrefetchBytes = 2048;

template <int R, int V>
void blocked_tile(const std::int8_t* w, int k_groups, const std::uint8_t* x, int x_stride,
                  int cols, std::int32_t* acc, int acc_stride) noexcept {
  __m512i c[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) c[r][v] = _mm512_setzero_si512();
  }
  for (int g = 0; g < k_groups; ++g) {
    const std::int8_t* wg = w + static_cast<std::ptrdiff_t>(g) * 64 * V;
    __m512i wv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(wg + kPrefetchBytes + 64 * v), _MM_HINT_T0);
      wv[v] = _mm512_loadu_si512(wg + 64 * v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i b = _mm512_set1_epi32(load_i32(x + static_cast<std::ptrdiff_t>(r) * x_stride + 4 * g));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) c[r][v] = dpbusd(c[r][v], b, wv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    std::int32_t* out = acc + static_cast<std::ptrdiff_t>(r) * acc_stride;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int left = cols - 16 * v;
      if (left >= 16) {
        _mm512_storeu_si512(out + 16 * v, c[r][v]);
      } else if (left > 0) {
        _mm512_mask_storeu_epi32(out + 16 * v, static_cast<__mmask16>((1u << left) - 1), c[r][v]);
      }
    }
  }
}

// Four u8 x s8 products straight into each INT32 lane (256-bit vectors: the row-major tile).
inline __m256i dot_step(__m256i c, __m256i x, __m256i w) noexcept {
  return dpbusd(c, x, w);
}
#include "small_m_rows.inc"
}  // namespace vnni
#pragma GCC pop_options

constexpr int kBlockedRows = 6;  // rows per tile: 6 x 4 accumulators + 4 weight vectors

template <int V>
void blocked_columns(const SmallMWeights& w, const std::uint8_t* x, int m, int x_stride,
                     int col_begin, int col_end, std::int32_t* acc, int acc_stride) noexcept {
  using Tile = void (*)(const std::int8_t*, int, const std::uint8_t*, int, int, std::int32_t*, int);
  static constexpr Tile tiles[kBlockedRows] = {&vnni::blocked_tile<1, V>, &vnni::blocked_tile<2, V>,
                                               &vnni::blocked_tile<3, V>, &vnni::blocked_tile<4, V>,
                                               &vnni::blocked_tile<5, V>, &vnni::blocked_tile<6, V>};
  for (int c0 = col_begin; c0 < col_end; c0 += w.block) {
    const std::int8_t* block = w.data + static_cast<std::ptrdiff_t>(c0 / w.block) * w.block_stride;
    const int cols = std::min(w.block, col_end - c0);
    for (int r0 = 0; r0 < m; r0 += kBlockedRows) {
      const int rows = std::min(kBlockedRows, m - r0);
      tiles[rows - 1](block, w.k_groups, x + static_cast<std::ptrdiff_t>(r0) * x_stride, x_stride,
                      cols, acc + static_cast<std::ptrdiff_t>(r0) * acc_stride + c0, acc_stride);
    }
  }
}

// ---- row-major weights ------------------------------------------------------------------------

namespace avx2 {
// Pairs of u8 x s8 products in saturating INT16 (exact while |W| <= 63), then pairs of those
// in INT32.
inline __m256i dot_step(__m256i c, __m256i x, __m256i w) noexcept {
  return _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1)));
}
#include "small_m_rows.inc"
}  // namespace avx2

using RowsTile = void (*)(const std::int8_t*, int, const std::uint8_t*, int, int, std::int32_t*, int);

// AVX2 has 16 vector registers: 2 rows x 4 columns of accumulators, 4 weight vectors, the
// input and the INT16 ones. AVX-512 has 32: 4 rows.
void rows_columns(const RowsTile* tiles, int max_rows, const SmallMWeights& w,
                  const std::uint8_t* x, int m, int x_stride, int col_begin, int col_end,
                  std::int32_t* acc, int acc_stride) noexcept {
  for (int c0 = col_begin; c0 < col_end; c0 += 4) {
    const std::int8_t* wc = w.data + static_cast<std::ptrdiff_t>(c0) * w.k;
    const int cols = std::min(4, col_end - c0);
    for (int r0 = 0; r0 < m; r0 += max_rows) {
      const int rows = std::min(max_rows, m - r0);
      tiles[rows - 1](wc, w.k, x + static_cast<std::ptrdiff_t>(r0) * x_stride, x_stride, cols,
                      acc + static_cast<std::ptrdiff_t>(r0) * acc_stride + c0, acc_stride);
    }
  }
}

constexpr RowsTile kRowsAvx2[] = {&avx2::rows_tile<1>, &avx2::rows_tile<2>};
constexpr RowsTile kRowsVnni[] = {&vnni::rows_tile<1>, &vnni::rows_tile<2>, &vnni::rows_tile<3>,
                                  &vnni::rows_tile<4>};

}  // namespace

const char* to_string(SmallMIsa isa) noexcept {
  switch (isa) {
    case SmallMIsa::avx2:
      return "avx2";
    case SmallMIsa::avx512_vnni:
      return "avx512_vnni";
    case SmallMIsa::none:
      break;
  }
  return "none";
}

SmallMIsa detect_small_m_isa() noexcept {
  const auto onednn = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto has = [onednn](unsigned bits) { return (onednn & bits) == bits; };
  if (has(static_cast<unsigned>(dnnl_cpu_isa_avx512_core_vnni)) &&
      __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw")) {
    return SmallMIsa::avx512_vnni;
  }
  if (has(static_cast<unsigned>(dnnl_cpu_isa_avx2)) && __builtin_cpu_supports("avx2")) {
    return SmallMIsa::avx2;
  }
  return SmallMIsa::none;
}

bool onednn_allows_amx() noexcept {
  const auto amx = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
  return (static_cast<unsigned>(dnnl_get_effective_cpu_isa()) & amx) == amx;
}

int small_m_column_grain(const SmallMWeights& w) noexcept {
  return w.layout == SmallMWeights::Layout::blocked ? w.block : 4;
}

bool small_m_supports(SmallMIsa isa, const SmallMWeights& w) noexcept {
  if (isa == SmallMIsa::none || w.n < 1 || w.k < 1) return false;
  if (w.layout == SmallMWeights::Layout::rows) return true;
  return isa == SmallMIsa::avx512_vnni && (w.block == 16 || w.block == 32 || w.block == 64) &&
         w.k_groups == (w.k + 3) / 4 && w.block_stride >= std::int64_t{4} * w.block * w.k_groups;
}

void small_m_gemm(SmallMIsa isa, const SmallMWeights& w, const std::uint8_t* x, int m,
                  int x_stride, int col_begin, int col_end, std::int32_t* acc,
                  int acc_stride) noexcept {
  if (m < 1 || col_begin >= col_end) return;
  if (w.layout == SmallMWeights::Layout::blocked) {
    switch (w.block) {
      case 16:
        return blocked_columns<1>(w, x, m, x_stride, col_begin, col_end, acc, acc_stride);
      case 32:
        return blocked_columns<2>(w, x, m, x_stride, col_begin, col_end, acc, acc_stride);
      default:
        return blocked_columns<4>(w, x, m, x_stride, col_begin, col_end, acc, acc_stride);
    }
  }
  if (isa == SmallMIsa::avx512_vnni) {
    return rows_columns(kRowsVnni, 4, w, x, m, x_stride, col_begin, col_end, acc, acc_stride);
  }
  rows_columns(kRowsAvx2, 2, w, x, m, x_stride, col_begin, col_end, acc, acc_stride);
}

}  // namespace coinfer
