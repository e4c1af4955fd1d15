#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"
#include "coinfer/ops/cuda/cublaslt_gemm.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"

namespace coinfer::cuda {

// One linear of a BERT layer as the CPU model holds it: FP32 weight [out, in] row-major and
// bias [out], and the input channels that run in FP32 beside the INT8 GEMM (their weight
// columns leave the INT8 weights; see Int8LinearOptions::fp32_input_channels).
struct BertLinear {
  std::span<const float> weight;
  std::span<const float> bias;
  int out_features = 0;
  int in_features = 0;
  Activation activation = Activation::none;
  std::span<const int> fp32_channels;
};

struct BertLayer {
  BertLinear qkv;                        // [3 * hidden, hidden]: query, key, value stacked
  BertLinear attention_out;              // [hidden, hidden]
  BertLinear intermediate;               // [ffn, hidden], GELU
  BertLinear output;                     // [hidden, ffn]
  std::span<const float> attention_norm;  // [2, hidden]: gamma, beta
  std::span<const float> output_norm;     // [2, hidden]
};

// Host FP32 weights of a BERT encoder with mean pooling (BertEncoder's; see bert_encoder.hpp).
struct BertWeights {
  int vocab = 0;
  int hidden = 0;
  int heads = 0;
  int max_length = 0;  // rows are at most this long
  float layer_norm_eps = 1e-12f;
  std::span<const float> word_embeddings;      // [vocab, hidden]
  std::span<const float> position_embeddings;  // [max_length, hidden], token type 0 folded in
  std::span<const float> embedding_norm;       // [2, hidden]
  std::vector<BertLayer> layers;
};

// A BERT sentence encoder on the GPU, the twin of the CPU's INT8 BertEncoder over packed rows:
//   embeddings + LayerNorm -> per layer: fused QKV (INT8), attention (FP32), output projection
//   (INT8), residual + LayerNorm, FFN up (INT8, GELU), FFN down (INT8), residual + LayerNorm
//   -> mean pooling + L2 normalization.
// Each INT8 linear: quantize rows (per token, side channels left out of the scale) ->
// cuBLASLt INT8 GEMM (INT32 accumulate) -> dequantize + bias + side channels + activation.
// Weights are quantized per output channel with |q| <= 127 (the GPU's INT8 GEMM has no u8
// saturation to avoid, unlike AVX2 without VNNI on the CPU). Everything is enqueued on the
// caller's stream; each lane (stream) has its own Scratch, so lanes run concurrently.
class Int8BertEncoder {
 public:
  // One lane's device memory for max_rows rows of max_tokens tokens in all. The input
  // region holds the batch's ids (INT32 [max_tokens]) then its offsets (INT32 [max_rows + 1])
  // at input_offsets_byte(): one H2D copy fills both.
  class Scratch {
   public:
    std::byte* input() const noexcept { return input_; }
    const float* embeddings() const noexcept { return embeddings_; }

   private:
    friend class Int8BertEncoder;
    DeviceBuffer memory_;
    std::byte* input_ = nullptr;
    std::int32_t* ids_ = nullptr;
    std::int32_t* offsets_ = nullptr;
    float* x_ = nullptr;        // [max_tokens, hidden]: the residual stream
    float* wide_ = nullptr;     // [max_tokens, max(3 * hidden, ffn)]
    float* context_ = nullptr;  // [max_tokens, hidden]
    float* projected_ = nullptr;  // [max_tokens, hidden]
    std::int8_t* quantized_ = nullptr;
    float* row_scales_ = nullptr;
    std::int32_t* accumulator_ = nullptr;
    float* embeddings_ = nullptr;  // [max_rows, hidden]
    std::vector<GemmPlan> plans_;  // one per linear shape (see Linear::plan)
  };

  static constexpr std::size_t workspace_bytes = 32 << 20;  // cuBLASLt's, per lane

  // Quantizes and uploads the weights (synchronously). Shapes are checked against `hidden`.
  static Status create(const BertWeights& weights, int max_rows, int max_tokens,
                       Int8BertEncoder& out);
  Status create_scratch(Scratch& out) const;

  // Byte offset of the offsets within Scratch::input(), and the input region's size.
  std::size_t input_offsets_byte() const noexcept;
  std::size_t input_bytes() const noexcept;

  // Encodes `rows` rows of `tokens` tokens in all, whose ids and offsets are in
  // scratch.input() (checked by the caller: ids within the vocabulary, rows of 1..max_length
  // tokens), into scratch.embeddings() [rows, hidden]. Asynchronous on `stream`.
  Status enqueue(Scratch& scratch, int rows, int tokens, cudaStream_t stream) const;

  int hidden() const noexcept { return hidden_; }
  int max_rows() const noexcept { return max_rows_; }
  int max_tokens() const noexcept { return max_tokens_; }

 private:
  // Device layout of one linear in weights_, at these byte offsets:
  //   weight INT8 [n_padded, k_padded] (zero rows/columns beyond, zero side columns),
  //   col_scale FP32 [n_padded], bias FP32 [n_padded], side channels INT32 [side] and their
  //   weights FP32 [side, n], keep mask UINT32 [k] (only with side channels).
  struct Linear {
    int n = 0, k = 0, n_padded = 0, k_padded = 0, side = 0;
    Activation activation = Activation::none;
    std::size_t plan = 0;  // index of its GemmPlan (linears of one shape share one)
    std::size_t weight = 0, scale = 0, bias = 0, channels = 0, side_weight = 0, keep = 0;
  };
  struct Layer {
    Linear qkv, attention_out, intermediate, output;
    std::size_t attention_norm = 0, output_norm = 0;  // FP32 [2, hidden] each
  };

  Status linear(const Linear& l, Scratch& s, const float* x, int m, float* y,
                cudaStream_t stream) const;

  CublasLt lt_;
  DeviceBuffer weights_;
  std::vector<Layer> layers_;
  std::vector<std::pair<int, int>> plan_shapes_;  // (n_padded, k_padded) per GemmPlan
  std::size_t word_ = 0, position_ = 0, embedding_norm_ = 0;
  int hidden_ = 0, heads_ = 0, ffn_ = 0, max_length_ = 0;
  float eps_ = 1e-12f;
  int max_rows_ = 0, max_tokens_ = 0;
  int max_k_padded_ = 0, max_n_padded_ = 0;
};

}  // namespace coinfer::cuda
