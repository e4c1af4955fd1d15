#include "coinfer/ops/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace coinfer {

void softmax_rows(float* x, int m, int n) noexcept {
  for (int r = 0; r < m; ++r) {
    float* row = x + static_cast<std::size_t>(r) * static_cast<std::size_t>(n);
    const float max = *std::max_element(row, row + n);
    float sum = 0.0f;
    for (int c = 0; c < n; ++c) {
      row[c] = std::exp(row[c] - max);
      sum += row[c];
    }
    const float inv = 1.0f / sum;
    for (int c = 0; c < n; ++c) row[c] *= inv;
  }
}

void argmax_rows(const float* x, int m, int n, std::int64_t* out) noexcept {
  for (int r = 0; r < m; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * static_cast<std::size_t>(n);
    out[r] = std::max_element(row, row + n) - row;
  }
}

}  // namespace coinfer
