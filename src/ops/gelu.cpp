#include "coinfer/ops/gelu.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define COINFER_GELU_SIMD 1
#endif

#include "coinfer/ops/activation.hpp"

namespace coinfer {

#ifdef COINFER_GELU_SIMD
namespace {

// erf_fast()'s rational approximation x p(x²) / q(x²), highest coefficient first; keep in step
// with activation.hpp. The vector loops below are gelu() lane by lane: the same operations in
// the same order. erf_fast's clamp to [-4, 4] lets a NaN lane through as -4 or 4 here, where
// erf_fast keeps the NaN, but the product with v makes it NaN again, as gelu() does.
constexpr float kP[] = {-2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f,
                        -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                        -1.60960333262415e-02f};
constexpr float kQ[] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                        -7.37332916720468e-03f, -1.42647390514189e-02f};

// Sixteen lanes where the CPU has AVX-512 (the build targets AVX2): the same bits, twice the
// lanes per instruction. GCC 12 warns inside its own _mm512_max_ps/_mm512_min_ps (their
// "undefined" pass-through operand), which is not this code's.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) std::size_t gelu_avx512(float* y, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(y + i);
    __m512 x = _mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f));
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0f)), _mm512_set1_ps(4.0f));
    const __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(kP[0]);
    for (std::size_t j = 1; j < std::size(kP); ++j) {
      p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(kP[j]));
    }
    __m512 q = _mm512_set1_ps(kQ[0]);
    for (std::size_t j = 1; j < std::size(kQ); ++j) {
      q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(kQ[j]));
    }
    const __m512 erf = _mm512_div_ps(_mm512_mul_ps(x, p), q);
    const __m512 half_v = _mm512_mul_ps(_mm512_set1_ps(0.5f), v);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(half_v, _mm512_add_ps(_mm512_set1_ps(1.0f), erf)));
  }
  return i;
}
#pragma GCC diagnostic pop

std::size_t gelu_avx2(float* y, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(y + i);
    __m256 x = _mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f));
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-4.0f)), _mm256_set1_ps(4.0f));
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(kP[0]);
    for (std::size_t j = 1; j < std::size(kP); ++j) {
      p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(kP[j]));
    }
    __m256 q = _mm256_set1_ps(kQ[0]);
    for (std::size_t j = 1; j < std::size(kQ); ++j) {
      q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(kQ[j]));
    }
    const __m256 erf = _mm256_div_ps(_mm256_mul_ps(x, p), q);
    const __m256 half_v = _mm256_mul_ps(_mm256_set1_ps(0.5f), v);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(half_v, _mm256_add_ps(_mm256_set1_ps(1.0f), erf)));
  }
  return i;
}

// Initialized before main, possibly before libgcc has read the CPU's features: ask it to.
const bool has_avx512 = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));

}  // namespace
#endif

void gelu_in_place(float* y, std::size_t n) noexcept {
  std::size_t i = 0;
#ifdef COINFER_GELU_SIMD
  if (has_avx512) i = gelu_avx512(y, n);
  i += gelu_avx2(y + i, n - i);
#endif
  for (; i < n; ++i) y[i] = gelu(y[i]);
}

}  // namespace coinfer
