#pragma once

#include <span>
#include <string>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/core/tensor.hpp"

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

// A hand-written model. forward() runs one batch: `inputs` in metadata order (already
// validated against the metadata), `outputs` in metadata order, to be shaped and filled.
// It may run on a compute thread; it must not block on I/O.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelMetadata& metadata() const noexcept = 0;
  virtual Status forward(std::span<const Tensor> inputs, std::span<Tensor> outputs) = 0;
};

}  // namespace coinfer
