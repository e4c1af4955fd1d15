#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coinfer/models/model.hpp"
#include "coinfer/ops/cuda/int8_mlp.hpp"
#include "coinfer/runtime/cuda_executor.hpp"

namespace coinfer {

// The Mlp (same weights file, metadata, inputs and outputs; see mlp.hpp) served on a GPU by a
// CudaExecutor: INT8 weights on the device from load on, and per batch
//   staging rows (pinned) -> H2D -> per layer: quantize rows, cuBLASLt INT8 GEMM,
//   dequantize + bias + ReLU -> softmax + argmax -> D2H -> lane's pinned output -> outputs
// on one lane of the executor. The batcher's rows are page-locked (CudaExecutor's
// staging_memory()), so the H2D copy reads them where the decoder wrote them; inputs in
// pageable memory are first copied into the lane's pinned input. Each lane has its own device
// scratch, so forward() may run concurrently once per lane (the executor's concurrency());
// the weights are shared. Labels equal the CPU Mlp's except at near-ties; probabilities agree
// within 1e-3 (both quantize the same way; they differ in FP32 rounding order only). Only
// built with CUDA.
class CudaMlp final : public Model {
 public:
  // `executor` must outlive every forward() call (not the model itself).
  static Status load(const std::filesystem::path& file, std::string name, std::string version,
                     int max_batch_size, CudaExecutor& executor, std::unique_ptr<CudaMlp>& out);

  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override;

  int in_features() const noexcept { return network_.in_features(); }
  int classes() const noexcept { return network_.classes(); }

 private:
  CudaMlp() = default;

  ModelMetadata metadata_;
  CudaExecutor* executor_ = nullptr;
  cuda::Int8Mlp network_;
  std::vector<cuda::Int8Mlp::Scratch> scratch_;  // [executor lanes]
  std::size_t labels_offset_ = 0;  // in a lane's pinned output: FP32 probabilities, then labels
};

}  // namespace coinfer
