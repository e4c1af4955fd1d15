#include "coinfer/ops/attention.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/vector_exp.hpp"

// Without AVX (a build for baseline x86-64) GCC warns that passing 32-byte vectors by value
// changes the ABI; the helpers that do are internal to this file, so no ABI is at stake.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace coinfer {
namespace {

// The kernels below use GCC/Clang vector extensions: eight floats, one AVX2 register under
// -march=x86-64-v3 (two SSE registers otherwise), so the code is explicit about its blocking
// without intrinsics. a * b + c contracts to an FMA where the target has one.
using simd::v8f;
constexpr int lanes = 8;

v8f load8(const float* p) noexcept {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store8(float* p, v8f v) noexcept {
  std::memcpy(p, &v, sizeof v);
}
v8f splat(float x) noexcept {
  return v8f{} + x;
}

float max_lanes(v8f v) noexcept {
  float m = v[0];
  for (int l = 1; l < lanes; ++l) m = std::max(m, v[l]);
  return m;
}
float sum_lanes(v8f v) noexcept {
  float s = 0.0f;
  for (int l = 0; l < lanes; ++l) s += v[l];
  return s;
}

using simd::exp8;

constexpr int queries_per_block = 4;  // query rows whose scores share each load of K^T

// One row, one head. kDim > 0 fixes head_dim at compile time (the context then lives in
// registers); kDim == 0 reads it from `dim`. q, k, v point at the row's first token's head
// slice; consecutive tokens are `stride` floats apart (in qkv) or `out_stride` apart (in out).
// Scratch: kt FP32 [dim, padded] (K^T, zero padded) and scores FP32 [queries_per_block, padded],
// padded = length rounded up to lanes.
template <int kDim>
void attend(const float* q, const float* k, const float* v, std::size_t stride, int length,
            int dim_runtime, float scale, float* kt, float* scores, float* out,
            std::size_t out_stride) noexcept {
  const int dim = kDim > 0 ? kDim : dim_runtime;
  const int blocks = dim / lanes;
  const int padded = (length + lanes - 1) / lanes * lanes;

  for (int j = 0; j < length; ++j) {
    const float* kj = k + static_cast<std::size_t>(j) * stride;
    for (int d = 0; d < dim; ++d) kt[static_cast<std::size_t>(d) * padded + j] = kj[d];
  }
  for (int d = 0; d < dim; ++d) {
    std::fill(kt + static_cast<std::size_t>(d) * padded + length,
              kt + static_cast<std::size_t>(d + 1) * padded, 0.0f);
  }

  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  alignas(32) float qs[queries_per_block][AttentionShape::max_head_dim];
  for (int i0 = 0; i0 < length; i0 += queries_per_block) {
    const int count = std::min(queries_per_block, length - i0);
    for (int b = 0; b < queries_per_block; ++b) {
      if (b < count) {
        const float* qi = q + static_cast<std::size_t>(i0 + b) * stride;
        for (int d = 0; d < dim; ++d) qs[b][d] = qi[d] * scale;
      } else {
        std::fill(qs[b], qs[b] + dim, 0.0f);
      }
    }

    // scores[b][j] = q_{i0+b} . k_j for every j (padding columns give 0, masked below). Two
    // key blocks at a time: eight independent FMA chains cover the FMA latency.
    int j = 0;
    for (; j + 2 * lanes <= padded; j += 2 * lanes) {
      v8f s0{}, s1{}, s2{}, s3{}, t0{}, t1{}, t2{}, t3{};
      for (int d = 0; d < dim; ++d) {
        const float* kd = kt + static_cast<std::size_t>(d) * padded + j;
        const v8f ka = load8(kd);
        const v8f kb = load8(kd + lanes);
        s0 += qs[0][d] * ka;
        t0 += qs[0][d] * kb;
        s1 += qs[1][d] * ka;
        t1 += qs[1][d] * kb;
        s2 += qs[2][d] * ka;
        t2 += qs[2][d] * kb;
        s3 += qs[3][d] * ka;
        t3 += qs[3][d] * kb;
      }
      store8(scores + j, s0);
      store8(scores + j + lanes, t0);
      store8(scores + padded + j, s1);
      store8(scores + padded + j + lanes, t1);
      store8(scores + 2 * padded + j, s2);
      store8(scores + 2 * padded + j + lanes, t2);
      store8(scores + 3 * padded + j, s3);
      store8(scores + 3 * padded + j + lanes, t3);
    }
    if (j < padded) {
      v8f s0{}, s1{}, s2{}, s3{};
      for (int d = 0; d < dim; ++d) {
        const v8f kd = load8(kt + static_cast<std::size_t>(d) * padded + j);
        s0 += qs[0][d] * kd;
        s1 += qs[1][d] * kd;
        s2 += qs[2][d] * kd;
        s3 += qs[3][d] * kd;
      }
      store8(scores + j, s0);
      store8(scores + padded + j, s1);
      store8(scores + 2 * padded + j, s2);
      store8(scores + 3 * padded + j, s3);
    }

    // Softmax numerators in place; 1 / sum per query.
    float inv_sum[queries_per_block];
    for (int b = 0; b < count; ++b) {
      float* s = scores + static_cast<std::size_t>(b) * padded;
      std::fill(s + length, s + padded, minus_inf);
      v8f max = splat(minus_inf);
      for (int c = 0; c < padded; c += lanes) {
        const v8f sc = load8(s + c);
        max = sc > max ? sc : max;
      }
      const v8f row_max = splat(max_lanes(max));
      v8f sum{};
      for (int c = 0; c < padded; c += lanes) {
        const v8f e = exp8(load8(s + c) - row_max);
        store8(s + c, e);
        sum += e;
      }
      inv_sum[b] = 1.0f / sum_lanes(sum);
    }

    // out_i = sum_j p_ij v_j / sum_i. For head_dim 32, two queries at a time (eight chains,
    // each V row loaded once for both); wider heads have enough chains in one query.
    int b = 0;
    if constexpr (kDim == 32) {
      for (; b + 1 < count; b += 2) {
        const float* p0 = scores + static_cast<std::size_t>(b) * padded;
        const float* p1 = p0 + padded;
        v8f a0{}, a1{}, a2{}, a3{}, c0{}, c1{}, c2{}, c3{};
        for (int jj = 0; jj < length; ++jj) {
          const float* vj = v + static_cast<std::size_t>(jj) * stride;
          const v8f v0 = load8(vj), v1 = load8(vj + 8), v2 = load8(vj + 16), v3 = load8(vj + 24);
          a0 += p0[jj] * v0;
          a1 += p0[jj] * v1;
          a2 += p0[jj] * v2;
          a3 += p0[jj] * v3;
          c0 += p1[jj] * v0;
          c1 += p1[jj] * v1;
          c2 += p1[jj] * v2;
          c3 += p1[jj] * v3;
        }
        float* o0 = out + static_cast<std::size_t>(i0 + b) * out_stride;
        float* o1 = o0 + out_stride;
        store8(o0, a0 * inv_sum[b]);
        store8(o0 + 8, a1 * inv_sum[b]);
        store8(o0 + 16, a2 * inv_sum[b]);
        store8(o0 + 24, a3 * inv_sum[b]);
        store8(o1, c0 * inv_sum[b + 1]);
        store8(o1 + 8, c1 * inv_sum[b + 1]);
        store8(o1 + 16, c2 * inv_sum[b + 1]);
        store8(o1 + 24, c3 * inv_sum[b + 1]);
      }
    }
    for (; b < count; ++b) {
      const float* p = scores + static_cast<std::size_t>(b) * padded;
      v8f context[AttentionShape::max_head_dim / lanes] = {};
      for (int jj = 0; jj < length; ++jj) {
        const float* vj = v + static_cast<std::size_t>(jj) * stride;
        for (int c = 0; c < blocks; ++c) context[c] += p[jj] * load8(vj + c * lanes);
      }
      float* o = out + static_cast<std::size_t>(i0 + b) * out_stride;
      for (int c = 0; c < blocks; ++c) store8(o + c * lanes, context[c] * inv_sum[b]);
    }
  }
}

}  // namespace

std::size_t attention_scratch_floats(AttentionShape shape, int max_length) noexcept {
  const auto padded = static_cast<std::size_t>((max_length + lanes - 1) / lanes * lanes);
  return padded * (static_cast<std::size_t>(shape.head_dim) + queries_per_block);
}

void self_attention(const float* qkv, std::span<const std::int64_t> offsets, AttentionShape shape,
                    float scale, std::span<float> scratch, float* out) noexcept {
  assert(shape.head_dim % lanes == 0 && shape.head_dim <= AttentionShape::max_head_dim);
  const auto width = static_cast<std::size_t>(shape.heads) * shape.head_dim;
  const std::size_t stride = 3 * width;
  const auto rows = static_cast<std::int64_t>(offsets.size()) - 1;
  std::int64_t longest = 1;
  for (std::int64_t r = 0; r < rows; ++r) longest = std::max(longest, offsets[r + 1] - offsets[r]);
  const std::size_t per_thread = attention_scratch_floats(shape, static_cast<int>(longest));
  const auto threads = static_cast<int>(std::min<std::size_t>(scratch.size() / per_thread, 1024));
  assert(threads >= 1);
  // One work item per (row, head); a few per chunk keep the hand-out cheap against rows of
  // ~40 tokens, and taking chunks in turn balances rows of different lengths.
  parallel_for(rows * shape.heads, 4, threads, [&](int thread, std::int64_t begin, std::int64_t end) {
    float* kt = scratch.data() + static_cast<std::size_t>(thread) * per_thread;
    for (std::int64_t item = begin; item < end; ++item) {
      const auto r = static_cast<std::size_t>(item / shape.heads);
      const int h = static_cast<int>(item % shape.heads);
      const auto first = static_cast<std::size_t>(offsets[r]);
      const auto length = static_cast<int>(offsets[r + 1] - offsets[r]);
      const int padded = (length + lanes - 1) / lanes * lanes;
      float* scores = kt + static_cast<std::size_t>(padded) * shape.head_dim;
      const std::size_t column = static_cast<std::size_t>(h) * shape.head_dim;
      const float* q = qkv + first * stride + column;
      const float* k = q + width;
      const float* v = k + width;
      float* o = out + first * width + column;
      switch (shape.head_dim) {
        case 32:
          attend<32>(q, k, v, stride, length, 32, scale, kt, scores, o, width);
          break;
        case 64:
          attend<64>(q, k, v, stride, length, 64, scale, kt, scores, o, width);
          break;
        default:
          attend<0>(q, k, v, stride, length, shape.head_dim, scale, kt, scores, o, width);
          break;
      }
    }
  });
}

}  // namespace coinfer
