#pragma once

#include <cstdint>

namespace coinfer {

// IEEE 754 binary16 <-> binary32, as FP16 tensors store their elements (raw bits).
// float_to_half rounds to nearest even; values beyond the binary16 range become infinity,
// NaN stays NaN (quiet).
float half_to_float(std::uint16_t bits) noexcept;
std::uint16_t float_to_half(float value) noexcept;

}  // namespace coinfer
