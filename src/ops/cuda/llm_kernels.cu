#include <cuda_fp16.h>

#include <cfloat>
#include <string>

#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/llm_kernels.hpp"

namespace coinfer::cuda {
namespace {

constexpr int warp_size = 32;
constexpr int row_threads = 256;  // one block per row for the norms
constexpr int tile = 32;          // key positions per attention tile (one per lane)
constexpr int max_head_dim = 128;

__device__ float warp_sum(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

__device__ float warp_max(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// The block's sum (op = add) or maximum of v, in every thread; `shared` holds a float per warp.
template <bool kMax>
__device__ float block_reduce(float v, float* shared) {
  const int warp = threadIdx.x / warp_size;
  const int lane = threadIdx.x % warp_size;
  v = kMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // `shared` may still be read from a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / warp_size;
  float r = lane < warps ? shared[lane] : 0.0f;  // 0: the identity of both (maxima of |x|)
  r = kMax ? warp_max(r) : warp_sum(r);
  return r;
}

// y (in `row`, n floats of shared memory) quantized to q with one symmetric scale.
__device__ void quantize_row(const float* row, int n, std::int8_t* q, float* scale, float* reduce) {
  float amax = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) amax = fmaxf(amax, fabsf(row[c]));
  amax = block_reduce<true>(amax, reduce);
  const float s = amax / 127.0f;
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) {
    const float v = fminf(fmaxf(rintf(row[c] * inv), -127.0f), 127.0f);
    q[c] = static_cast<std::int8_t>(v);
  }
  if (threadIdx.x == 0) *scale = s;
}

__global__ void embed_tokens_kernel(const std::int32_t* __restrict__ ids,
                                    const __half* __restrict__ table, int vocab, int n,
                                    float* __restrict__ x) {
  const auto t = static_cast<std::size_t>(blockIdx.x);
  const int id = ids[t];
  const bool known = id >= 0 && id < vocab;
  const __half* row = table + static_cast<std::size_t>(known ? id : 0) * n;
  for (int c = threadIdx.x; c < n; c += blockDim.x) {
    x[t * n + c] = known ? __half2float(row[c]) : 0.0f;
  }
}

__global__ void gather_rows_kernel(const float* __restrict__ x,
                                   const std::int32_t* __restrict__ index, int n,
                                   float* __restrict__ out) {
  const auto i = static_cast<std::size_t>(blockIdx.x);
  const float* from = x + static_cast<std::size_t>(index[i]) * n;
  for (int c = threadIdx.x; c < n; c += blockDim.x) out[i * n + c] = from[c];
}

__global__ void rms_norm_quantize_kernel(const float* __restrict__ x,
                                         const float* __restrict__ weight, int n, float eps,
                                         std::int8_t* __restrict__ q, float* __restrict__ scale) {
  extern __shared__ float row[];  // n floats
  __shared__ float reduce[row_threads / warp_size];
  const auto r = static_cast<std::size_t>(blockIdx.x);
  const float* xr = x + r * n;
  float squares = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) squares = fmaf(xr[c], xr[c], squares);
  const float inv_rms = rsqrtf(block_reduce<false>(squares, reduce) / static_cast<float>(n) + eps);
  for (int c = threadIdx.x; c < n; c += blockDim.x) row[c] = xr[c] * inv_rms * weight[c];
  __syncthreads();
  quantize_row(row, n, q + r * n, scale + r, reduce);
}

__global__ void silu_mul_quantize_kernel(const float* __restrict__ gate_up, int f,
                                         std::int8_t* __restrict__ q, float* __restrict__ scale) {
  extern __shared__ float row[];  // f floats
  __shared__ float reduce[row_threads / warp_size];
  const auto r = static_cast<std::size_t>(blockIdx.x);
  const float* gate = gate_up + r * 2 * f;
  const float* up = gate + f;
  for (int c = threadIdx.x; c < f; c += blockDim.x) {
    const float g = gate[c];
    row[c] = g / (1.0f + expf(-g)) * up[c];
  }
  __syncthreads();
  quantize_row(row, f, q + r * f, scale + r, reduce);
}

// Where position `offset` of `block` starts for one KV head in a layer's cache, laid out
// [block][kv_head][slot][head_dim] as the CPU runner's: a head's keys of a block are contiguous.
__device__ std::size_t kv_offset(int block, int kv_head, int offset, int kv_heads, int block_size,
                                 int head_dim) {
  return ((static_cast<std::size_t>(block) * kv_heads + kv_head) * block_size + offset) * head_dim;
}

// One block per token, one thread per rotated pair (of every Q and K head), then the K and V
// copies to the cache.
__global__ void rope_write_kv_kernel(float* __restrict__ qkv,
                                     const std::int32_t* __restrict__ positions,
                                     const std::int32_t* __restrict__ slots, int heads,
                                     int kv_heads, int head_dim, int block_size,
                                     const float* __restrict__ cos_table,
                                     const float* __restrict__ sin_table, bool neox,
                                     __half* __restrict__ k_cache, __half* __restrict__ v_cache) {
  const int t = blockIdx.x;
  const int half = head_dim / 2;
  const int width = (heads + 2 * kv_heads) * head_dim;
  float* token = qkv + static_cast<std::size_t>(t) * width;
  const int position = positions[t];
  const float* cs = cos_table + static_cast<std::size_t>(position) * half;
  const float* sn = sin_table + static_cast<std::size_t>(position) * half;
  const int pairs = (heads + kv_heads) * half;  // Q's heads then K's: contiguous in the token
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int head = p / half;
    const int i = p % half;
    float* v = token + static_cast<std::size_t>(head) * head_dim;
    const int a = neox ? i : 2 * i;
    const int b = neox ? i + half : 2 * i + 1;
    const float x0 = v[a], x1 = v[b];
    v[a] = x0 * cs[i] - x1 * sn[i];
    v[b] = x0 * sn[i] + x1 * cs[i];
  }
  const int slot = slots[t];
  if (slot < 0) return;
  __syncthreads();  // K rotated by every thread before it is copied
  const int kv_width = kv_heads * head_dim;
  const float* k = token + static_cast<std::size_t>(heads) * head_dim;
  const float* v = k + kv_width;
  const int block = slot / block_size;
  const int offset = slot % block_size;
  for (int c = threadIdx.x; c < kv_width; c += blockDim.x) {
    const std::size_t at =
        kv_offset(block, c / head_dim, offset, kv_heads, block_size, head_dim) + c % head_dim;
    k_cache[at] = __float2half_rn(k[c]);
    v_cache[at] = __float2half_rn(v[c]);
  }
}

