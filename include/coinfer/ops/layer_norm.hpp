#pragma once

namespace coinfer {

// Residual add and layer normalization in one pass over each row (the row stays in L1):
//   s = x[r] + residual[r];  y[r] = (s - mean(s)) / sqrt(var(s) + eps) * gamma + beta
// with the biased variance, as PyTorch's LayerNorm. x, residual, y: FP32 [m, n] row-major
// (residual may be nullptr for none); gamma, beta: FP32 [n]. y may alias x or residual: each
// row is read before it is written. Statistics in FP32 with eight partial sums (two passes,
// mean then variance), so the loops vectorize. Rows are spread over the compute team
// (parallel_for); the result does not depend on the threads.
void add_layer_norm(const float* x, const float* residual, const float* gamma, const float* beta,
                    int m, int n, float eps, float* y) noexcept;

}  // namespace coinfer
