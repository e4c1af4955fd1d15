#pragma once

#include <math.h>  // fmaf, in host and device code alike

#include <cstdint>
#include <string_view>

// Elementwise functions shared by the CPU kernels and the CUDA kernels (kernels.cu), so both
// compute bit-identical values.
#ifdef __CUDACC__
#define COINFER_HOST_DEVICE __host__ __device__
#else
#define COINFER_HOST_DEVICE
#endif

namespace coinfer {

// The elementwise function a layer applies after its bias.
enum class Activation : std::uint8_t {
  none,
  relu,
  gelu,  // exact (erf) GELU, as PyTorch's nn.GELU() default and BERT use
};

std::string_view to_string(Activation activation) noexcept;

// erf(x) from a rational approximation (Eigen's fast float erf: |error| < 4e-7 absolute on
// [-4, 4], saturating to +-1 outside). Only fused multiply-adds and one divide, so loops over
// it vectorize, unlike std::erf. The FMAs are explicit (fmaf): the result then does not depend
// on whether a compiler contracts a*b+c, and the GPU computes the same bits as the CPU.
COINFER_HOST_DEVICE inline float erf_fast(float x) noexcept {
  x = x < -4.0f ? -4.0f : (x > 4.0f ? 4.0f : x);
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = fmaf(p, x2, 2.77068142495902e-08f);
  p = fmaf(p, x2, -2.10102402082508e-06f);
  p = fmaf(p, x2, -5.69250639462346e-05f);
  p = fmaf(p, x2, -7.34990630326855e-04f);
  p = fmaf(p, x2, -2.95459980854025e-03f);
  p = fmaf(p, x2, -1.60960333262415e-02f);
  float q = -1.45660718464996e-05f;
  q = fmaf(q, x2, -2.13374055278905e-04f);
  q = fmaf(q, x2, -1.68282697438203e-03f);
  q = fmaf(q, x2, -7.37332916720468e-03f);
  q = fmaf(q, x2, -1.42647390514189e-02f);
  return x * p / q;
}

// Exact-form GELU, 0.5 v (1 + erf(v / sqrt(2))), with erf_fast.
COINFER_HOST_DEVICE inline float gelu(float v) noexcept {
  return 0.5f * v * (1.0f + erf_fast(v * 0.70710678118654752f));
}

// The INT8 epilogue's dequantization, acc * row_scale * col_scale + bias, with one explicit
// rounding order (a product, then a fused multiply-add) on the CPU and the GPU alike.
COINFER_HOST_DEVICE inline float dequantize(float acc, float row_scale, float col_scale,
                                            float bias) noexcept {
  return fmaf(acc * row_scale, col_scale, bias);
}

}  // namespace coinfer