__device__ int row_of(const std::int32_t* query_start, int rows, int t) {
  int lo = 0, hi = rows;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (query_start[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Block (token, KV head): warp w is query head kv_head * group + w. Per tile of 32 positions
// the block stages the keys and values in shared memory as FP32; lane j scores position
// tile + j for its warp's head, and the warp folds the tile into its running max, sum and
// context (lane holds dimensions lane, lane + 32, ...).
__global__ void paged_attention_kernel(
    const float* __restrict__ q, int qkv_stride, const __half* __restrict__ k_cache,
    const __half* __restrict__ v_cache, const std::int32_t* __restrict__ positions,
    const std::int32_t* __restrict__ query_start, const std::int32_t* __restrict__ context_lens,
    const std::int32_t* __restrict__ block_tables, int table_width, int rows, int heads,
    int kv_heads, int head_dim, int block_size, float scale, float* __restrict__ out) {
  __shared__ float keys[tile][max_head_dim + 1];  // +1: lanes read a column without conflicts
  __shared__ float values[tile][max_head_dim];
  const int t = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int group = heads / kv_heads;
  const int warp = threadIdx.x / warp_size;
  const int lane = threadIdx.x % warp_size;
  const int head = kv_head * group + warp;
  const int dims = head_dim / warp_size;  // per lane, at most 4
  const int row = row_of(query_start, rows, t);
  const int length = context_lens[row] > 0 ? positions[t] + 1 : 0;
  const std::int32_t* table = block_tables + static_cast<std::size_t>(row) * table_width;

  float qv[max_head_dim / warp_size];
  const float* qh =
      q + static_cast<std::size_t>(t) * qkv_stride + static_cast<std::size_t>(head) * head_dim;
#pragma unroll
  for (int i = 0; i < max_head_dim / warp_size; ++i)
    qv[i] = i < dims ? qh[lane + i * warp_size] * scale : 0.0f;

  float running_max = -FLT_MAX, running_sum = 0.0f;
  float context[max_head_dim / warp_size] = {};
  for (int start = 0; start < length; start += tile) {
    const int count = min(tile, length - start);
    __syncthreads();  // the previous tile is no longer read
    for (int e = threadIdx.x; e < count * head_dim; e += blockDim.x) {
      const int j = e / head_dim;
      const int d = e % head_dim;
      const int p = start + j;
      const std::size_t at = kv_offset(table[p / block_size], kv_head, p % block_size, kv_heads,
                                       block_size, head_dim) +
                             d;
      keys[j][d] = __half2float(k_cache[at]);
      values[j][d] = __half2float(v_cache[at]);
    }
    __syncthreads();
    // Lane j's score: q . key j (the query's dimensions are spread over the lanes, so each
    // partial product is summed across the warp, one key at a time).
    float score = -FLT_MAX;
    for (int j = 0; j < count; ++j) {
      float partial = 0.0f;
#pragma unroll
      for (int i = 0; i < max_head_dim / warp_size; ++i) {
        if (i < dims) partial = fmaf(qv[i], keys[j][lane + i * warp_size], partial);
      }
      const float s = warp_sum(partial);
      if (lane == j) score = s;
    }
    const float tile_max = warp_max(score);
    const float new_max = fmaxf(running_max, tile_max);
    const float p = lane < count ? expf(score - new_max) : 0.0f;
    const float correction = expf(running_max - new_max);
    running_sum = running_sum * correction + warp_sum(p);
#pragma unroll
    for (int i = 0; i < max_head_dim / warp_size; ++i) context[i] *= correction;
    for (int j = 0; j < count; ++j) {
      const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
      for (int i = 0; i < max_head_dim / warp_size; ++i) {
        if (i < dims) context[i] = fmaf(pj, values[j][lane + i * warp_size], context[i]);
      }
    }
    running_max = new_max;
  }
  float* o = out + static_cast<std::size_t>(t) * heads * head_dim +
             static_cast<std::size_t>(head) * head_dim;
  const float inv = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
#pragma unroll
  for (int i = 0; i < max_head_dim / warp_size; ++i) {
    if (i < dims) o[lane + i * warp_size] = context[i] * inv;
  }
}

// Block (8 query tokens of one row, KV head), for steps with prompt chunks: warp w is query
// head kv_head * group + w and keeps the online softmax of each of the tile's tokens. Per tile
// of 32 positions the block stages the keys and values in shared memory once for all of them;
// lane j scores position tile + j against a token's query (staged in shared memory, read as a
// broadcast), positions past the token's own masked; the warp folds the tile into the token's
// running max, sum and context (lane holds dimensions lane, lane + 32, ...).
constexpr int query_tile = 8;

__global__ void prefill_attention_kernel(
    const float* __restrict__ q, int qkv_stride, const __half* __restrict__ k_cache,
    const __half* __restrict__ v_cache, const std::int32_t* __restrict__ positions,
    const std::int32_t* __restrict__ query_start, const std::int32_t* __restrict__ context_lens,
    const std::int32_t* __restrict__ block_tables, int table_width, int tiles_per_row,
    int heads, int kv_heads, int head_dim, int block_size, float scale, float* __restrict__ out) {
  extern __shared__ float staged[];
  float* keys = staged;                            // [tile][head_dim + 1]
  float* values = keys + tile * (head_dim + 1);    // [tile][head_dim]
  float* queries = values + tile * head_dim;       // [group][query_tile][head_dim]
  const int row = blockIdx.x / tiles_per_row;
  const int first = query_start[row] + (blockIdx.x % tiles_per_row) * query_tile;
  const int row_end = query_start[row + 1];
  if (first >= row_end) return;  // the whole block: a row shorter than the longest
  const int count = min(query_tile, row_end - first);
  const int kv_head = blockIdx.y;
  const int group = heads / kv_heads;
  const int warp = threadIdx.x / warp_size;
  const int lane = threadIdx.x % warp_size;
  const int head = kv_head * group + warp;
  const int dims = head_dim / warp_size;  // per lane, at most 4
  const bool padding = context_lens[row] == 0;
  const std::int32_t* table = block_tables + static_cast<std::size_t>(row) * table_width;

  float* mine = queries + static_cast<std::size_t>(warp) * query_tile * head_dim;
  for (int e = lane; e < count * head_dim; e += warp_size) {
    const int i = e / head_dim, d = e % head_dim;
    mine[e] = q[static_cast<std::size_t>(first + i) * qkv_stride +
                static_cast<std::size_t>(head) * head_dim + d] *
              scale;
  }
  int position[query_tile];
  float running_max[query_tile], running_sum[query_tile];
  float context[query_tile][max_head_dim / warp_size];
#pragma unroll
  for (int i = 0; i < query_tile; ++i) {
    position[i] = i < count ? positions[first + i] : -1;
    running_max[i] = -FLT_MAX;
    running_sum[i] = 0.0f;
#pragma unroll
    for (int k = 0; k < max_head_dim / warp_size; ++k) context[i][k] = 0.0f;
  }
  // Positions are consecutive within a row: the tile's last token sees the most.
  const int length = padding ? 0 : positions[first + count - 1] + 1;
  for (int start = 0; start < length; start += tile) {
    const int n = min(tile, length - start);
    __syncthreads();  // the previous tile (and, first, the queries) no longer / now readable
    for (int e = threadIdx.x; e < n * head_dim; e += blockDim.x) {
      const int j = e / head_dim;
      const int d = e % head_dim;
      const int p = start + j;
      const std::size_t at = kv_offset(table[p / block_size], kv_head, p % block_size, kv_heads,
                                       block_size, head_dim) +
                             d;
      keys[j * (head_dim + 1) + d] = __half2float(k_cache[at]);
      values[j * head_dim + d] = __half2float(v_cache[at]);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < query_tile; ++i) {
      if (position[i] < start) continue;  // nothing here for this token (warp-uniform)
      const bool seen = lane < n && start + lane <= position[i];
      float score = -FLT_MAX;
      if (seen) {
        const float* key = keys + lane * (head_dim + 1);
        const float* query = mine + i * head_dim;
        float dot = 0.0f;
        for (int d = 0; d < head_dim; ++d) dot = fmaf(query[d], key[d], dot);
        score = dot;
      }
      const float new_max = fmaxf(running_max[i], warp_max(score));
      const float p = seen ? expf(score - new_max) : 0.0f;
      const float correction = expf(running_max[i] - new_max);
      running_sum[i] = running_sum[i] * correction + warp_sum(p);
#pragma unroll
      for (int k = 0; k < max_head_dim / warp_size; ++k) context[i][k] *= correction;
      for (int j = 0; j < n; ++j) {
        const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
        for (int k = 0; k < max_head_dim / warp_size; ++k) {
          if (k < dims) context[i][k] = fmaf(pj, values[j * head_dim + lane + k * warp_size], context[i][k]);
        }
      }
      running_max[i] = new_max;
    }
  }
#pragma unroll
  for (int i = 0; i < query_tile; ++i) {
    if (i >= count) break;
    float* o = out + static_cast<std::size_t>(first + i) * heads * head_dim +
               static_cast<std::size_t>(head) * head_dim;
    const float inv = running_sum[i] > 0.0f ? 1.0f / running_sum[i] : 0.0f;
#pragma unroll
    for (int k = 0; k < max_head_dim / warp_size; ++k) {
      if (k < dims) o[lane + k * warp_size] = context[i][k] * inv;
    }
  }
}

constexpr int sample_threads = 1024;
constexpr float greedy_temperature = 1e-5f;  // generation::Sampler's kGreedyTemperature

// Floats as unsigned keys in the same order (negative values below positive ones).
__device__ unsigned order_key(float x) {
  const unsigned u = __float_as_uint(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Block-wide reductions over sample_threads threads; `shared` has a slot per warp.
__device__ double block_sum(double v, double* shared) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();
  if (threadIdx.x % warp_size == 0) shared[threadIdx.x / warp_size] = v;
  __syncthreads();
  double r =
      threadIdx.x % warp_size < sample_threads / warp_size ? shared[threadIdx.x % warp_size] : 0.0;
  for (int offset = warp_size / 2; offset > 0; offset /= 2)
    r += __shfl_xor_sync(0xffffffffu, r, offset);
  return r;
}

// The row's largest value and its first index, in every thread.
__device__ void block_argmax(float& value, int& index, float* values, int* indices) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, value, offset);
    const int i = __shfl_xor_sync(0xffffffffu, index, offset);
    if (v > value || (v == value && i < index)) {
      value = v;
      index = i;
    }
  }
  __syncthreads();
  if (threadIdx.x % warp_size == 0) {
    values[threadIdx.x / warp_size] = value;
    indices[threadIdx.x / warp_size] = index;
  }
  __syncthreads();
  value = values[threadIdx.x % warp_size];
  index = indices[threadIdx.x % warp_size];
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, value, offset);
    const int i = __shfl_xor_sync(0xffffffffu, index, offset);
    if (v > value || (v == value && i < index)) {
      value = v;
      index = i;
    }
  }
}

