#pragma once

#include <cstdint>

namespace coinfer {

// In-place, numerically stable softmax over each row of x: FP32 [m, n] row-major.
void softmax_rows(float* x, int m, int n) noexcept;

// Index of the largest element of each row of x: FP32 [m, n] row-major -> out [m].
// Ties go to the lowest index.
void argmax_rows(const float* x, int m, int n, std::int64_t* out) noexcept;

}  // namespace coinfer
