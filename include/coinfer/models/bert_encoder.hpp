#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/models/model.hpp"
#include "coinfer/ops/attention.hpp"
#include "coinfer/ops/fp32_linear.hpp"
#include "coinfer/ops/int8_linear.hpp"

namespace coinfer {

// How a model runs its GEMMs: INT8 (Int8Linear, serving) or FP32 (Fp32Linear: the reference
// path that tests bound the INT8 error against).
enum class Precision : std::uint8_t { int8, fp32 };

std::string_view to_string(Precision precision) noexcept;

struct BertEncoderOptions {
  int max_batch_size = 64;               // rows per batch
  std::int64_t max_batch_tokens = 8192;  // tokens per batch, summed over its rows
  // Tokens run through the layers at once: a batch with more runs in passes of whole rows.
  // Sizes the activations (9.2 KiB per token at hidden 384, FFN 1536): memory does not grow
  // with max_batch_tokens. At least max_length.
  std::int64_t max_pass_tokens = 2048;
  // Tokens per row, [CLS] and [SEP] included; at most the position table (512 for MiniLM).
  // sentence-transformers truncates all-MiniLM-L6-v2 at 256.
  int max_length = 256;
  int attention_heads = 12;  // the weights do not say; all-MiniLM-L6-v2 has 12 (head_dim 32)
  Precision precision = Precision::int8;
  // INT8 only: per linear, how many input channels run in FP32 beside the INT8 GEMM
  // (Int8LinearOptions::fp32_input_channels): those with the largest activations over a
  // calibration batch run through the FP32 model at load. BERT's hidden states carry a few
  // channels 10-20x larger than the rest; quantized with them, short inputs lose up to 1.5% of
  // cosine. 0: none (and no calibration).
  int int8_fp32_channels = 4;
  // INT8 only: each linear keeps its FP32 weight (Int8Linear::fp32_weight) for a device twin
  // to quantize its own way (CudaBertEncoder); doubles the linears' memory.
  bool keep_fp32_weights = false;
  // A pair classifier's adapter (safetensors), empty for a sentence encoder: low-rank updates
  // of the linears (`<linear>.lora_a` [r, in], `<linear>.lora_b` [out, r], scale folded in),
  // layer norms replacing the base's (same names), and `classifier.weight` [1, hidden],
  // `classifier.bias` [1]. With it the model is a cross-encoder: each row is a pair
  // [CLS] a [SEP] b [SEP], the tokens after the first [SEP] have token type 1, and its output
  // is the sigmoid of the classifier over the mean of the row's last hidden states.
  std::filesystem::path adapter;
};

// Checks a batch of input_ids for a BERT encoder of `vocab` tokens and rows of at most
// `max_length` (both packed rows with offsets, and dense [rows, length] with none), against the
// metadata's max_batch_size and max_batch_tokens, and gives the rows' offsets: the batch's own,
// or `dense_offsets` (max_batch_size + 1 of them) filled for a dense input.
Status check_encoder_batch(const Batch& batch, const ModelMetadata& metadata, int vocab,
                           int max_length, std::span<std::int64_t> dense_offsets,
                           std::span<const std::int64_t>& offsets);

// A BERT sentence encoder: all-MiniLM-L6-v2 and other BertModel checkpoints with mean pooling
// (sentence-transformers' pipeline Transformer -> Pooling(mean) -> Normalize). Sized by its
// safetensors weights (names without a "bert." prefix): embeddings.{word,position,
// token_type}_embeddings.weight, embeddings.LayerNorm.{weight,bias}, and per layer i
// encoder.layer.i.{attention.self.{query,key,value},attention.output.dense,
// intermediate.dense,output.dense}.{weight,bias} and
// encoder.layer.i.{attention.output,output}.LayerNorm.{weight,bias}. GELU is the exact (erf)
// form, layer norms use eps 1e-12, every token has token type 0.
//   input  input_ids  INT32 [-1, -1] ragged: each row's ids, [CLS] ... [SEP], packed
//   output embedding  FP32  [-1, hidden]      mean of the last hidden states over the row's
//                                              tokens, L2-normalized
// With an adapter (BertEncoderOptions::adapter) it scores text pairs instead:
//   output score      FP32  [-1, 1]           sigmoid(classifier . mean of the last hidden
//                                              states), the pair's probability of the label
// INT8 load: the weights are read, the FP32 model runs once over a calibration batch (16 rows
// of 4..64 pseudo-random word pieces between [CLS] and [SEP]) to find each linear's outlier
// input channels, then every linear is quantized and the FP32 copies are dropped.
// Rows are never padded: every GEMM runs on the batch's packed [tokens, hidden] matrix, and
// only attention works row by row. A row's embedding does not depend on the other rows of its
// batch (per-token activation scales, per-row attention).
class BertEncoder final : public Model {
 public:
  static Status load(const std::filesystem::path& weights, std::string name, std::string version,
                     const BertEncoderOptions& options, std::unique_ptr<BertEncoder>& out);

