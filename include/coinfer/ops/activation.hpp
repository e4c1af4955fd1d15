#pragma once

#include <cstdint>
#include <string_view>

namespace coinfer {

// The elementwise function a layer applies after its bias.
enum class Activation : std::uint8_t {
  none,
  relu,
  gelu,  // exact (erf) GELU, as PyTorch's nn.GELU() default and BERT use
};

std::string_view to_string(Activation activation) noexcept;

}  // namespace coinfer
