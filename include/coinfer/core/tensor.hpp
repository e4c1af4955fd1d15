#pragma once

#include <cassert>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/tensor_view.hpp"

namespace coinfer {

// A dense tensor that owns its elements.
// Layout: row-major (last dimension contiguous). Fixed-size dtypes live in `bytes()`
// (element_size(dtype) bytes each, Bool as one byte 0/1, FP16 as IEEE binary16 bits);
// Bytes elements live in `strings()`, one std::string per element.
class Tensor {
 public:
  Tensor() = default;
  // Zero-initialised storage for element_count(shape) elements; shape must have no -1.
  Tensor(DType dtype, Shape shape);

  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  std::int64_t size() const noexcept { return element_count(shape_); }

  std::span<std::byte> bytes() noexcept { return data_; }
  std::span<const std::byte> bytes() const noexcept { return data_; }

  template <class T>
  std::span<T> values() noexcept {
    assert(dtype_of<std::remove_const_t<T>>() == dtype_);
    return {reinterpret_cast<T*>(data_.data()), data_.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> values() const noexcept {
    assert(dtype_of<std::remove_const_t<T>>() == dtype_);
    return {reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T)};
  }

  TensorView view() noexcept { return {dtype_, shape_, data_.data()}; }
  ConstTensorView view() const noexcept { return {dtype_, shape_, data_.data()}; }

  // Re-types and reshapes in place, reusing the storage's capacity: once a tensor has held
  // as many bytes, this allocates nothing (outputs reused batch after batch).
  void resize(DType dtype, Shape shape);
  // The same, reusing the shape's storage too (no allocation at all once warmed up).
  void resize(DType dtype, std::span<const std::int64_t> shape);

  std::vector<std::string>& strings() noexcept { return strings_; }
  const std::vector<std::string>& strings() const noexcept { return strings_; }

  // Heap bytes held (element storage and strings' slots, not what the strings point to).
  std::size_t capacity_bytes() const noexcept {
    return data_.capacity() + strings_.capacity() * sizeof(std::string) +
           shape_.capacity() * sizeof(std::int64_t);
  }

 private:
  DType dtype_ = DType::FP32;
  Shape shape_;
  std::vector<std::byte> data_;        // empty for Bytes
  std::vector<std::string> strings_;   // used only for Bytes
};

}  // namespace coinfer
