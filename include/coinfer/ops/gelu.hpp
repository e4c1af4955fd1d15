#pragma once

#include <cstddef>

namespace coinfer {

// y[i] = gelu(y[i]) for i < n: bit for bit the value gelu() of activation.hpp gives (the same
// operations in the same order, its FMAs as FMAs), sixteen at a time where the CPU has AVX-512,
// eight with AVX2 and FMA, one at a time without. gelu()'s argument clamp compiles to branches
// under GCC's default -ftrapping-math, which keeps loops that call it scalar.
void gelu_in_place(float* y, std::size_t n) noexcept;

}  // namespace coinfer
