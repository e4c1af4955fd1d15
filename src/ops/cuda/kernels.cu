#include <cuda_fp16.h>

#include <cfloat>
#include <climits>

#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/kernels.hpp"

namespace coinfer::cuda {
namespace {

constexpr int warp_size = 32;

__device__ float warp_max(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

__device__ float warp_sum(float v) {
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

// One block of quantize_threads per row: the row's max|x| by a block reduction, then one pass
// that writes q. Rows here are short (64..4096 elements), so one block each keeps every
// multiprocessor busy once m reaches a few hundred; for m = 1 the kernel is launch-bound anyway.
constexpr int quantize_threads = 256;

__global__ void quantize_rows_kernel(const float* __restrict__ x, int k, int k_padded,
                                     const std::uint32_t* __restrict__ keep,
                                     std::int8_t* __restrict__ q, float* __restrict__ scales) {
  __shared__ unsigned partial[quantize_threads / warp_size];
  const int row = blockIdx.x;
  const float* xr = x + static_cast<std::size_t>(row) * k;
  std::int8_t* qr = q + static_cast<std::size_t>(row) * k_padded;

  // max |x| over the bit patterns, as the CPU quantizer (ops/quantize.cpp) does: non-negative
  // floats order like their bits, and a NaN sorts above +Inf.
  unsigned bits = 0;
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    bits = max(bits, __float_as_uint(xr[c]) & 0x7fffffffu & (keep ? keep[c] : 0xffffffffu));
  }
  bits = __reduce_max_sync(0xffffffffu, bits);
  if (threadIdx.x % warp_size == 0) partial[threadIdx.x / warp_size] = bits;
  __syncthreads();
  if (threadIdx.x < warp_size) {
    unsigned v = threadIdx.x < blockDim.x / warp_size ? partial[threadIdx.x] : 0u;
    v = __reduce_max_sync(0xffffffffu, v);
    if (threadIdx.x == 0) partial[0] = v;
  }
  __syncthreads();
  const float amax = __uint_as_float(partial[0]);
  // The CPU's rules: an all-zero (or NaN) row quantizes to zeros with scale 0; an Inf row to
  // zeros with scale Inf (its outputs are NaN). IEEE division, as on the CPU.
  const bool usable = amax > 0.0f;
  const float inverse = usable ? __fdiv_rn(127.0f, amax) : 0.0f;
  if (threadIdx.x == 0) scales[row] = usable ? __fdiv_rn(amax, 127.0f) : 0.0f;
  for (int c = threadIdx.x; c < k_padded; c += blockDim.x) {
    int v = 0;
    if (c < k && usable) {
      // A channel left out of the scale counts as +0 (its weights are zero), as on the CPU.
      const float xc = keep ? __uint_as_float(__float_as_uint(xr[c]) & keep[c]) : xr[c];
      // Round half to even (nearbyint on the CPU), clamped before the conversion.
      const float scaled = rintf(__fmul_rn(xc, inverse));
      v = scaled != scaled ? 0 : static_cast<int>(fminf(fmaxf(scaled, -127.0f), 127.0f));
    }
    qr[c] = static_cast<std::int8_t>(v);
  }
}

__global__ void dequantize_kernel(const std::int32_t* __restrict__ acc, int m, int n, int ld_acc,
                                  const float* __restrict__ row_scale,
                                  const float* __restrict__ col_scale,
                                  const float* __restrict__ bias, int activation, SideChannels side,
                                  bool accumulate, float* __restrict__ y) {
  const std::size_t total = static_cast<std::size_t>(m) * n;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int r = static_cast<int>(i / n);
    const int c = static_cast<int>(i % n);
    // The CPU epilogue's formula and rounding order (activation.hpp).
    float v = dequantize(static_cast<float>(acc[static_cast<std::size_t>(r) * ld_acc + c]),
                         row_scale[r], col_scale[c], bias ? bias[c] : 0.0f);
    // Side channels one at a time, fused multiply-adds in the CPU epilogue's order.
    for (int j = 0; j < side.count; ++j) {
      v = fmaf(side.x[static_cast<std::size_t>(r) * side.ldx + side.channels[j]],
               side.weight[static_cast<std::size_t>(j) * n + c], v);
    }
    if (activation == static_cast<int>(Activation::relu)) {
      v = v < 0.0f ? 0.0f : v;  // std::max(v, 0.0f), as the CPU epilogue
    } else if (activation == static_cast<int>(Activation::gelu)) {
      v = gelu(v);
    }
    y[i] = accumulate ? y[i] + v : v;
  }
}

// One warp per row: rows are class logits (tens to a few thousand wide).
constexpr int softmax_threads = 128;

__global__ void softmax_argmax_kernel(float* __restrict__ x, int m, int n,
                                      std::int64_t* __restrict__ labels) {
  const int row = blockIdx.x * (blockDim.x / warp_size) + threadIdx.x / warp_size;
  const int lane = threadIdx.x % warp_size;
  if (row >= m) return;
  float* xr = x + static_cast<std::size_t>(row) * n;
  float max = -FLT_MAX;
  for (int c = lane; c < n; c += warp_size) max = fmaxf(max, xr[c]);
  max = warp_max(max);
  float sum = 0.0f;
  for (int c = lane; c < n; c += warp_size) sum += expf(xr[c] - max);
  sum = warp_sum(sum);
  const float inverse = 1.0f / sum;
  float best = -1.0f;
  int best_index = INT_MAX;
  for (int c = lane; c < n; c += warp_size) {
    const float p = expf(xr[c] - max) * inverse;
    xr[c] = p;
    if (p > best) {  // c grows within a lane, so the first of equal values is kept
      best = p;
      best_index = c;
    }
  }
  for (int offset = warp_size / 2; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, best, offset);
    const int other_index = __shfl_xor_sync(0xffffffffu, best_index, offset);
    if (other > best || (other == best && other_index < best_index)) {
      best = other;
      best_index = other_index;
    }
  }
  if (lane == 0) labels[row] = best_index == INT_MAX ? 0 : best_index;
}

__global__ void float_to_half_kernel(const float* __restrict__ x, std::size_t count,
                                     __half* __restrict__ h) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    h[i] = __float2half_rn(x[i]);
  }
}

