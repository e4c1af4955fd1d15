#pragma once

#include "coinfer/models/model.hpp"

namespace coinfer {

// The built-in protocol test model (kind "identity"): needs no weights, so a fresh service
// has something to answer with.
//   input  INPUT0  FP32 [-1, -1]   a batch of rows of any length
//   output OUTPUT0 FP32 [-1, -1]   INPUT0 unchanged
//   output OUTPUT1 FP32 [-1]       the sum of each row
class IdentityModel final : public Model {
 public:
  IdentityModel(std::string name, std::string version, int max_batch_size);
  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override;

 private:
  ModelMetadata metadata_;
};

}  // namespace coinfer
