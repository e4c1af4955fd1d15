#pragma once

#include <memory>
#include <span>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"

namespace coinfer {

// A fully connected layer y = act(x W^T + b) run in INT8 on the CPU (oneDNN):
// - weights quantized once at create(), symmetric per output channel (see quantize.hpp);
// - activations quantized per row at each forward();
// - u8 (activations +128) x s8 -> s32 GEMM, then one fused epilogue pass per element:
//     y[m][n] = act((acc[m][n] - 128 * sum_k W_q[n][k]) * row_scale[m] * col_scale[n] + b[n]).
// Every buffer forward() touches (quantized x, row scales, accumulator, oneDNN scratchpad)
// is allocated at create() for max_batch rows; forward() allocates nothing and creates no
// oneDNN primitive. One instance is never run concurrently; distinct instances may be.
class Int8Linear {
 public:
  // Largest in_features whose u8 x s8 dot products cannot overflow the INT32 accumulator.
  static constexpr int max_in_features = 65536;

  Int8Linear();  // empty: usable only as the target of create()
  ~Int8Linear();
  Int8Linear(Int8Linear&&) noexcept;
  Int8Linear& operator=(Int8Linear&&) noexcept;

  // weight: FP32 [out_features, in_features] row-major (PyTorch Linear layout);
  // bias: FP32 [out_features], or empty for none. keep_fp32_weight keeps a copy of the FP32
  // masters (fp32_weight()) for a reference path; serving leaves it off.
  static Status create(std::span<const float> weight, std::span<const float> bias, int out_features,
                       int in_features, Activation activation, int max_batch, Int8Linear& out,
                       bool keep_fp32_weight = false);

  // x: FP32 [m, in_features] row-major; y: FP32 [m, out_features] row-major; 1 <= m <=
  // max_batch. x and y must not overlap.
  Status forward(const float* x, int m, float* y);

  int in_features() const noexcept;
  int out_features() const noexcept;
  int max_batch() const noexcept;
  Activation activation() const noexcept;
  std::span<const float> weight_scales() const noexcept;  // FP32 [out_features]
  std::span<const float> bias() const noexcept;           // FP32 [out_features] (zeros if none)
  std::span<const float> fp32_weight() const noexcept;    // [out, in]; empty unless kept

 private:
  struct State;  // oneDNN objects and buffers; keeps oneDNN out of the public headers
  std::unique_ptr<State> state_;
};

}  // namespace coinfer
