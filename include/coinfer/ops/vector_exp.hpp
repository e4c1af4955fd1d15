#pragma once

#include <cstdint>
#include <cstring>

// Eight-float vectors (GCC/Clang vector extensions: one AVX2 register under -march=x86-64-v3,
// two SSE registers otherwise) and e^x on them: the BERT attention's softmax takes its
// exponentials from here; the LLM's attention and the sampler use the vector type alone.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // 32-byte vectors by value without AVX: internal use
#endif

namespace coinfer::simd {

using v8f = float __attribute__((vector_size(32)));
using v8i = std::int32_t __attribute__((vector_size(32)));

// e^x, Cephes' expf polynomial after range reduction x = n ln2 + r (|error| ~ 1e-7 relative);
// inputs below -87.3 give exactly 0 (e^-87.3 is near FLT_MIN), so -inf scores vanish; inputs
// above 88.3 give e^88.3.
inline v8f exp8(v8f x) noexcept {
  const v8f lo = v8f{} + -87.3f;
  const v8f hi = v8f{} + 88.3f;
  v8f xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const v8f magic = v8f{} + 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const v8f n = (xc * 1.44269504088896341f + magic) - magic;
  v8f r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  v8f p = v8f{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const v8f y = p * (r * r) + r + 1.0f;
  const v8i exponent = (__builtin_convertvector(n, v8i) + 127) << 23;  // 2^n as float bits
  v8f two_n;
  std::memcpy(&two_n, &exponent, sizeof two_n);
  return x < lo ? v8f{} : y * two_n;
}

}  // namespace coinfer::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
