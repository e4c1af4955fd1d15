#include <cfloat>
#include <string>

#include "coinfer/ops/cuda/bert_kernels.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer::cuda {
namespace {

constexpr int warp_size = 32;
constexpr int warps_per_block = 4;  // one row (token, or (token, head) pair) per warp

__device__ float warp_sum(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

// The row r with offsets[r] <= t < offsets[r + 1].
__device__ int row_of(const std::int32_t* offsets, int rows, int t) {
  int lo = 0, hi = rows;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (offsets[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// One warp normalizes one row of n: y = (s - mean) / sqrt(var + eps) * gamma + beta with
// s = a + b (b may be null), written to y (which may alias a or b: each lane reads and writes
// only its own columns). The CPU's order: sum, mean, squared deviations, then fma per column.
__device__ void layer_norm_warp(const float* a, const float* b, const float* gamma,
                                const float* beta, int n, float eps, float* y, int lane) {
  float sum = 0.0f;
  for (int c = lane; c < n; c += warp_size) {
    const float s = b ? a[c] + b[c] : a[c];
    y[c] = s;
    sum += s;
  }
  const float mean = warp_sum(sum) / static_cast<float>(n);
  float squares = 0.0f;
  for (int c = lane; c < n; c += warp_size) {
    const float d = y[c] - mean;
    squares = fmaf(d, d, squares);
  }
  const float inv_std = 1.0f / sqrtf(warp_sum(squares) / static_cast<float>(n) + eps);
  for (int c = lane; c < n; c += warp_size) y[c] = fmaf((y[c] - mean) * inv_std, gamma[c], beta[c]);
}

__global__ void embed_layer_norm_kernel(const std::int32_t* __restrict__ ids,
                                        const std::int32_t* __restrict__ offsets, int rows,
                                        int tokens, const float* __restrict__ word,
                                        const float* __restrict__ position,
                                        const float* __restrict__ gamma,
                                        const float* __restrict__ beta, int n, float eps,
                                        float* __restrict__ x) {
  const int t = blockIdx.x * warps_per_block + threadIdx.x / warp_size;
  if (t >= tokens) return;  // the whole warp: t is the same for its lanes
  const int p = t - offsets[row_of(offsets, rows, t)];
  layer_norm_warp(word + static_cast<std::size_t>(ids[t]) * n,
                  position + static_cast<std::size_t>(p) * n, gamma, beta, n, eps,
                  x + static_cast<std::size_t>(t) * n, threadIdx.x % warp_size);
}

__global__ void add_layer_norm_kernel(const float* x, const float* residual,
                                      const float* __restrict__ gamma,
                                      const float* __restrict__ beta, int m, int n, float eps,
                                      float* y) {
  const int r = blockIdx.x * warps_per_block + threadIdx.x / warp_size;
  if (r >= m) return;
  const auto offset = static_cast<std::size_t>(r) * n;
  layer_norm_warp(x + offset, residual ? residual + offset : nullptr, gamma, beta, n, eps,
                  y + offset, threadIdx.x % warp_size);
}

constexpr int max_dims_per_lane = 8;  // head_dim <= 256

// One warp per (token, head): the token's query against every key of its row. Scores go
// through the warp's slice of shared memory (max_length floats); lane l holds dimensions
// l, l + 32, ... of the query and of the context it accumulates.
__global__ void attention_kernel(const float* __restrict__ qkv,
                                 const std::int32_t* __restrict__ offsets, int rows, int tokens,
                                 int heads, int head_dim, float scale, int max_length,
                                 float* __restrict__ out) {
  extern __shared__ float shared_scores[];
  const int warp = threadIdx.x / warp_size;
  const int lane = threadIdx.x % warp_size;
  const long long item = static_cast<long long>(blockIdx.x) * warps_per_block + warp;
  if (item >= static_cast<long long>(tokens) * heads) return;  // the whole warp
  const int t = static_cast<int>(item / heads);
  const int h = static_cast<int>(item % heads);
  const int row = row_of(offsets, rows, t);
  const int first = offsets[row];
  const int length = offsets[row + 1] - first;
  const int width = heads * head_dim;
  const auto stride = static_cast<std::size_t>(3) * width;
  const float* q = qkv + static_cast<std::size_t>(t) * stride + static_cast<std::size_t>(h) * head_dim;
  const float* k0 = qkv + static_cast<std::size_t>(first) * stride + width +
                    static_cast<std::size_t>(h) * head_dim;
  const float* v0 = k0 + width;
  float* scores = shared_scores + static_cast<std::size_t>(warp) * max_length;

  float qs[max_dims_per_lane];
#pragma unroll
  for (int i = 0; i < max_dims_per_lane; ++i) {
    const int d = lane + i * warp_size;
    qs[i] = d < head_dim ? q[d] * scale : 0.0f;  // the CPU scales the query first, too
  }
  float max_score = -FLT_MAX;
  for (int j = 0; j < length; ++j) {
    const float* kj = k0 + static_cast<std::size_t>(j) * stride;
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < max_dims_per_lane; ++i) {
      const int d = lane + i * warp_size;
      if (d < head_dim) dot = fmaf(qs[i], kj[d], dot);
    }
    dot = warp_sum(dot);  // every lane holds the score
    if (lane == 0) scores[j] = dot;
    max_score = fmaxf(max_score, dot);
  }
  __syncwarp();
  float sum = 0.0f;
  for (int j = lane; j < length; j += warp_size) {
    const float e = expf(scores[j] - max_score);
    scores[j] = e;
    sum += e;
  }
  const float inv_sum = 1.0f / warp_sum(sum);
  __syncwarp();
  float context[max_dims_per_lane] = {};
  for (int j = 0; j < length; ++j) {
    const float p = scores[j];
    const float* vj = v0 + static_cast<std::size_t>(j) * stride;
#pragma unroll
    for (int i = 0; i < max_dims_per_lane; ++i) {
      const int d = lane + i * warp_size;
      if (d < head_dim) context[i] = fmaf(p, vj[d], context[i]);
    }
  }
  float* o = out + static_cast<std::size_t>(t) * width + static_cast<std::size_t>(h) * head_dim;
#pragma unroll
  for (int i = 0; i < max_dims_per_lane; ++i) {
    const int d = lane + i * warp_size;
    if (d < head_dim) o[d] = context[i] * inv_sum;
  }
}

constexpr int pool_threads = 128;

// One block per row: column sums over the row's tokens, then one scale that takes the mean
// and normalizes (the CPU's pool()).
__global__ void mean_pool_kernel(const float* __restrict__ x,
                                 const std::int32_t* __restrict__ offsets, int n,
                                 float* __restrict__ embedding) {
  __shared__ float partial[pool_threads / warp_size];
  const int r = blockIdx.x;
  const int first = offsets[r];
  const int last = offsets[r + 1];
  float* e = embedding + static_cast<std::size_t>(r) * n;
  float norm2 = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) {
    float s = 0.0f;
    for (int t = first; t < last; ++t) s += x[static_cast<std::size_t>(t) * n + c];
    e[c] = s;
    norm2 = fmaf(s, s, norm2);
  }
  norm2 = warp_sum(norm2);
  if (threadIdx.x % warp_size == 0) partial[threadIdx.x / warp_size] = norm2;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < pool_threads / warp_size; ++w) total += partial[w];
  const float length = static_cast<float>(last - first);
  const float mean_norm = sqrtf(total) / length;
  const float inv = 1.0f / (length * fmaxf(mean_norm, 1e-12f));
  for (int c = threadIdx.x; c < n; c += blockDim.x) e[c] *= inv;
}

unsigned warp_blocks(long long items) {
  return static_cast<unsigned>((items + warps_per_block - 1) / warps_per_block);
}

}  // namespace

Status embed_layer_norm(const std::int32_t* ids, const std::int32_t* offsets, int rows, int tokens,
                        const float* word, const float* position, const float* gamma,
                        const float* beta, int n, float eps, float* x, cudaStream_t stream) {
  if (tokens == 0) return {};
  embed_layer_norm_kernel<<<warp_blocks(tokens), warps_per_block * warp_size, 0, stream>>>(
      ids, offsets, rows, tokens, word, position, gamma, beta, n, eps, x);
  return last_launch_status("embed_layer_norm_kernel");
}

Status add_layer_norm(const float* x, const float* residual, const float* gamma, const float* beta,
                      int m, int n, float eps, float* y, cudaStream_t stream) {
  if (m == 0) return {};
  add_layer_norm_kernel<<<warp_blocks(m), warps_per_block * warp_size, 0, stream>>>(
      x, residual, gamma, beta, m, n, eps, y);
  return last_launch_status("add_layer_norm_kernel");
}

Status self_attention(const float* qkv, const std::int32_t* offsets, int rows, int tokens,
                      int heads, int head_dim, float scale, int max_length, float* out,
                      cudaStream_t stream) {
  if (head_dim < 1 || head_dim > max_dims_per_lane * warp_size) {
    return Status::invalid("self_attention: head_dim " + std::to_string(head_dim) +
                           " outside 1.." + std::to_string(max_dims_per_lane * warp_size));
  }
  if (tokens == 0) return {};
  const std::size_t shared = sizeof(float) * warps_per_block * static_cast<std::size_t>(max_length);
  attention_kernel<<<warp_blocks(static_cast<long long>(tokens) * heads),
                     warps_per_block * warp_size, shared, stream>>>(
      qkv, offsets, rows, tokens, heads, head_dim, scale, max_length, out);
  return last_launch_status("attention_kernel");
}

Status mean_pool_normalize(const float* x, const std::int32_t* offsets, int rows, int n,
                           float* embedding, cudaStream_t stream) {
  if (rows == 0) return {};
  mean_pool_kernel<<<rows, pool_threads, 0, stream>>>(x, offsets, n, embedding);
  return last_launch_status("mean_pool_kernel");
}

}  // namespace coinfer::cuda
