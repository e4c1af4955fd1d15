#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/cuda/cublaslt_gemm.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"
#include "coinfer/ops/cuda/llm_kernels.hpp"

namespace coinfer::cuda {

// A llama-family decoder's host FP32 weights (models/llama.hpp's DecoderSpec, the GGUF's
// tensors dequantized), as the device model takes them at load.
struct LlamaWeights {
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int context = 0;  // positions the RoPE tables cover
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  bool neox = false;  // RoPE pairs (i, i + head_dim / 2) instead of (2i, 2i + 1)
  struct Layer {
    std::span<const float> attention_norm;  // [hidden]
    std::span<const float> qkv;             // [(heads + 2 kv_heads) head_dim, hidden]: Q, K, V
    std::span<const float> qkv_bias;        // [(heads + 2 kv_heads) head_dim], or empty
    std::span<const float> attention_out;   // [hidden, heads head_dim]
    std::span<const float> ffn_norm;        // [hidden]
    std::span<const float> gate_up;         // [2 ffn, hidden]: the gate's rows, then up's
    std::span<const float> down;            // [hidden, ffn]
  };
  std::vector<Layer> blocks;
  std::span<const float> embedding;    // [vocab, hidden]
  std::span<const float> output_norm;  // [hidden]
  std::span<const float> head;         // [vocab, hidden] (the embedding when tied)
};

// One step as generation::DeviceStep lays it out (see device_step.hpp): per token its id,
// position and KV slot (-1: write nothing); per row query_start [rows + 1], context_lens
// [rows] and block tables [rows, table_width]; the tokens whose logits are wanted.
struct LlamaStepView {
  std::span<const std::int32_t> token_ids, positions, slots;
  std::span<const std::int32_t> query_start, context_lens, block_tables;
  int table_width = 0;
  std::span<const std::int32_t> logit_tokens;
  int returned_logits = -1;  // logit rows copied back, the first ones; -1: all of them
  // The longest row's tokens: above 1, attention runs the tiled prefill kernel (0: unknown,
  // the per-token kernel for every row).
  int max_query_tokens = 0;
};

struct Int8LlamaOptions {
  int kv_blocks = 0;  // the paged KV cache in blocks; 0: sized from the device's free memory
  // With kv_blocks 0: the share of the device's whole memory that this process may hold once
  // the cache is allocated (vLLM's gpu_memory_utilization); the cache takes what the weights,
  // the scratch and everything already allocated leave of it.
  double memory_fraction = 0.9;
  int block_size = 16;        // tokens per KV block
  int max_step_tokens = 512;  // tokens one step may carry
  int max_rows = 256;         // sequences one step may carry
};

// A llama-family decoder on the GPU over a paged KV cache in device memory, the twin of the
// CPU's LlamaModel: per layer RMSNorm + INT8 quantization -> QKV (cuBLASLt INT8, bias) -> RoPE
// and the FP16 KV write -> paged attention (GQA) -> INT8 output projection added to the
// residual -> RMSNorm + quantization -> gate and up as one GEMM -> SwiGLU + quantization ->
// down projection added to the residual; then the final norm and the INT8 output head over
// the logit tokens only. Weights are quantized per output channel (|q| <= 127) and uploaded
// once; the KV cache is [layer][block][kv_head][slot][head_dim] FP16 as the CPU's.
// One step at a time on the caller's stream (the generation engine's thread).
//
// CUDA graphs: a decode step whose shape repeats (one token per row, every row's logits, the
// tables max_table_width() wide: a generation::DeviceStep with `graph` set) can be replayed
// from a graph captured for its row count. The first step of a size runs eagerly and is then
// captured (capture launches nothing); later ones upload their inputs, replay and copy back.
// A size whose capture fails runs eagerly from then on (graph_error() says why).
class Int8Llama {
 public:
  static constexpr std::size_t workspace_bytes = 32 << 20;  // cuBLASLt's

  static Status create(const LlamaWeights& weights, const Int8LlamaOptions& options,
                       Int8Llama& out);

  // Runs the step and leaves logits [logit tokens, vocab] in `logits` (the first
  // `returned_logits` of them; copied back, the stream synchronized). The view's arrays are
  // checked by the caller (build_device_step). `graph`: replay the graph of this step's size
  // (see above; never on the legacy default stream, where steps run eagerly).
  Status forward(const LlamaStepView& step, std::vector<float>& logits, cudaStream_t stream,
                 bool graph = false);
  // As forward, but a token per returned logit row, drawn on the device (sample_rows, after
  // the graph if one is replayed) as `draws` say, comes back instead of the logits.
  Status forward_sampled(const LlamaStepView& step, std::span<const RowSampling> draws,
                         std::vector<std::int32_t>& tokens, cudaStream_t stream,
                         bool graph = false);

