#pragma once

#include "coinfer/ops/activation.hpp"

namespace coinfer {

// FP32 reference implementations: straightforward loops with double accumulation, no
// quantization. Tests bound the INT8 kernels' error against these; models use them for
// their reference path. Not for serving.

// y = act(x W^T + b). x: FP32 [m, k] row-major; w: FP32 [n, k] row-major (PyTorch Linear);
// b: FP32 [n] or nullptr for no bias; y: FP32 [m, n] row-major.
void linear_fp32_reference(const float* x, int m, int k, const float* w, int n, const float* b,
                           Activation activation, float* y) noexcept;

float relu_reference(float v) noexcept;
float gelu_reference(float v) noexcept;  // 0.5 v (1 + erf(v / sqrt(2)))

// In-place softmax over each row of x: FP32 [m, n] row-major.
void softmax_reference(float* x, int m, int n) noexcept;

}  // namespace coinfer
