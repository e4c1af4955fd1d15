#include "coinfer/ops/gelu.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "coinfer/ops/activation.hpp"

namespace coinfer {

void gelu_in_place(float* y, std::size_t n) noexcept {
  std::size_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  // erf_fast() and gelu() of activation.hpp, lane by lane; keep the two in step.
  const auto c = [](float v) { return _mm256_set1_ps(v); };
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(y + i);
    __m256 x = _mm256_mul_ps(v, c(0.70710678118654752f));
    // erf_fast's clamp to [-4, 4]. A NaN lane clamps here, where erf_fast keeps the NaN, but
    // the product with v below makes it NaN again, as gelu() does.
    x = _mm256_min_ps(_mm256_max_ps(x, c(-4.0f)), c(4.0f));
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = c(-2.72614225801306e-10f);
    p = _mm256_fmadd_ps(p, x2, c(2.77068142495902e-08f));
    p = _mm256_fmadd_ps(p, x2, c(-2.10102402082508e-06f));
    p = _mm256_fmadd_ps(p, x2, c(-5.69250639462346e-05f));
    p = _mm256_fmadd_ps(p, x2, c(-7.34990630326855e-04f));
    p = _mm256_fmadd_ps(p, x2, c(-2.95459980854025e-03f));
    p = _mm256_fmadd_ps(p, x2, c(-1.60960333262415e-02f));
    __m256 q = c(-1.45660718464996e-05f);
    q = _mm256_fmadd_ps(q, x2, c(-2.13374055278905e-04f));
    q = _mm256_fmadd_ps(q, x2, c(-1.68282697438203e-03f));
    q = _mm256_fmadd_ps(q, x2, c(-7.37332916720468e-03f));
    q = _mm256_fmadd_ps(q, x2, c(-1.42647390514189e-02f));
    const __m256 erf = _mm256_div_ps(_mm256_mul_ps(x, p), q);
    const __m256 half_v = _mm256_mul_ps(c(0.5f), v);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(half_v, _mm256_add_ps(c(1.0f), erf)));
  }
#endif
  for (; i < n; ++i) y[i] = gelu(y[i]);
}

}  // namespace coinfer