  // Copy-on-write: block dst gets src's keys and values in every layer.
  Status copy_block(std::int32_t src, std::int32_t dst, cudaStream_t stream);

  int vocab() const noexcept { return vocab_; }
  int kv_blocks() const noexcept { return kv_blocks_; }
  int max_table_width() const noexcept { return max_table_width_; }
  std::size_t kv_bytes() const noexcept { return kv_.bytes(); }
  std::size_t weight_bytes() const noexcept { return weights_.bytes(); }
  int graphs() const noexcept { return static_cast<int>(graphs_.size()); }  // captured sizes
  const Status& graph_error() const noexcept { return graph_error_; }

 private:
  struct Linear {
    int n = 0, k = 0;        // out and in features (multiples of 4)
    std::size_t weight = 0;  // INT8 [n, k] in weights_
    std::size_t scale = 0;   // FP32 [n]
    std::size_t bias = 0;    // FP32 [n], or kNone
    std::size_t plan = 0;    // index into plans_
  };
  struct Layer {
    std::size_t attention_norm = 0, ffn_norm = 0;
    Linear qkv, attention_out, gate_up, down;
  };
  static constexpr std::size_t kNone = ~std::size_t{0};

  struct GraphDeleter {
    void operator()(cudaGraphExec_t graph) const noexcept;
  };
  using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphDeleter>;

  Status gemm(const Linear& l, int m, cudaStream_t stream);
  // Checks and uploads the step, then replays its graph or runs it: the logits of its logit
  // tokens are left in logits_. `returned`: the rows the caller wants back.
  Status run(const LlamaStepView& step, cudaStream_t stream, bool graph, int& returned);
  // Every kernel of a step whose inputs are on the device (launches only: capturable).
  Status compute(int tokens, int rows, int wanted, int table_width, int max_query_tokens,
                 cudaStream_t stream);
  Status capture(int tokens, cudaStream_t stream, GraphExec& out);

  int layers_ = 0, hidden_ = 0, heads_ = 0, kv_heads_ = 0, head_dim_ = 0, ffn_ = 0, vocab_ = 0;
  int block_size_ = 0, kv_blocks_ = 0, max_tokens_ = 0, max_rows_ = 0, context_ = 0;
  int max_table_width_ = 0;  // blocks for the whole context
  float eps_ = 0.0f;
  bool neox_ = false;
  CublasLt lt_;
  DeviceBuffer weights_;  // embedding FP16, norms, the linears, the RoPE tables
  std::size_t embedding_ = 0, output_norm_ = 0, cos_ = 0, sin_ = 0;
  std::vector<Layer> blocks_;
  Linear head_;
  DeviceBuffer kv_;                  // keys then values, per layer
  std::size_t layer_kv_values_ = 0;  // FP16 values of one layer's keys (= its values)
  DeviceBuffer scratch_;       // step inputs, activations, quantized rows, accumulators, logits
  std::size_t step_ints_ = 0;  // INT32 inputs at the scratch's start (token ids ... tables)
  std::int32_t* ints_ = nullptr;
  float *x_ = nullptr, *wide_ = nullptr, *attention_ = nullptr, *logits_ = nullptr;
  float *row_scales_ = nullptr, *gathered_ = nullptr;
  RowSampling* draws_ = nullptr;  // a sampled step's settings per row [max tokens]
  std::int32_t* tokens_ = nullptr;  // and its tokens
  std::int8_t* quantized_ = nullptr;
  std::int32_t* accumulator_ = nullptr;
  std::vector<GemmPlan> plans_;
  std::vector<std::pair<int, int>> plan_shapes_;  // (n, k) per plan
  PinnedBuffer host_draws_;  // RowSampling [max tokens], then the sampled tokens
  PinnedBuffer host_ints_;  // the step's INT32 arrays as the device reads them, uploaded at once
  std::vector<std::pair<int, GraphExec>> graphs_;  // (tokens, graph) per captured size
  std::vector<int> eager_sizes_;                   // sizes whose capture failed
  Status graph_error_;
};

}  // namespace coinfer::cuda
