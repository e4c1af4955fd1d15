#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// The kernels of a BERT encoder over packed rows (the GPU twins of ops/layer_norm,
// ops/attention and BertEncoder's embeddings and pooling). Rows are never padded: row r holds
// tokens offsets[r] .. offsets[r + 1] - 1 of a [tokens, ...] matrix; offsets: device INT32
// [rows + 1], offsets[0] == 0, every row at least one token. Each function enqueues on
// `stream` and returns the launch status. All matrices are row-major FP32.

// x[t] = LayerNorm(word[ids[t]] + position[p]) with p the token's place in its row:
//   ids: INT32 [tokens] (within the table); word: [vocab, n]; position: [max_length, n]
//   (token type 0 folded in); gamma, beta: [n]; x: [tokens, n].
Status embed_layer_norm(const std::int32_t* ids, const std::int32_t* offsets, int rows, int tokens,
                        const float* word, const float* position, const float* gamma,
                        const float* beta, int n, float eps, float* x, cudaStream_t stream);

// y = LayerNorm(x + residual) row by row (residual may be null); y may alias x or residual.
// Biased variance, FP32 statistics, as add_layer_norm on the CPU.
Status add_layer_norm(const float* x, const float* residual, const float* gamma, const float* beta,
                      int m, int n, float eps, float* y, cudaStream_t stream);

// Multi-head self-attention within each row, as self_attention on the CPU:
//   out[t, head h] = softmax((q_t · scale) K_h^T) V_h over the tokens of t's row
//   qkv: [tokens, 3 * heads * head_dim] (per token Q, then K, then V, head h at h * head_dim);
//   out: [tokens, heads * head_dim]. Rows of at most max_length tokens; head_dim <= 256.
Status self_attention(const float* qkv, const std::int32_t* offsets, int rows, int tokens,
                      int heads, int head_dim, float scale, int max_length, float* out,
                      cudaStream_t stream);

// embedding[r] = mean of x over row r's tokens, L2-normalized (eps 1e-12 on the norm, as
// torch.nn.functional.normalize): x: [tokens, n]; embedding: [rows, n].
Status mean_pool_normalize(const float* x, const std::int32_t* offsets, int rows, int n,
                           float* embedding, cudaStream_t stream);

}  // namespace coinfer::cuda
