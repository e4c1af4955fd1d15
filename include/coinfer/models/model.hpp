#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/parameters.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/core/tensor_view.hpp"

namespace coinfer {

// One declared input or output. The shape includes the batch dimension first (-1 when the
// model batches); -1 elsewhere means any size.
//
// A ragged input (shape [-1, -1, d...]) has rows of different lengths along dimension 1 that
// share one batch: the batch holds them packed, back to back, with no padding (see Batch).
// Every ragged input of a model has the same length in a given row (token ids and their
// type ids, say). Other inputs with a -1 past the batch dimension are batched only with rows
// of the same shape.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
  bool ragged = false;
};

struct ModelMetadata {
  std::string name;
  std::string version = "1";
  std::string platform = "coinfer";
  int max_batch_size = 0;  // 0: the model does not batch; inputs carry no batch dimension
  // Ragged models: the most elements along the ragged dimension one batch may hold, summed
  // over its rows (a token budget); forward() may rely on it for its scratch. 0 otherwise.
  std::int64_t max_batch_tokens = 0;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// One batch as forward() sees it.
struct Batch {
  int rows = 0;
  // One view per metadata input, in metadata order. A dense input is [rows, row shape...].
  // A ragged input is packed: [offsets[rows], d...], row r occupying positions
  // [offsets[r], offsets[r + 1]) along the first dimension.
  std::span<const ConstTensorView> inputs;
  // rows + 1 prefix sums of the rows' lengths along the ragged dimension (offsets[0] == 0);
  // empty when the model has no ragged input.
  std::span<const std::int64_t> offsets;
  // One per row, never null: the parameters of the request the row came from (OIP
  // "parameters", OpenAI options). Empty when forward() is called outside a batcher.
  std::span<const Parameters* const> parameters;

  std::int64_t length(int row) const noexcept { return offsets[row + 1] - offsets[row]; }

  // A batch of dense inputs, [rows, ...] each, with no per-row parameters: what a direct
  // forward() call (a test, a benchmark) passes.
  static Batch dense(std::span<const ConstTensorView> inputs) noexcept {
    return {inputs.empty() ? 0 : static_cast<int>(inputs[0].shape.at(0)), inputs, {}, {}};
  }
};

// A hand-written model. forward() runs one batch:
// - `batch`: already validated against the metadata; its views usually point into a
//   batcher's staging buffer.
// - `outputs`: one tensor per metadata output, in metadata order, reused from batch to batch:
//   forward() sizes each with Tensor::resize (which keeps capacity) and fills it. The first
//   dimension of every output is the batch's rows (outputs are never ragged).
// forward() runs on a compute thread, never concurrently on one instance, and must not block
// on I/O. Scratch memory is allocated at load for max_batch_size (and max_batch_tokens), not
// per call.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelMetadata& metadata() const noexcept = 0;
  virtual Status forward(const Batch& batch, std::span<Tensor> outputs) = 0;
};

}  // namespace coinfer
