#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// The kernels of a decoder-only language model's step over a paged KV cache (the device twins
// of models/llama.cpp's RMSNorm, SwiGLU, RoPE and attention), for the CUDA model runner. A
// step is laid out as generation::DeviceStep lays it out: `tokens` query tokens, each with a
// position and a KV slot (block * block_size + position % block_size, -1 for a padding row's
// token); rows (one per sequence) with query_start [rows + 1] and row-major block tables
// [rows, table_width]. The KV cache of one layer is FP16 [blocks][kv_heads][block_size]
// [head_dim] for keys and the same for values, as the CPU runner's (a head's keys of one block
// are contiguous). Each function enqueues on
// `stream` and returns the launch status; matrices are row-major.

// x[t] = table[ids[t]]: the token embeddings, FP16 [vocab, n] on the device, as FP32 rows
// [tokens, n]. An id outside [0, vocab) gives a row of zeros (the host refuses such ids first).
Status embed_tokens(const std::int32_t* ids, int tokens, const std::uint16_t* table, int vocab,
                    int n, float* x, cudaStream_t stream);

// out[i] = x[index[i]] for i < count: rows of n floats (the tokens whose logits a step wants).
Status gather_rows(const float* x, const std::int32_t* index, int count, int n, float* out,
                   cudaStream_t stream);

// Per row of x [m, n]: y = x / sqrt(mean(x^2) + eps) * weight, then quantized to INT8 for the
// next GEMM: scale[r] = max |y| / 127, q = round(y / scale) (0 and scale 0 for a row of zeros).
Status rms_norm_quantize(const float* x, const float* weight, int m, int n, float eps,
                         std::int8_t* q, float* scale, cudaStream_t stream);

// Per row of gate_up [m, 2f] (the gate's f columns, then the up projection's): h = silu(gate)
// * up, quantized as above to q [m, f] and scale [m].
Status silu_mul_quantize(const float* gate_up, int m, int f, std::int8_t* q, float* scale,
                         cudaStream_t stream);

// RoPE and the KV write, per token of qkv [tokens, (heads + 2 kv_heads) * head_dim] (Q's heads,
// then K's, then V's): Q and K rotated in place by the token's position (pairs (2i, 2i + 1),
// or (i, i + head_dim / 2) when neox; cos/sin tables [context, head_dim / 2]), then K and V
// written as FP16 to the layer's caches at the token's slot (none for slot -1).
Status rope_write_kv(float* qkv, const std::int32_t* positions, const std::int32_t* slots,
                     int tokens, int heads, int kv_heads, int head_dim, int block_size,
                     const float* cos_table, const float* sin_table, bool neox,
                     std::uint16_t* k_cache, std::uint16_t* v_cache, cudaStream_t stream);

// Causal attention over the paged cache, prefill chunks and decodes alike: the query token at
// position p of row r attends to positions 0..p of its sequence, read through r's block table
// (the step's own keys written there first by rope_write_kv). GQA: query head h reads KV head
// h / (heads / kv_heads); one block per (token, KV head) loads each key and value once for its
// group of query heads, with an online softmax over tiles of 32 positions. Padding rows
// (context 0) write zeros. q: the Q part of qkv (row stride qkv_stride floats);
// out [tokens, heads * head_dim]. head_dim a multiple of 32, at most 128; heads / kv_heads
// at most 32.
Status paged_attention(const float* q, int qkv_stride, const std::uint16_t* k_cache,
                       const std::uint16_t* v_cache, const std::int32_t* positions,
                       const std::int32_t* query_start, const std::int32_t* context_lens,
                       const std::int32_t* block_tables, int table_width, int rows, int tokens,
                       int heads, int kv_heads, int head_dim, int block_size, float scale,
                       float* out, cudaStream_t stream);

// The same attention for a step with prompt chunks (`max_query_tokens`: its longest row's
// tokens), tiled as FlashAttention's prefill: one thread block per (8 consecutive query tokens
// of one row, KV head) stages each tile of 32 keys and values in shared memory once for
// those tokens and the KV head's group of query heads, with an online softmax per query token
// and positions past a token's own masked. Rows' tokens are at consecutive positions. A
// decode-only step (max_query_tokens 1), or a head group whose tiles would need more than
// 48 KiB of shared memory, goes to paged_attention.
Status prefill_attention(const float* q, int qkv_stride, const std::uint16_t* k_cache,
                         const std::uint16_t* v_cache, const std::int32_t* positions,
                         const std::int32_t* query_start, const std::int32_t* context_lens,
                         const std::int32_t* block_tables, int table_width, int rows, int tokens,
                         int max_query_tokens, int heads, int kv_heads, int head_dim,
                         int block_size, float scale, float* out, cudaStream_t stream);

// One row's sampling settings (generation::SamplingParams as the CPU sampler reads them, the
// penalties and logit biases applied to the logits before), with the request's uniform draw.
struct RowSampling {
  float temperature = 0.0f;  // below 1e-5 (or top_k == 1): the argmax
  std::int32_t top_k = -1;   // -1 or 0: off
  float top_p = 1.0f;        // (0, 1]
  float min_p = 0.0f;        // [0, 1]
  float uniform = 0.0f;      // [0, 1), from the request's generator on the host
};

// A token per row of logits [rows, vocab], as generation::Sampler draws it: the first argmax
// for greedy rows; else weights exp((logit - max) / temperature) over the top_k likeliest
// logits, those of at least min_p (the likeliest weighs 1), then the smallest set of likeliest
// whose weight reaches top_p of theirs, and the token where uniform * their total falls in
// their cumulative weight in vocabulary order. The candidate sets are found by bisecting
// thresholds instead of sorting, so tokens tied exactly at a top-k or top-p boundary are all
// kept (the CPU keeps the lower ids); the distribution is otherwise the CPU's. One block
// (1024 threads) per row; `scratch` holds rows * vocab floats (the weights).
Status sample_rows(const float* logits, int rows, int vocab, const RowSampling* params,
                   float* scratch, std::int32_t* tokens, cudaStream_t stream);

}  // namespace coinfer::cuda
