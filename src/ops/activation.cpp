#include "coinfer/ops/activation.hpp"

namespace coinfer {

std::string_view to_string(Activation activation) noexcept {
  switch (activation) {
    case Activation::none:
      return "none";
    case Activation::relu:
      return "relu";
    case Activation::gelu:
      return "gelu";
  }
  return "none";
}

}  // namespace coinfer
