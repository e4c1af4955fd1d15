#pragma once

#include <cstdint>

namespace coinfer {

// Symmetric INT8 quantization, one scale per row: scale_r = max|a_r| / 127 and
// q[r][c] = round(a[r][c] / scale_r) in [-127, 127], so a[r][c] ~ q[r][c] * scale_r.
// An all-zero row gets scale 0 and q = 0 (dequantizes to exact zeros).
// Non-finite inputs give unspecified (but in-range) q values; they never crash.

// Weights, once at load. w: FP32 [n, k] row-major (PyTorch Linear layout: one output channel
// per row) -> q: INT8 [n, k] row-major, scales: FP32 [n] (per output channel).
void quantize_weights_per_channel(const float* w, int n, int k, std::int8_t* q,
                                  float* scales) noexcept;

// Activations, right before each GEMM. x: FP32 [m, k] row-major -> q: INT8 [m, k] row-major,
// scales: FP32 [m] (per row, i.e. per sample or token). Allocates nothing.
void quantize_activations_per_row(const float* x, int m, int k, std::int8_t* q,
                                  float* scales) noexcept;

// The same, stored shifted by +128 as UINT8 (q_u8 = q + 128, in [1, 255]) for u8 x s8 GEMMs:
// the caller subtracts 128 * sum_k W_q[n][k] from each accumulator.
void quantize_activations_per_row_u8(const float* x, int m, int k, std::uint8_t* q,
                                     float* scales) noexcept;

// The same with only the channels c whose keep[c] is 0xffffffff (not 0) counted in each row's
// scale: the others quantize to 0 (stored 128) and must meet zero weights (an Int8Linear's FP32
// side channels).
void quantize_activations_per_row_u8(const float* x, int m, int k, const std::uint32_t* keep,
                                     std::uint8_t* q, float* scales) noexcept;

}  // namespace coinfer
