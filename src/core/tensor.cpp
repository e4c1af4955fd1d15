#include "coinfer/core/tensor.hpp"

namespace coinfer {

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  const auto count = static_cast<std::size_t>(element_count(shape_));
  assert(element_count(shape_) >= 0);
  if (dtype_ == DType::Bytes) {
    strings_.resize(count);
  } else {
    data_.resize(count * element_size(dtype_));
  }
}

void Tensor::resize(DType dtype, Shape shape) {
  shape_ = std::move(shape);
  resize(dtype, std::span<const std::int64_t>(shape_));
}

void Tensor::resize(DType dtype, std::span<const std::int64_t> shape) {
  dtype_ = dtype;
  if (shape.data() != shape_.data()) shape_.assign(shape.begin(), shape.end());
  const auto count = static_cast<std::size_t>(element_count(shape_));
  assert(element_count(shape_) >= 0);
  if (dtype_ == DType::Bytes) {
    data_.clear();
    strings_.resize(count);
  } else {
    strings_.clear();
    data_.resize(count * element_size(dtype_));
  }
}

}  // namespace coinfer
