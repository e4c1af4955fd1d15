#include "coinfer/ops/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace coinfer {

float relu_reference(float v) noexcept {
  return v > 0.0f ? v : 0.0f;
}

float gelu_reference(float v) noexcept {
  const double d = v;
  return static_cast<float>(0.5 * d * (1.0 + std::erf(d / std::sqrt(2.0))));
}

void linear_fp32_reference(const float* x, int m, int k, const float* w, int n, const float* b,
                           Activation activation, float* y) noexcept {
  for (int r = 0; r < m; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * static_cast<std::size_t>(k);
    for (int c = 0; c < n; ++c) {
      const float* wc = w + static_cast<std::size_t>(c) * static_cast<std::size_t>(k);
      double acc = b != nullptr ? b[c] : 0.0;
      for (int i = 0; i < k; ++i) acc += static_cast<double>(xr[i]) * wc[i];
      float v = static_cast<float>(acc);
      if (activation == Activation::relu) v = relu_reference(v);
      if (activation == Activation::gelu) v = gelu_reference(v);
      y[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + c] = v;
    }
  }
}

void softmax_reference(float* x, int m, int n) noexcept {
  for (int r = 0; r < m; ++r) {
    float* row = x + static_cast<std::size_t>(r) * static_cast<std::size_t>(n);
    const double max = *std::max_element(row, row + n);
    double sum = 0.0;
    for (int c = 0; c < n; ++c) sum += std::exp(row[c] - max);
    for (int c = 0; c < n; ++c) row[c] = static_cast<float>(std::exp(row[c] - max) / sum);
  }
}

}  // namespace coinfer
