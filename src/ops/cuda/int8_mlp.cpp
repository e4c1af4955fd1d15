#include "coinfer/ops/cuda/int8_mlp.hpp"

#include <algorithm>
#include <string>

#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/kernels.hpp"
#include "coinfer/ops/quantize.hpp"

namespace coinfer::cuda {
namespace {

int pad4(int v) {
  return (v + 3) / 4 * 4;
}

// Output features are padded further: on an H200 cuBLASLt's INT8 GEMM at N = 16 takes half the
// time it takes at N = 12 (the digits head's 10 classes; docs/GPU.md), for 4 more zero rows.
int pad16(int v) {
  return (v + 15) / 16 * 16;
}

}  // namespace

Status Int8Mlp::create(std::span<const LinearWeights> layers, int max_batch, Int8Mlp& out) {
  if (layers.empty()) return Status::invalid("Int8Mlp: no layers");
  if (max_batch < 1) return Status::invalid("Int8Mlp: max_batch must be >= 1");
  Int8Mlp mlp;
  mlp.max_batch_ = max_batch;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LinearWeights& l = layers[i];
    const std::string where = "layer " + std::to_string(i);
    if (l.out_features < 1 || l.in_features < 1 ||
        l.weight.size() != static_cast<std::size_t>(l.out_features) * l.in_features ||
        l.bias.size() != static_cast<std::size_t>(l.out_features)) {
      return Status::invalid(where + ": weight must be [out, in] and bias [out]");
    }
    if (l.in_features > max_in_features) {
      return Status::invalid(where + ": " + std::to_string(l.in_features) +
                             " inputs exceed " + std::to_string(max_in_features) +
                             " (INT32 accumulator range)");
    }
    if (i > 0 && layers[i - 1].out_features != l.in_features) {
      return Status::invalid(where + ": takes " + std::to_string(l.in_features) +
                             " inputs, but the layer before gives " +
                             std::to_string(layers[i - 1].out_features));
    }
    Layer d{l.out_features,
            l.in_features,
            pad16(l.out_features),
            pad4(l.in_features),
            l.activation,
            0,
            0,
            0};
    d.weight_offset = bytes;
    bytes += align_up(static_cast<std::size_t>(d.n_padded) * d.k_padded);
    d.scale_offset = bytes;
    bytes += align_up(sizeof(float) * d.n_padded);
    d.bias_offset = bytes;
    bytes += align_up(sizeof(float) * d.n_padded);
    mlp.max_k_padded_ = std::max(mlp.max_k_padded_, d.k_padded);
    mlp.max_n_padded_ = std::max(mlp.max_n_padded_, d.n_padded);
    if (i + 1 < layers.size()) mlp.max_width_ = std::max(mlp.max_width_, d.out_features);
    mlp.layers_.push_back(d);
  }
  if (auto s = CublasLt::create(mlp.lt_); !s) return s;
  if (auto s = DeviceBuffer::allocate(bytes, mlp.weights_); !s) return s;

  // Host image of the device weights, uploaded in one copy.
  std::vector<std::byte> image(bytes);
  std::vector<std::int8_t> q;
  std::vector<float> scales;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LinearWeights& l = layers[i];
    const Layer& d = mlp.layers_[i];
    q.resize(l.weight.size());
    scales.resize(static_cast<std::size_t>(l.out_features));
    quantize_weights_per_channel(l.weight.data(), l.out_features, l.in_features, q.data(),
                                 scales.data());
    auto* w = reinterpret_cast<std::int8_t*>(image.data() + d.weight_offset);
    for (int n = 0; n < d.out_features; ++n) {
      std::copy_n(q.data() + static_cast<std::size_t>(n) * d.in_features, d.in_features,
                  w + static_cast<std::size_t>(n) * d.k_padded);
    }
    std::copy(scales.begin(), scales.end(),
              reinterpret_cast<float*>(image.data() + d.scale_offset));
    std::copy(l.bias.begin(), l.bias.end(), reinterpret_cast<float*>(image.data() + d.bias_offset));
  }
  if (auto s =
          cuda_status(cudaMemcpy(mlp.weights_.data(), image.data(), bytes, cudaMemcpyHostToDevice),
                      "cudaMemcpy (MLP weights, " + std::to_string(bytes) + " bytes)");
      !s) {
    return s;
  }
  out = std::move(mlp);
  return {};
}

