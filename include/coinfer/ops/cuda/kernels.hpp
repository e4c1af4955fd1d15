#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"

namespace coinfer::cuda {

// Hand-written CUDA kernels of the INT8 path. Each enqueues on `stream` and returns the launch
// status (a bad configuration is reported here; faults inside a kernel surface at the next
// synchronization). All matrices are row-major; device pointers are 256-byte aligned buffers
// from DeviceBuffer.

// Per-row symmetric INT8 quantization (the GPU twin of quantize_activations_per_row):
//   x: FP32 [m, k] (row stride k) -> q: INT8 [m, k_padded] (columns k..k_padded-1 are zeros,
//   so a GEMM over k_padded sees the same dot products), scales: FP32 [m] = max|x_r| / 127.
// With `keep` (device, [k]: 0xffffffff or 0 per channel), only the kept channels set a row's
// scale; the others quantize to 0 and must meet zero weights (FP32 side channels, added by the
// epilogue).
Status quantize_rows_int8(const float* x, int m, int k, int k_padded, std::int8_t* q, float* scales,
                          cudaStream_t stream, const std::uint32_t* keep = nullptr);

// FP32 input channels that bypass an INT8 GEMM (outlier channels, as the CPU's Int8Linear
// runs them): y[r][c] += x[r][channels[j]] * weight[j][c] for j < count, before the
// activation. Device pointers; count 0: none.
struct SideChannels {
  int count = 0;
  const int* channels = nullptr;  // [count]
  const float* x = nullptr;       // the GEMM's FP32 input, [m, ldx]
  int ldx = 0;
  const float* weight = nullptr;  // FP32 [count, n]
};

// The fused epilogue after an INT8 GEMM:
//   y[r][c] = act(acc[r][c] * row_scale[r] * col_scale[c] + bias[c] + side channels),  c < n
//   acc: INT32 [m, ld_acc] (ld_acc >= n, padding columns ignored); y: FP32 [m, n]; bias may be
//   null (none). With `accumulate` the value is added to y instead (a residual stream:
//   y[r][c] += ...), as a decoder's attention output and down projections do.
Status dequantize_bias_activation(const std::int32_t* acc, int m, int n, int ld_acc,
                                  const float* row_scale, const float* col_scale, const float* bias,
                                  Activation activation, float* y, cudaStream_t stream,
                                  const SideChannels& side = {}, bool accumulate = false);

// In place softmax over each row of x: FP32 [m, n], and the argmax of each row into
// labels: INT64 [m] (ties go to the lowest index, as argmax_rows on the CPU).
Status softmax_argmax_rows(float* x, int m, int n, std::int64_t* labels, cudaStream_t stream);

// FP32 -> FP16 (round to nearest even), `count` elements; `half` holds the FP16 bit patterns.
Status float_to_half(const float* x, std::size_t count, std::uint16_t* half, cudaStream_t stream);

}  // namespace coinfer::cuda
