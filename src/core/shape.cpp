#include "coinfer/core/shape.hpp"

namespace coinfer {

std::int64_t element_count(std::span<const std::int64_t> shape) noexcept {
  bool empty = false;
  for (auto dim : shape) {
    if (dim < 0) return -1;
    empty = empty || dim == 0;
  }
  if (empty) return 0;  // whatever the other dimensions (their product may not fit)
  std::int64_t count = 1;
  for (auto dim : shape) {
    if (__builtin_mul_overflow(count, dim, &count)) return -1;
  }
  return count;
}

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += ']';
  return out;
}

bool shape_matches(const Shape& declared, const Shape& actual) noexcept {
  if (declared.size() != actual.size()) return false;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    if (declared[i] != -1 && declared[i] != actual[i]) return false;
  }
  return true;
}

}  // namespace coinfer