// Enough blocks of 256 to cover `count`, capped: the kernels are grid-stride loops.
unsigned elementwise_blocks(std::size_t count) {
  const std::size_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}

}  // namespace

Status quantize_rows_int8(const float* x, int m, int k, int k_padded, std::int8_t* q, float* scales,
                          cudaStream_t stream, const std::uint32_t* keep) {
  if (m == 0) return {};
  quantize_rows_kernel<<<m, quantize_threads, 0, stream>>>(x, k, k_padded, keep, q, scales);
  return last_launch_status("quantize_rows_kernel");
}

Status dequantize_bias_activation(const std::int32_t* acc, int m, int n, int ld_acc,
                                  const float* row_scale, const float* col_scale, const float* bias,
                                  Activation activation, float* y, cudaStream_t stream,
                                  const SideChannels& side, bool accumulate) {
  if (m == 0) return {};
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  dequantize_kernel<<<elementwise_blocks(count), 256, 0, stream>>>(
      acc, m, n, ld_acc, row_scale, col_scale, bias, static_cast<int>(activation), side, accumulate,
      y);
  return last_launch_status("dequantize_kernel");
}

Status softmax_argmax_rows(float* x, int m, int n, std::int64_t* labels, cudaStream_t stream) {
  if (m == 0) return {};
  constexpr int rows_per_block = softmax_threads / warp_size;
  softmax_argmax_kernel<<<(m + rows_per_block - 1) / rows_per_block, softmax_threads, 0, stream>>>(
      x, m, n, labels);
  return last_launch_status("softmax_argmax_kernel");
}

Status float_to_half(const float* x, std::size_t count, std::uint16_t* half, cudaStream_t stream) {
  if (count == 0) return {};
  float_to_half_kernel<<<elementwise_blocks(count), 256, 0, stream>>>(
      x, count, reinterpret_cast<__half*>(half));
  return last_launch_status("float_to_half_kernel");
}

}  // namespace coinfer::cuda
