#pragma once

#include <cassert>
#include <cstddef>
#include <span>
#include <type_traits>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"

namespace coinfer {

// A non-owning view of a dense row-major tensor of a fixed-size dtype (not Bytes).
// `Byte` is std::byte for a writable view, const std::byte for a read-only one.
template <class Byte>
struct BasicTensorView {
  DType dtype = DType::FP32;
  Shape shape;
  Byte* data = nullptr;

  std::int64_t size() const noexcept { return element_count(shape); }
  std::size_t size_bytes() const noexcept {
    return static_cast<std::size_t>(size()) * element_size(dtype);
  }

  template <class T>
  auto values() const noexcept {
    assert(dtype_of<std::remove_const_t<T>>() == dtype);
    using Elem = std::conditional_t<std::is_const_v<Byte>, const std::remove_const_t<T>, T>;
    return std::span<Elem>(reinterpret_cast<Elem*>(data), static_cast<std::size_t>(size()));
  }

  // A read-only view of the same memory.
  operator BasicTensorView<const std::byte>() const noexcept
    requires(!std::is_const_v<Byte>)
  {
    return {dtype, shape, data};
  }
};

using TensorView = BasicTensorView<std::byte>;
using ConstTensorView = BasicTensorView<const std::byte>;

}  // namespace coinfer
