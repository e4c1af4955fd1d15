#pragma once
// What every protocol decoder (JSON: OipDecoder; gRPC: grpc_codec::InferDecoder) checks of one
// request input against the model before anything is allocated, with the same messages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"

namespace coinfer::input_checks {

// Beyond this a shape is rejected before anything is allocated (a few bytes of shape must not
// buy gigabytes of tensor); it also keeps element_count arithmetic far from overflow.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

// "inputs[3]", or "inputs[3].shape" with a field.
std::string input_path(std::size_t index, std::string_view field = {});

// The request's batch dimension: the first input that has one (its index in the request) and
// its size; every other input's must equal it.
struct BatchDimension {
  std::int64_t input = -1;
  std::int64_t size = 0;
};

// Request input `index` for model input `spec`: its datatype (as the wire names it), its
// shape (the declared rank, every fixed dimension, no negative one), its batch size within
// max_batch_size and equal to the other inputs' (`batch`), and at most kMaxElements elements.
// On success `count` is its element count. Errors name the field ("inputs[0].datatype:
// expected FP32, got INT8").
Status check_input(const ModelMetadata& model, const TensorSpec& spec, std::size_t index,
                   std::string_view datatype, const Shape& shape, BatchDimension& batch,
                   std::int64_t& count);

}  // namespace coinfer::input_checks
