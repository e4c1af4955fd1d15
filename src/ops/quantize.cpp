#include "coinfer/ops/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace coinfer {
namespace {

// One row of `cols` floats -> INT8 (plus `Offset`, stored as Q) and its scale. Written as plain
// loops the compiler vectorizes (max-abs reduction, then scale-round-clamp). With `keep`, only
// the channels whose mask is all ones count toward the scale.
template <class Q, int Offset>
void quantize_row(const float* a, int cols, const std::uint32_t* keep, Q* q,
                  float* scale) noexcept {
  // max |a| as an integer reduction, which vectorizes without -ffast-math: the bit patterns of
  // non-negative floats order like the floats; a NaN sorts above +Inf and so yields zeros below.
  std::uint32_t max_bits = 0;
  if (keep == nullptr) {
    for (int c = 0; c < cols; ++c) {
      std::uint32_t bits;
      std::memcpy(&bits, a + c, sizeof bits);
      max_bits = std::max(max_bits, bits & 0x7fffffffu);
    }
  } else {
    for (int c = 0; c < cols; ++c) {
      std::uint32_t bits;
      std::memcpy(&bits, a + c, sizeof bits);
      max_bits = std::max(max_bits, bits & 0x7fffffffu & keep[c]);
    }
  }
  float max_abs;
  std::memcpy(&max_abs, &max_bits, sizeof max_abs);
  if (!(max_abs > 0.0f)) {  // all zeros (or NaN): dequantizes to zeros
    std::fill(q, q + cols, static_cast<Q>(Offset));
    *scale = 0.0f;
    return;
  }
  const float inv = 127.0f / max_abs;
  if (std::isinf(max_abs)) [[unlikely]] {
    for (int c = 0; c < cols; ++c) {
      // Clamp before converting so that Inf/NaN inputs cannot make the conversion undefined.
      const float v = std::clamp(std::nearbyint(a[c] * inv), -127.0f, 127.0f);
      q[c] = static_cast<Q>(static_cast<int>(v == v ? v : 0.0f) + Offset);
    }
  } else if (keep == nullptr) {
    // Every |a[c]| <= max_abs < Inf, so a[c] * inv rounds to at most 127 in magnitude: no
    // clamp and no NaN check, and the loop is a multiply, a round and the packing.
    for (int c = 0; c < cols; ++c) {
      q[c] = static_cast<Q>(static_cast<int>(std::nearbyint(a[c] * inv)) + Offset);
    }
  } else {
    // The channels left out of the scale (which may exceed it, or be Inf or NaN) quantize as
    // zero: their weights are zero, so what they hold does not reach the result.
    for (int c = 0; c < cols; ++c) {
      std::uint32_t bits;
      std::memcpy(&bits, a + c, sizeof bits);
      bits &= keep[c];
      float kept;
      std::memcpy(&kept, &bits, sizeof kept);
      q[c] = static_cast<Q>(static_cast<int>(std::nearbyint(kept * inv)) + Offset);
    }
  }
  *scale = max_abs / 127.0f;
}

template <class Q, int Offset>
void quantize_rows(const float* a, int rows, int cols, const std::uint32_t* keep, Q* q,
                   float* scales) noexcept {
  for (int r = 0; r < rows; ++r) {
    const auto offset = static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
    quantize_row<Q, Offset>(a + offset, cols, keep, q + offset, scales + r);
  }
}

}  // namespace

void quantize_weights_per_channel(const float* w, int n, int k, std::int8_t* q,
                                  float* scales) noexcept {
  quantize_rows<std::int8_t, 0>(w, n, k, nullptr, q, scales);
}

void quantize_activations_per_row(const float* x, int m, int k, std::int8_t* q,
                                  float* scales) noexcept {
  quantize_rows<std::int8_t, 0>(x, m, k, nullptr, q, scales);
}

void quantize_activations_per_row_u8(const float* x, int m, int k, std::uint8_t* q,
                                     float* scales) noexcept {
  quantize_rows<std::uint8_t, 128>(x, m, k, nullptr, q, scales);
}

void quantize_activations_per_row_u8(const float* x, int m, int k, const std::uint32_t* keep,
                                     std::uint8_t* q, float* scales) noexcept {
  quantize_rows<std::uint8_t, 128>(x, m, k, keep, q, scales);
}

}  // namespace coinfer
