#pragma once

#include <span>
#include <string>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/core/tensor_view.hpp"

namespace coinfer {

// One declared input or output. The shape includes the batch dimension first (-1 when the
// model batches); -1 elsewhere means any size.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

struct ModelMetadata {
  std::string name;
  std::string version = "1";
  std::string platform = "coinfer";
  int max_batch_size = 0;  // 0: the model does not batch; inputs carry no batch dimension
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// A hand-written model. forward() runs one batch:
// - `inputs`: one view per metadata input, in metadata order, already validated against the
//   metadata; the first dimension is the batch (when max_batch_size > 0). They usually point
//   into a batcher's staging buffer.
// - `outputs`: one tensor per metadata output, in metadata order, reused from batch to batch:
//   forward() sizes each with Tensor::resize (which keeps capacity) and fills it.
// forward() runs on a compute thread, never concurrently on one instance, and must not block
// on I/O. Scratch memory is allocated at load for max_batch_size, not per call.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelMetadata& metadata() const noexcept = 0;
  virtual Status forward(std::span<const ConstTensorView> inputs, std::span<Tensor> outputs) = 0;
};

}  // namespace coinfer
