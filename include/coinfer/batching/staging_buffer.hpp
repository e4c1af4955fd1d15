#pragma once

#include <cstddef>
#include <cstring>
#include <memory_resource>
#include <span>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/core/tensor_view.hpp"

namespace coinfer {

class BatchTicket;

// One batch under construction, then under compute.
//
// Layout: for model input i, inputs[i] holds `capacity_rows` rows of row_bytes[i] bytes each,
// back to back: row r starts at inputs[i].data() + r * row_bytes[i]. Every row of a buffer has
// the same per-input row shape (`row_shapes`, the shape without the batch dimension), so rows
// [0, used_rows) are a dense [used_rows, row_shape...] tensor that the model reads in place.
// Requests whose rows have other shapes (variable-length inputs) go to another buffer: this
// is bucketing by shape; padding to the longest row would go in DynamicBatcher::place.
//
// The rows come from the executor's staging_memory(): page-locked on a CudaExecutor, so the
// batch's H2D copy reads them where the decoder wrote them. Buffers of models whose inputs
// have fixed row shapes are sized when the batcher is built, never while serving.
//
// `tickets` lists the requests in row order; a null entry is a hole (a request that failed to
// decode, was cancelled or expired) that is compacted away before compute.
struct StagingBuffer {
  enum class State { free, filling, sealed, computing };

  State state = State::free;
  int priority = 1;
  std::vector<Shape> row_shapes;
  std::vector<std::size_t> row_bytes;
  std::vector<std::pmr::vector<std::byte>> inputs;
  std::vector<Tensor> outputs;  // the model's outputs for the whole batch, reused
  std::vector<BatchTicket*> tickets;
  int used_rows = 0;  // rows reserved, holes included
  int writers = 0;    // reserved tickets still decoding into their rows

  std::byte* row(std::size_t input, int r) { return inputs[input].data() + r * row_bytes[input]; }
};

}  // namespace coinfer