__global__ void __launch_bounds__(sample_threads)
    sample_kernel(const float* __restrict__ logits, int vocab,
                  const RowSampling* __restrict__ params, float* __restrict__ scratch,
                  std::int32_t* __restrict__ tokens) {
  __shared__ double sums[sample_threads / warp_size];
  __shared__ float values[sample_threads / warp_size];
  __shared__ int indices[sample_threads / warp_size];
  __shared__ double prefix[sample_threads];
  const auto r = static_cast<std::size_t>(blockIdx.x);
  const float* row = logits + r * vocab;
  float* w = scratch + r * vocab;
  const RowSampling p = params[r];

  // The first argmax: each thread's own first, then the block's.
  float best = -INFINITY;
  int best_index = vocab;
  for (int i = threadIdx.x; i < vocab; i += sample_threads) {
    if (best_index == vocab || row[i] > best) {
      best = row[i];
      best_index = i;
    }
  }
  block_argmax(best, best_index, values, indices);
  if (p.temperature < greedy_temperature || p.top_k == 1) {
    if (threadIdx.x == 0) tokens[r] = best_index;
    return;
  }

  // top-k: the key of the k-th largest logit, by bisection on the keys.
  unsigned floor_key = 0;
  if (p.top_k > 0 && p.top_k < vocab) {
    unsigned lo = 0, hi = 0xffffffffu;
    while (lo < hi) {
      const unsigned mid = lo + (hi - lo) / 2 + 1;
      double count = 0;
      for (int i = threadIdx.x; i < vocab; i += sample_threads) count += order_key(row[i]) >= mid;
      if (block_sum(count, sums) >= p.top_k) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    floor_key = lo;
  }
  // Weights relative to the likeliest (which weighs 1), min-p applied.
  double mass = 0;
  for (int i = threadIdx.x; i < vocab; i += sample_threads) {
    float weight = 0.0f;
    if (order_key(row[i]) >= floor_key) {
      weight = expf((row[i] - best) / p.temperature);
      if (!(weight > 0.0f && weight >= p.min_p)) weight = 0.0f;
    }
    w[i] = weight;
    mass += weight;
  }
  mass = block_sum(mass, sums);
  // top-p: the largest weight threshold whose kept mass still reaches top_p of it.
  if (p.top_p < 1.0f) {
    const double wanted = static_cast<double>(p.top_p) * mass;
    unsigned lo = 0, hi = __float_as_uint(1.0f);  // weights are in [0, 1]: their bits order them
    while (lo < hi) {
      const unsigned mid = lo + (hi - lo) / 2 + 1;
      const float threshold = __uint_as_float(mid);
      double kept = 0;
      for (int i = threadIdx.x; i < vocab; i += sample_threads) {
        if (w[i] >= threshold) kept += w[i];
      }
      if (block_sum(kept, sums) >= wanted) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const float threshold = __uint_as_float(lo);
    mass = 0;
    for (int i = threadIdx.x; i < vocab; i += sample_threads) {
      if (w[i] < threshold) w[i] = 0.0f;
      mass += w[i];
    }
    mass = block_sum(mass, sums);
  }

  // The draw: each thread sums a contiguous span of the vocabulary, a scan orders the spans,
  // and the thread whose span holds uniform * mass walks it.
  const int span = (vocab + sample_threads - 1) / sample_threads;
  const int first = min(vocab, static_cast<int>(threadIdx.x) * span);
  const int last = min(vocab, first + span);
  double own = 0;
  for (int i = first; i < last; ++i) own += w[i];
  prefix[threadIdx.x] = own;
  __syncthreads();
  for (int offset = 1; offset < sample_threads; offset *= 2) {  // inclusive scan
    const double add = threadIdx.x >= offset ? prefix[threadIdx.x - offset] : 0.0;
    __syncthreads();
    prefix[threadIdx.x] += add;
    __syncthreads();
  }
  const double target = static_cast<double>(p.uniform) * mass;
  const double before = prefix[threadIdx.x] - own;
  // The last token with weight, for a target that rounding put at the very top (the largest
  // index as a float: exact below 2^24).
  float last_value = -INFINITY;
  int last_index = vocab;
  for (int i = first; i < last; ++i) {
    if (w[i] > 0.0f) {
      last_value = static_cast<float>(i);
      last_index = i;
    }
  }
  block_argmax(last_value, last_index, values, indices);
  if (threadIdx.x == 0) tokens[r] = last_index;
  __syncthreads();
  if (own > 0 && before <= target && target < before + own) {
    double running = before;
    for (int i = first; i < last; ++i) {
      running += w[i];
      if (target < running && w[i] > 0.0f) {
        tokens[r] = i;
        break;
      }
    }
  }
}

}  // namespace

Status embed_tokens(const std::int32_t* ids, int tokens, const std::uint16_t* table, int vocab,
                    int n, float* x, cudaStream_t stream) {
  if (tokens == 0) return {};
  embed_tokens_kernel<<<tokens, row_threads, 0, stream>>>(
      ids, reinterpret_cast<const __half*>(table), vocab, n, x);
  return last_launch_status("embed_tokens_kernel");
}

Status gather_rows(const float* x, const std::int32_t* index, int count, int n, float* out,
                   cudaStream_t stream) {
  if (count == 0) return {};
  gather_rows_kernel<<<count, row_threads, 0, stream>>>(x, index, n, out);
  return last_launch_status("gather_rows_kernel");
}

Status rms_norm_quantize(const float* x, const float* weight, int m, int n, float eps,
                         std::int8_t* q, float* scale, cudaStream_t stream) {
  if (m == 0) return {};
  rms_norm_quantize_kernel<<<m, row_threads, sizeof(float) * n, stream>>>(x, weight, n, eps, q,
                                                                          scale);
  return last_launch_status("rms_norm_quantize_kernel");
}

Status silu_mul_quantize(const float* gate_up, int m, int f, std::int8_t* q, float* scale,
                         cudaStream_t stream) {
  if (m == 0) return {};
  silu_mul_quantize_kernel<<<m, row_threads, sizeof(float) * f, stream>>>(gate_up, f, q, scale);
  return last_launch_status("silu_mul_quantize_kernel");
}

Status rope_write_kv(float* qkv, const std::int32_t* positions, const std::int32_t* slots,
                     int tokens, int heads, int kv_heads, int head_dim, int block_size,
                     const float* cos_table, const float* sin_table, bool neox,
                     std::uint16_t* k_cache, std::uint16_t* v_cache, cudaStream_t stream) {
  if (tokens == 0) return {};
  if (head_dim % 2 != 0) return Status::invalid("rope_write_kv: odd head_dim");
  rope_write_kv_kernel<<<tokens, 128, 0, stream>>>(
      qkv, positions, slots, heads, kv_heads, head_dim, block_size, cos_table, sin_table, neox,
      reinterpret_cast<__half*>(k_cache), reinterpret_cast<__half*>(v_cache));
  return last_launch_status("rope_write_kv_kernel");
}

Status paged_attention(const float* q, int qkv_stride, const std::uint16_t* k_cache,
                       const std::uint16_t* v_cache, const std::int32_t* positions,
                       const std::int32_t* query_start, const std::int32_t* context_lens,
                       const std::int32_t* block_tables, int table_width, int rows, int tokens,
                       int heads, int kv_heads, int head_dim, int block_size, float scale,
                       float* out, cudaStream_t stream) {
  if (tokens == 0) return {};
  if (head_dim % warp_size != 0 || head_dim > max_head_dim) {
    return Status::invalid("paged_attention: head_dim " + std::to_string(head_dim) +
                           " is not a multiple of 32 up to 128");
  }
  if (kv_heads < 1 || heads % kv_heads != 0 || heads / kv_heads > warp_size) {
    return Status::invalid("paged_attention: " + std::to_string(heads) + " query heads over " +
                           std::to_string(kv_heads) + " KV heads");
  }
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>(kv_heads));
  const int threads = heads / kv_heads * warp_size;
  paged_attention_kernel<<<grid, threads, 0, stream>>>(
      q, qkv_stride, reinterpret_cast<const __half*>(k_cache),
      reinterpret_cast<const __half*>(v_cache), positions, query_start, context_lens, block_tables,
      table_width, rows, heads, kv_heads, head_dim, block_size, scale, out);
  return last_launch_status("paged_attention_kernel");
}

