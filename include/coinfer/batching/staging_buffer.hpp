#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <span>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/parameters.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/core/tensor_view.hpp"

namespace coinfer {

class BatchTicket;

// One batch under construction, then under compute.
//
// Layout: for model input i, inputs[i] holds units of row_bytes[i] bytes each, back to back.
// A dense input's unit is a row: row r starts at inputs[i].data() + r * row_bytes[i], and
// every row of a buffer has the same per-input row shape (`row_shapes`, the shape without the
// batch dimension), so rows [0, used_rows) are a dense [used_rows, row_shape...] tensor that
// the model reads in place. Requests whose rows have other shapes go to another buffer
// (bucketing by shape). A ragged input's unit is one position along its ragged dimension
// (row_shapes[i] is then the shape past that dimension): rows are packed back to back with
// no padding, positions [0, used_tokens), and lengths[r] is row r's length, so rows of any
// length share a buffer up to the model's max_batch_tokens.
//
// The rows come from the executor's staging_memory(): page-locked on a CudaExecutor, so the
// batch's H2D copy reads them where the decoder wrote them. Fixed-shape and ragged inputs
// have their memory sized when the batcher is built (max_batch_size rows, max_batch_tokens
// positions), never while serving. Inputs with a variable row shape grow with the rows
// reserved (never past max_batch_bytes) while no decoder is writing into the buffer, and give
// back what they hold past kept_variable_bytes once the buffer is free again.
//
// `tickets` lists the requests in row order; a null entry is a hole (a request that failed to
// decode, was cancelled or expired) that is compacted away before compute.
struct StagingBuffer {
  enum class State { free, filling, sealed, computing };

  State state = State::free;
  int priority = 1;
  std::vector<std::uint8_t> ragged;  // by input: 1 when packed by position (see above)
  std::vector<Shape> row_shapes;
  std::vector<std::size_t> row_bytes;
  std::vector<std::pmr::vector<std::byte>> inputs;
  std::vector<std::int64_t> lengths;  // ragged models: by row, its length
  std::vector<Tensor> outputs;        // the model's outputs for the whole batch, reused
  std::vector<BatchTicket*> tickets;
  int used_rows = 0;             // rows reserved, holes included
  std::int64_t used_tokens = 0;  // ragged positions reserved, holes included
  int writers = 0;               // reserved tickets still decoding into their rows
  // Of the tickets queued in it (enqueued, not yet computing), kept as they come and go so
  // that an arrival decides without walking every ticket: their rows, the oldest arrival and
  // the earliest deadline. When a queued ticket leaves (cancelled, expired) the two times may
  // be stale; `times_stale` says they are recomputed before the next read.
  int queued_rows = 0;
  std::chrono::steady_clock::time_point oldest = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point earliest_deadline =
      std::chrono::steady_clock::time_point::max();
  bool times_stale = false;
  // Reused by each batch: the model's Batch view of this buffer (one view per input, whose
  // shapes keep their capacity from batch to batch).
  std::vector<ConstTensorView> views;
  std::vector<std::int64_t> offsets;
  std::vector<const Parameters*> row_parameters;
  Shape output_shape;  // a request's share of an output, reused for each request

  // Unit u of input i: a row, or a position of a ragged input.
  std::byte* unit(std::size_t input, std::int64_t u) {
    return inputs[input].data() + static_cast<std::size_t>(u) * row_bytes[input];
  }
};

}  // namespace coinfer
