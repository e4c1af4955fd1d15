#pragma once

#include <memory>
#include <span>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"

namespace coinfer {

// A fully connected layer y = act(x W^T + b) in FP32 through oneDNN's matmul (bias and the
// activation fused as post-ops; GELU is the exact erf form). The reference path of quantized
// models: one primitive with a run-time M, so forward() takes any m but creates two small
// oneDNN memory objects per call. Not for serving.
class Fp32Linear {
 public:
  Fp32Linear();  // empty: usable only as the target of create()
  ~Fp32Linear();
  Fp32Linear(Fp32Linear&&) noexcept;
  Fp32Linear& operator=(Fp32Linear&&) noexcept;

  // weight: FP32 [out_features, in_features] row-major (PyTorch Linear layout), copied;
  // bias: FP32 [out_features], or empty for none.
  static Status create(std::span<const float> weight, std::span<const float> bias, int out_features,
                       int in_features, Activation activation, Fp32Linear& out);

  // x: FP32 [m, in_features] row-major; y: FP32 [m, out_features] row-major; m >= 1.
  // x and y must not overlap.
  Status forward(const float* x, int m, float* y);

  int in_features() const noexcept;
  int out_features() const noexcept;

 private:
  struct State;  // oneDNN objects and the weights; keeps oneDNN out of the public headers
  std::unique_ptr<State> state_;
};

}  // namespace coinfer
