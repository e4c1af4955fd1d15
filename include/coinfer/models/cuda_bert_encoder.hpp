#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coinfer/models/bert_encoder.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/ops/cuda/int8_bert.hpp"
#include "coinfer/runtime/cuda_executor.hpp"

namespace coinfer {

// The INT8 BertEncoder (same weights, options, metadata, input and output; see
// bert_encoder.hpp) served on a GPU by a CudaExecutor. At load the CPU model is built as
// usual (its calibration pass picks each linear's FP32 outlier channels), then its weights
// go to the device (cuda::Int8BertEncoder) and the CPU copy is dropped. Per batch, on one
// lane of the executor:
//   packed ids and row offsets -> lane's pinned input -> H2D -> embeddings, 6 layers,
//   pooling (cuda::Int8BertEncoder::enqueue) -> D2H -> lane's pinned output -> outputs.
// Each lane has its own device scratch sized for max_batch_size rows and max_batch_tokens
// tokens, so forward() may run once per lane concurrently. Embeddings agree with the CPU
// model's within cosine 0.999 (the GPU quantizes weights to |q| <= 127 where an AVX2 CPU
// without VNNI uses 63, and sums in another order). Only built with CUDA.
class CudaBertEncoder final : public Model {
 public:
  // `executor` must outlive every forward() call (not the model itself). options.precision
  // must be int8.
  static Status load(const std::filesystem::path& weights, std::string name, std::string version,
                     const BertEncoderOptions& options, CudaExecutor& executor,
                     std::unique_ptr<CudaBertEncoder>& out);

  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override;

  int hidden_size() const noexcept { return encoder_.hidden(); }
  int vocab_size() const noexcept { return vocab_; }

 private:
  CudaBertEncoder() = default;

  ModelMetadata metadata_;
  CudaExecutor* executor_ = nullptr;
  cuda::Int8BertEncoder encoder_;
  std::vector<cuda::Int8BertEncoder::Scratch> scratch_;  // [executor lanes]
  int vocab_ = 0;
  int max_length_ = 0;
  std::vector<std::int64_t> dense_offsets_;  // [max_batch_size + 1], for a dense input
};

}  // namespace coinfer
