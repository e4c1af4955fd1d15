#include "input_checks.hpp"

#include <algorithm>
#include <optional>

namespace coinfer::input_checks {

std::string input_path(std::size_t index, std::string_view field) {
  std::string path = "inputs[" + std::to_string(index) + "]";
  if (!field.empty()) {
    path += '.';
    path += field;
  }
  return path;
}

Status check_input(const ModelMetadata& model, const TensorSpec& spec, std::size_t index,
                   std::string_view datatype, const Shape& shape, BatchDimension& batch,
                   std::int64_t& count) {
  const std::optional<DType> dtype = parse_dtype(datatype);
  if (!dtype) {
    return Status::invalid(input_path(index, "datatype") + ": unknown datatype '" +
                           std::string(datatype) + "'");
  }
  if (*dtype != spec.dtype) {
    return Status::invalid(input_path(index, "datatype") + ": expected " +
                           std::string(to_string(spec.dtype)) + ", got " + std::string(datatype));
  }
  if (!shape_matches(spec.shape, shape) ||
      std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; })) {
    return Status::invalid(input_path(index, "shape") + ": " + to_string(shape) +
                           " does not match the model's " + to_string(spec.shape));
  }
  if (model.max_batch_size > 0 && !shape.empty()) {
    if (shape[0] > model.max_batch_size) {
      return Status::invalid(input_path(index, "shape") + "[0]: batch size " +
                             std::to_string(shape[0]) + " exceeds max_batch_size " +
                             std::to_string(model.max_batch_size));
    }
    if (batch.input < 0) {
      batch.input = static_cast<std::int64_t>(index);
      batch.size = shape[0];
    } else if (shape[0] != batch.size) {
      return Status::invalid(input_path(index, "shape") + "[0]: batch size " +
                             std::to_string(shape[0]) + " differs from " +
                             input_path(static_cast<std::size_t>(batch.input)) + "'s " +
                             std::to_string(batch.size));
    }
  }
  count = 1;
  for (std::int64_t dim : shape) {
    if (dim > kMaxElements || (count *= dim) > kMaxElements) {
      return Status::invalid(input_path(index, "shape") + ": " + to_string(shape) +
                             " has more than " + std::to_string(kMaxElements) + " elements");
    }
  }
  return {};
}

}  // namespace coinfer::input_checks