  const ModelMetadata& metadata() const noexcept override { return metadata_; }
  // Also takes a dense [rows, length] input_ids with no offsets (Batch::dense): rows of one
  // length. Errors: a row empty or longer than max_length, a token id outside [0, vocab).
  Status forward(const Batch& batch, std::span<Tensor> outputs) override;

  int hidden_size() const noexcept { return hidden_; }
  int layer_count() const noexcept { return static_cast<int>(layers_.size()); }
  int vocab_size() const noexcept { return vocab_; }
  bool scores_pairs() const noexcept { return !classifier_.empty(); }
  int max_length() const noexcept { return max_length_; }
  Precision precision() const noexcept { return precision_; }

  // The weights, for a device twin (CudaBertEncoder):
  AttentionShape attention_shape() const noexcept { return attention_; }
  std::span<const float> word_embeddings() const noexcept { return word_embeddings_; }
  std::span<const float> position_embeddings() const noexcept { return position_embeddings_; }
  std::span<const float> embedding_norm() const noexcept { return embedding_norm_; }
  std::span<const float> attention_norm(std::size_t layer) const noexcept {
    return layers_[layer].attention_norm;
  }
  std::span<const float> output_norm(std::size_t layer) const noexcept {
    return layers_[layer].output_norm;
  }
  // Linear `index` (4 per layer, in the order they run: QKV, attention output, intermediate,
  // output) at INT8 precision.
  const Int8Linear& int8_linear(std::size_t index) const noexcept {
    return const_cast<BertEncoder*>(this)->linear(index).int8;
  }

 private:
  // One linear layer: int8 when the model serves INT8, fp32 when it serves FP32 (and, during
  // an INT8 load, for the calibration pass only).
  struct Linear {
    Int8Linear int8;
    Fp32Linear fp32;
  };
  struct Layer {
    Linear qkv;            // [3 * hidden, hidden]: query, key and value weights stacked
    Linear attention_out;  // [hidden, hidden]
    Linear intermediate;   // [ffn, hidden], GELU fused
    Linear output;         // [hidden, ffn]
    std::vector<float> attention_norm;  // FP32 [2, hidden]: attention.output.LayerNorm gamma, beta
    std::vector<float> output_norm;     // FP32 [2, hidden]: output.LayerNorm gamma, beta
  };

  BertEncoder() = default;
  Linear& linear(std::size_t index) noexcept;  // 4 per layer, in the order they run
  Status run(Linear& linear, const float* x, int m, float* y);
  // Runs embeddings and layers over packed rows (checked) into hidden_states_.
  // observe(linear index, x, m) sees each linear's input before it runs.
  template <class Observe>
  Status encode(const std::int32_t* ids, std::span<const std::int64_t> offsets, Observe&& observe);
  // Max |x| per input channel of every linear over the calibration batch, FP32 path.
  Status calibrate(std::vector<std::vector<float>>& input_max);
  void allocate_activations(std::size_t tokens);  // hidden_states_, context_, wide_
  // Mean pooling and L2 normalization of the rows at `offsets` in hidden_states_; with a
  // classifier, the pair's score from the mean instead.
  void pool(std::span<const std::int64_t> offsets, float* embedding) const noexcept;

  ModelMetadata metadata_;
  Precision precision_ = Precision::int8;
  int hidden_ = 0;
  int ffn_ = 0;
  int vocab_ = 0;
  int max_length_ = 0;
  int max_pass_tokens_ = 0;
  AttentionShape attention_{};

  std::vector<float> word_embeddings_;      // FP32 [vocab, hidden] row-major
  std::vector<float> position_embeddings_;  // FP32 [max_length, hidden]: position p's row plus
                                            // token type 0's row, summed at load
  std::vector<float> embedding_norm_;       // FP32 [2, hidden]: embeddings.LayerNorm gamma, beta
  // Pair classifiers only (empty otherwise):
  std::vector<float> second_segment_;  // FP32 [hidden]: token type 1's row minus type 0's
  std::vector<float> classifier_;      // FP32 [hidden + 1]: weight, then bias
  std::vector<Layer> layers_;

  // Activations for one pass of max_pass_tokens tokens, packed rows (token t of the pass is
  // row t):
  std::vector<float> hidden_states_;  // FP32 [max_pass_tokens, hidden]: the residual stream
  std::vector<float> context_;        // FP32 [max_pass_tokens, hidden]: attention's output,
                                      // then the FFN's output
  std::vector<float> wide_;  // FP32 [max_pass_tokens, max(3 * hidden, ffn)]: Q|K|V per token,
                             // then the attention projection ([.., hidden]), then the FFN's
                             // GELU activations ([.., ffn])
  std::vector<float> attention_scratch_;    // attention_scratch_floats(attention_, max_length)
                                            // per thread of the compute team
  std::vector<std::int64_t> offsets_;       // [max_batch_size + 1]: offsets of a dense input
  std::vector<std::int64_t> pass_offsets_;  // [max_batch_size + 1]: one pass's, from 0
};

}  // namespace coinfer
