#include "coinfer/ops/layer_norm.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "coinfer/ops/compute_threads.hpp"

namespace coinfer {
namespace {

constexpr int lanes = 8;  // one AVX2 register of floats: the blocks below are this wide

float sum_lanes(const float (&partial)[lanes]) noexcept {
  float s = 0.0f;
  for (float v : partial) s += v;
  return s;
}

void layer_norm_rows(const float* x, const float* residual, const float* gamma,
                     const float* beta, std::int64_t first, std::int64_t last, int n, float eps,
                     float* y) noexcept {
  const int blocked = n - n % lanes;
  for (std::int64_t r = first; r < last; ++r) {
    const auto offset = static_cast<std::size_t>(r) * static_cast<std::size_t>(n);
    const float* xr = x + offset;
    float* yr = y + offset;

    // s = x + residual into y, summing in `lanes` partial sums (no reassociation needed).
    float partial[lanes] = {};
    if (residual != nullptr) {
      const float* rr = residual + offset;
      for (int c = 0; c < blocked; c += lanes) {
        for (int l = 0; l < lanes; ++l) {
          yr[c + l] = xr[c + l] + rr[c + l];
          partial[l] += yr[c + l];
        }
      }
      for (int c = blocked; c < n; ++c) {
        yr[c] = xr[c] + rr[c];
        partial[0] += yr[c];
      }
    } else {
      for (int c = 0; c < blocked; c += lanes) {
        for (int l = 0; l < lanes; ++l) {
          yr[c + l] = xr[c + l];
          partial[l] += yr[c + l];
        }
      }
      for (int c = blocked; c < n; ++c) {
        yr[c] = xr[c];
        partial[0] += yr[c];
      }
    }
    const float mean = sum_lanes(partial) / static_cast<float>(n);

    float squares[lanes] = {};
    for (int c = 0; c < blocked; c += lanes) {
      for (int l = 0; l < lanes; ++l) {
        const float d = yr[c + l] - mean;
        squares[l] = std::fma(d, d, squares[l]);
      }
    }
    for (int c = blocked; c < n; ++c) {
      const float d = yr[c] - mean;
      squares[0] = std::fma(d, d, squares[0]);
    }
    const float inv_std = 1.0f / std::sqrt(sum_lanes(squares) / static_cast<float>(n) + eps);

    for (int c = 0; c < n; ++c) yr[c] = std::fma((yr[c] - mean) * inv_std, gamma[c], beta[c]);
  }
}

}  // namespace

void add_layer_norm(const float* x, const float* residual, const float* gamma, const float* beta,
                    int m, int n, float eps, float* y) noexcept {
  parallel_for(m, 16, 0, [&](int, std::int64_t first, std::int64_t last) {
    layer_norm_rows(x, residual, gamma, beta, first, last, n, eps, y);
  });
}

}  // namespace coinfer
