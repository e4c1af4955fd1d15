#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coinfer/models/model.hpp"
#include "coinfer/ops/int8_linear.hpp"

namespace coinfer {

// A multilayer perceptron classifier (kind "mlp"), sized by its weights file: safetensors
// tensors fc{i}.weight FP32 [out, in] and fc{i}.bias FP32 [out], i = 0..L-1 contiguous, each
// layer's in = the previous layer's out. Hidden layers use ReLU; the last layer's logits go
// through softmax. Served in INT8 (Int8Linear per layer).
//   input  INPUT0        FP32  [-1, in_features]
//   output probabilities FP32  [-1, classes]
//   output label         INT64 [-1]            argmax of the probabilities
class Mlp final : public Model {
 public:
  // keep_fp32_reference keeps the FP32 weights for forward_reference() (tests, accuracy
  // checks); serving leaves it off.
  static Status load(const std::filesystem::path& file, std::string name, std::string version,
                     int max_batch_size, std::unique_ptr<Mlp>& out,
                     bool keep_fp32_reference = false);

  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override;

  // The same computation in FP32 without quantization. Allocates; not for serving.
  Status forward_reference(ConstTensorView x, Tensor& probabilities, Tensor& label) const;

  int in_features() const noexcept { return layers_.front().in_features(); }
  int classes() const noexcept { return layers_.back().out_features(); }
  std::size_t layer_count() const noexcept { return layers_.size(); }
  const Int8Linear& layer(std::size_t i) const noexcept { return layers_[i]; }

 private:
  Mlp() = default;
  Status check_input(const ConstTensorView& x) const;

  ModelMetadata metadata_;
  std::vector<Int8Linear> layers_;
  int max_width_ = 0;  // widest hidden layer (activations between layers)
  // Hidden activations, ping-pong: two FP32 [max_batch_size, max_width_] row-major buffers,
  // each a contiguous slice of this vector. Layer i reads one and writes the other.
  std::vector<float> hidden_;
};

}  // namespace coinfer
