#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "coinfer/generation/device_step.hpp"
#include "coinfer/generation/model_runner.hpp"
#include "coinfer/models/gguf.hpp"
#include "coinfer/ops/cuda/int8_llama.hpp"

namespace coinfer::generation {

struct CudaLlamaOptions {
  int device = 0;                  // CUDA device index
  cuda::Int8LlamaOptions model;    // KV cache (a size, or a share of device memory), step limits
  bool graphs = true;              // decode steps replayed from CUDA graphs (false: all eager)
  GraphBuckets buckets;            // the decode batch sizes captured (default: 1, 2, 4, 8k)
};

// A llama-family decoder from a GGUF file on a GPU behind ModelRunner (cuda::Int8Llama): the
// weights dequantized on the host, requantized to INT8 per output channel and uploaded once;
// the paged KV cache in device memory, blocks decided by the engine's BlockManager as for the
// CPU runner. Each step's chunks become one upload (build_device_step) and its logits come
// back to the host for the engine's sampler. Decode-only steps replay CUDA graphs captured per
// batch-size bucket (padded rows inert); other steps run eagerly. Only built with CUDA.
class CudaLlamaRunner final : public ModelRunner {
 public:
  static Status load(const GgufFile& file, const CudaLlamaOptions& options,
                     std::unique_ptr<CudaLlamaRunner>& out);
  ~CudaLlamaRunner() override;

  const RunnerLimits& limits() const noexcept override { return limits_; }
  const cuda::Int8Llama& model() const noexcept { return model_; }
  // The device and the runner's stream, on the engine's thread.
  void bind_thread() override;
  void copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) override;
  Status execute(std::span<const ScheduledChunk> chunks, std::vector<float>& logits) override;
  bool samples_on_device() const noexcept override { return true; }
  Status execute_sampled(std::span<const ScheduledChunk> chunks, std::span<const DeviceDraw> draws,
                         std::vector<std::int32_t>& tokens) override;

 private:
  CudaLlamaRunner() = default;

  CudaLlamaOptions options_;
  RunnerLimits limits_;
  cuda::Int8Llama model_;
  cudaStream_t stream_ = nullptr;
  Status stream_status_;  // why bind_thread() could not make the stream, if it could not
  Status copy_status_;    // the last failed block copy, reported by the next step
  GraphBuckets buckets_;  // options_.buckets, or none when graphs are off
  DeviceStep step_;
  std::vector<std::int32_t> every_row_;  // a graph step's logit tokens: 0 .. rows - 1
  std::vector<float> graph_logits_;      // its logits before the padding's are dropped
  std::vector<cuda::RowSampling> draws_;  // per row the graph computes
  std::vector<std::int32_t> graph_tokens_;

  // Checks the chunks and lays out the step (step_); the view the model runs.
  Status prepare(std::span<const ScheduledChunk> chunks, cuda::LlamaStepView& view);
};

}  // namespace coinfer::generation