Status Int8Mlp::create_scratch(Scratch& out) const {
  const auto rows = static_cast<std::size_t>(max_batch_);
  std::size_t offsets[8];
  std::size_t bytes = 0;
  const std::size_t sizes[8] = {
      sizeof(float) * rows * in_features(),
      rows * max_k_padded_,
      sizeof(float) * rows,
      sizeof(std::int32_t) * rows * max_n_padded_,
      sizeof(float) * rows * std::max(max_width_, 1),
      sizeof(float) * rows * std::max(max_width_, 1),
      sizeof(float) * rows * classes(),
      sizeof(std::int64_t) * rows,
  };
  for (int i = 0; i < 8; ++i) {
    offsets[i] = bytes;
    bytes += align_up(sizes[i]);
  }
  const std::size_t workspace_offset = bytes;
  bytes += workspace_bytes;

  Scratch s;
  if (auto status = DeviceBuffer::allocate(bytes, s.memory_); !status) return status;
  s.input_ = s.memory_.as<float>(offsets[0]);
  s.quantized_ = s.memory_.as<std::int8_t>(offsets[1]);
  s.row_scales_ = s.memory_.as<float>(offsets[2]);
  s.accumulator_ = s.memory_.as<std::int32_t>(offsets[3]);
  s.hidden_[0] = s.memory_.as<float>(offsets[4]);
  s.hidden_[1] = s.memory_.as<float>(offsets[5]);
  s.probabilities_ = s.memory_.as<float>(offsets[6]);
  s.labels_ = s.memory_.as<std::int64_t>(offsets[7]);
  s.graphs_.resize(rows + 1);
  s.plans_.resize(layers_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (auto status = GemmPlan::create(lt_, GemmKind::int8, max_batch_, layers_[i].n_padded,
                                       layers_[i].k_padded, s.memory_.data() + workspace_offset,
                                       workspace_bytes, s.plans_[i]);
        !status) {
      return Status(status.code(), "layer " + std::to_string(i) + ": " + status.message());
    }
    if (auto status = s.plans_[i].prepare(); !status) {
      return Status(status.code(), "layer " + std::to_string(i) + ": " + status.message());
    }
  }
  out = std::move(s);
  return {};
}

Status Int8Mlp::enqueue(Scratch& scratch, int m, cudaStream_t stream) const {
  if (m < 1 || m > max_batch_) {
    return Status::invalid("batch of " + std::to_string(m) + " outside 1.." +
                           std::to_string(max_batch_));
  }
  if (!use_graphs_ || stream == nullptr) return enqueue_kernels(scratch, m, stream);
  GraphExec& graph = scratch.graphs_[static_cast<std::size_t>(m)];
  if (!graph) {
    if (auto s = GraphExec::capture(
            stream, [&] { return enqueue_kernels(scratch, m, stream); }, graph);
        !s) {
      return s;
    }
  }
  return graph.launch(stream);
}

Status Int8Mlp::enqueue_kernels(Scratch& scratch, int m, cudaStream_t stream) const {
  const float* in = scratch.input_;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    const bool last = i + 1 == layers_.size();
    float* out = last ? scratch.probabilities_ : scratch.hidden_[i % 2];
    Status s = quantize_rows_int8(in, m, l.in_features, l.k_padded, scratch.quantized_,
                                  scratch.row_scales_, stream);
    if (s) {
      s = scratch.plans_[i].run(scratch.quantized_, m, weights_.data() + l.weight_offset,
                                scratch.accumulator_, stream);
    }
    if (s) {
      s = dequantize_bias_activation(scratch.accumulator_, m, l.out_features, l.n_padded,
                                     scratch.row_scales_, weights_.as<float>(l.scale_offset),
                                     weights_.as<float>(l.bias_offset), l.activation, out, stream);
    }
    if (!s) return Status(s.code(), "layer " + std::to_string(i) + ": " + s.message());
    in = out;
  }
  return softmax_argmax_rows(scratch.probabilities_, m, classes(), scratch.labels_, stream);
}

}  // namespace coinfer::cuda
