#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace coinfer {

// Dimensions outermost first; -1 in a model's declared shape means "any size".
using Shape = std::vector<std::int64_t>;

// Product of the dimensions (1 for a scalar shape [], 0 if any dimension is 0); -1 if any
// dimension is negative or the product does not fit in int64.
std::int64_t element_count(std::span<const std::int64_t> dims) noexcept;
inline std::int64_t element_count(const Shape& shape) noexcept {
  return element_count(std::span<const std::int64_t>(shape));
}

// "[2, 64]"
std::string to_string(const Shape& shape);

// True if `actual` has the declared rank and every declared dimension other than -1 matches.
bool shape_matches(const Shape& declared, const Shape& actual) noexcept;

}  // namespace coinfer
