#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/models/gguf.hpp"
#include "coinfer/ops/block_linear.hpp"

namespace coinfer {

// A llama-family decoder as data: what differs between Llama 2/3, Mistral (GGUF architecture
// "llama") and Qwen2 ("qwen2") is read from the GGUF metadata and tensors rather than coded
// as a class per architecture. Every block is RMSNorm -> attention (RoPE, grouped-query) ->
// RMSNorm -> SwiGLU (SiLU gate) with residuals; what varies:
struct DecoderSpec {
  std::string architecture;  // general.architecture: "llama" or "qwen2"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention: heads / kv_heads query heads share one K/V head
  int head_dim = 0;
  int ffn = 0;  // SwiGLU inner width
  int vocab = 0;
  int context = 0;  // the longest sequence (positions) the model was trained for
  float rms_eps = 1e-5f;
  // RoPE: which dimensions rotate together. ggml's "normal" (llama: pairs (2i, 2i+1), the
  // GGUF converter permuted Q and K for it) or "neox" (qwen2: pairs (i, i + head_dim / 2), as
  // Hugging Face's checkpoints); base theta; no scaling (a scaling key is refused at load).
  enum class Rope { normal, neox } rope = Rope::normal;
  float rope_theta = 10000.0f;
  bool attention_bias = false;  // Q, K and V projections have biases (qwen2)
  bool tied_output = true;      // the output head is the token embedding (no output.weight)
  std::string vocabulary;       // tokenizer.ggml.model ("gpt2": byte-level BPE), if present

  int qkv_width() const noexcept { return (heads + 2 * kv_heads) * head_dim; }
  // Reads the spec; a key or tensor whose meaning this decoder cannot honour (an unknown
  // architecture, RoPE scaling, partial RoPE, key/value sizes apart from the head size) is an
  // error naming it.
  static Status from_gguf(const GgufFile& file, DecoderSpec& out);
};

enum class LlamaPrecision {
  fp32,  // FP32 GEMMs on the dequantized weights: the reference path
  // The linear layers and the output head in ggml's Q8_0 blocks (a Q8_0 tensor of the file as
  // it is, any other quantized to Q8_0: one FP16 scale per 32 weights), activations quantized
  // per 32 inputs (BlockLinear, llama.cpp's Q8_0 scheme). No calibration, 1.0625 bytes per
  // weight.
  int8,
  // 4-bit weights in ggml's Q4_1 blocks (a Q4_1 tensor of the file as it is, any other
  // quantized to Q4_1), the output head in Q8_0 blocks; activations as int8's. No calibration,
  // 0.625 bytes per weight.
  int4,
};

// The precision that runs a file's own weights as they are: int4 where its linear layers are
// mostly 4-bit (Q4_0, Q4_1), int8 otherwise (Q8_0, F16, F32).
LlamaPrecision file_precision(const GgufFile& file) noexcept;

struct LlamaOptions {
  LlamaPrecision precision = LlamaPrecision::int8;
  // int8 and int4: how the activations are quantized (BlockActivations): int8 (one byte per
  // input, as llama.cpp) or int16 (a second byte for the residual: about FP32's agreement,
  // twice the integer multiplies). Not used by fp32.
  BlockActivations activations = BlockActivations::int8;
  int max_step_tokens = 256;  // tokens one forward() may carry (the scheduler's budget)
  int kv_blocks = 64;         // paged KV cache size in blocks (see kv_block_bytes)
  int block_size = 16;        // tokens per KV block
};

// One sequence's part of a forward step: tokens [token_begin, token_begin + token_count) of
// the step's token array, at positions position .. position + token_count - 1 (the tokens
// before `position` are already in its KV blocks). `block_table` maps positions to KV blocks
// (position p lives in block block_table[p / block_size], slot p % block_size) and covers
// every position up to the step's last.
struct LlamaSequenceStep {
  int token_begin = 0;
  int token_count = 0;
  int position = 0;
  std::span<const std::int32_t> block_table;
  int logit_rows = 1;  // logits for the last logit_rows tokens (0: none, token_count: all)
};

// A llama-family decoder (DecoderSpec: RMSNorm, RoPE, grouped-query attention, SwiGLU, QKV
// biases or none, tied or separate output head) loaded from GGUF weights, run on ragged steps over
// a paged KV cache: prefill chunks and single-token decodes of many sequences share one forward,
// every GEMM running on the [step tokens, hidden] matrix. In INT8 and INT4 the weights stay in
// ggml blocks (coinfer::BlockLinear): the file's own where they are of the precision's format,
// else quantized to it at load; FP32 dequantizes them. The KV cache is
// [layer][block][kv_head][slot][head_dim] in FP16 (llama.cpp's default): a head's keys of one
// block are contiguous.
// One forward at a time (the generation engine's thread).
class LlamaModel {
 public:
  ~LlamaModel();

  static Status load(const std::string& path, const LlamaOptions& options,
                     std::unique_ptr<LlamaModel>& out);
  static Status load(GgufFile file, const LlamaOptions& options, std::unique_ptr<LlamaModel>& out);

  // Bytes one KV block takes over all layers (K and V).
  static std::size_t kv_block_bytes(const DecoderSpec& config, int block_size) noexcept;

  const DecoderSpec& config() const noexcept { return config_; }
  const LlamaOptions& options() const noexcept { return options_; }
  const GgufFile& file() const noexcept { return file_; }

  // The quantized layers' weights as the kernels hold them (int8 and int4; 0 for fp32): bytes
  // in all, and how many of them the kernel backs with 2 MiB pages now (PageArena).
  struct WeightMemory {
    std::size_t bytes = 0;
    std::size_t huge = 0;
  };
  WeightMemory weight_memory() const;

  // Runs the step; `logits` becomes [rows, vocab] with one row per requested position, in
  // sequence order (each sequence's last logit_rows tokens, in order).
  // Errors (bad ids, positions past the context, tables too short, too many tokens) name the
  // sequence and leave the KV cache untouched.
  Status forward(std::span<const std::int32_t> tokens, std::span<const LlamaSequenceStep> steps,
                 std::vector<float>& logits);

  // Copy-on-write: block `dst` gets `src`'s keys and values in every layer.
  void copy_block(std::int32_t src, std::int32_t dst) noexcept;

 private:
  struct Weights;
  LlamaModel();
  Status init(GgufFile file, const LlamaOptions& options);

  DecoderSpec config_;
  LlamaOptions options_;
  GgufFile file_;  // kept mapped: token embeddings are read from it row by row
  std::unique_ptr<Weights> weights_;
};

}  // namespace coinfer