Status prefill_attention(const float* q, int qkv_stride, const std::uint16_t* k_cache,
                         const std::uint16_t* v_cache, const std::int32_t* positions,
                         const std::int32_t* query_start, const std::int32_t* context_lens,
                         const std::int32_t* block_tables, int table_width, int rows, int tokens,
                         int max_query_tokens, int heads, int kv_heads, int head_dim,
                         int block_size, float scale, float* out, cudaStream_t stream) {
  if (tokens == 0) return {};
  if (head_dim % warp_size != 0 || head_dim > max_head_dim) {
    return Status::invalid("prefill_attention: head_dim " + std::to_string(head_dim) +
                           " is not a multiple of 32 up to 128");
  }
  if (kv_heads < 1 || heads % kv_heads != 0 || heads / kv_heads > warp_size) {
    return Status::invalid("prefill_attention: " + std::to_string(heads) +
                           " query heads over " + std::to_string(kv_heads) + " KV heads");
  }
  if (max_query_tokens < 1 || max_query_tokens > tokens) {
    return Status::invalid("prefill_attention: the longest row's " +
                           std::to_string(max_query_tokens) + " tokens of " +
                           std::to_string(tokens));
  }
  const std::size_t shared =
      sizeof(float) * (static_cast<std::size_t>(tile) * (2 * head_dim + 1) +
                       static_cast<std::size_t>(heads / kv_heads) * query_tile * head_dim);
  if (shared > 48 * 1024 || max_query_tokens == 1) {  // decodes only, or a group too large
    return paged_attention(q, qkv_stride, k_cache, v_cache, positions, query_start,
                           context_lens, block_tables, table_width, rows, tokens, heads,
                           kv_heads, head_dim, block_size, scale, out, stream);
  }
  const int tiles_per_row = (max_query_tokens + query_tile - 1) / query_tile;
  const dim3 grid(static_cast<unsigned>(rows) * static_cast<unsigned>(tiles_per_row),
                  static_cast<unsigned>(kv_heads));
  const int threads = heads / kv_heads * warp_size;
  prefill_attention_kernel<<<grid, threads, shared, stream>>>(
      q, qkv_stride, reinterpret_cast<const __half*>(k_cache),
      reinterpret_cast<const __half*>(v_cache), positions, query_start, context_lens, block_tables,
      table_width, tiles_per_row, heads, kv_heads, head_dim, block_size, scale, out);
  return last_launch_status("prefill_attention_kernel");
}

Status sample_rows(const float* logits, int rows, int vocab, const RowSampling* params,
                   float* scratch, std::int32_t* tokens, cudaStream_t stream) {
  if (rows == 0) return {};
  if (vocab < 1) return Status::invalid("sample_rows: empty vocabulary");
  sample_kernel<<<rows, sample_threads, 0, stream>>>(logits, vocab, params, scratch, tokens);
  return last_launch_status("sample_kernel");
}

}  // namespace coinfer::cuda
