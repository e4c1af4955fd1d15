#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"
#include "coinfer/ops/cuda/cublaslt_gemm.hpp"
#include "coinfer/ops/cuda/cuda_graph.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"

namespace coinfer::cuda {

// One fully connected layer as given at load: FP32 weight [out_features, in_features]
// row-major (PyTorch Linear layout) and FP32 bias [out_features].
struct LinearWeights {
  std::span<const float> weight;
  std::span<const float> bias;
  int out_features = 0;
  int in_features = 0;
  Activation activation = Activation::none;
};

// A stack of INT8 linear layers followed by softmax + argmax, on the GPU. Per layer:
//   quantize_rows_int8 (per row) -> cuBLASLt INT8 GEMM (INT32 accumulate)
//   -> dequantize_bias_activation (row_scale x col_scale, bias, ReLU/GELU)
// and after the last: softmax_argmax_rows. Everything is enqueued on the caller's stream,
// as a CUDA graph captured per lane and row count on first use and replayed after (one launch
// instead of 3 per layer + 1; see GraphExec).
//
// Weights live on the device from create() on; each lane (stream) that runs the network has
// its own Scratch, so lanes run it concurrently.
class Int8Mlp {
 public:
  // One lane's device memory, allocated once for max_batch rows. Layout, one allocation,
  // each part starting on a 256-byte boundary:
  //   input       FP32  [max_batch, in_features]     H2D target
  //   quantized   INT8  [max_batch, max_k_padded]    the current layer's quantized input
  //   row_scales  FP32  [max_batch]
  //   accumulator INT32 [max_batch, max_n_padded]    GEMM output (padding columns unused)
  //   hidden      FP32  2 x [max_batch, max_width]   ping-pong between layers
  //   probabilities FP32 [max_batch, classes]         D2H source
  //   labels      INT64 [max_batch]                   D2H source
  //   workspace   cuBLASLt workspace (workspace_bytes)
  // a GEMM plan per layer (plans are per stream; see GemmPlan) and the graphs captured on
  // this lane, one per row count seen.
  class Scratch {
   public:
    float* input() const noexcept { return input_; }
    float* probabilities() const noexcept { return probabilities_; }
    std::int64_t* labels() const noexcept { return labels_; }

   private:
    friend class Int8Mlp;
    DeviceBuffer memory_;
    float* input_ = nullptr;
    std::int8_t* quantized_ = nullptr;
    float* row_scales_ = nullptr;
    std::int32_t* accumulator_ = nullptr;
    float* hidden_[2] = {nullptr, nullptr};
    float* probabilities_ = nullptr;
    std::int64_t* labels_ = nullptr;
    std::vector<GemmPlan> plans_;
    std::vector<GraphExec> graphs_;  // [max_batch + 1]
  };

  // cuBLASLt's workspace per lane; NVIDIA suggests 32 MiB on Hopper.
  static constexpr std::size_t workspace_bytes = 32 << 20;
  // Widest layer input: the INT32 accumulator holds k products of up to 127 x 127 exactly
  // while k <= 133,143; the CPU's Int8Linear allows 65,536, and so does the GPU.
  static constexpr int max_in_features = 65536;

  // Quantizes each layer's weights per output channel (scale = max|W_c| / 127) on the host,
  // pads out features to multiples of 16 and in features to multiples of 4 with zeros and uploads them (synchronously).
  // Layer i's in_features must equal layer i-1's out_features.
  static Status create(std::span<const LinearWeights> layers, int max_batch, Int8Mlp& out);

  Status create_scratch(Scratch& out) const;

  // Runs the network over scratch.input()[0..m) and leaves probabilities and labels in the
  // scratch. 1 <= m <= max_batch. Asynchronous: the results are ready when `stream` is.
  // The first call for an m on a scratch captures the graph (and runs it); the default
  // stream (nullptr) cannot be captured and gets the kernels one by one.
  Status enqueue(Scratch& scratch, int m, cudaStream_t stream) const;

  // Graphs on (the default) or off: off enqueues every kernel on every call (benchmarks
  // compare the two).
  void set_graphs(bool on) noexcept { use_graphs_ = on; }

  int in_features() const noexcept { return layers_.front().in_features; }
  int classes() const noexcept { return layers_.back().out_features; }
  int max_batch() const noexcept { return max_batch_; }
  std::size_t layer_count() const noexcept { return layers_.size(); }

 private:
  // Device layout of one layer, in weights_ at these byte offsets:
  //   weight INT8 [n_padded, k_padded] (zero rows/columns beyond out/in features)
  //   col_scale FP32 [n_padded] (zeros beyond), bias FP32 [n_padded] (zeros beyond)
  struct Layer {
    int out_features, in_features, n_padded, k_padded;
    Activation activation;
    std::size_t weight_offset, scale_offset, bias_offset;
  };

  Status enqueue_kernels(Scratch& scratch, int m, cudaStream_t stream) const;

  CublasLt lt_;
  DeviceBuffer weights_;
  std::vector<Layer> layers_;
  int max_batch_ = 0;
  int max_k_padded_ = 0, max_n_padded_ = 0, max_width_ = 0;
  bool use_graphs_ = true;
};

}  // namespace coinfer::cuda
