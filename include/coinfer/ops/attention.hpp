#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace coinfer {

// Multi-head self-attention over packed sequences, without a mask: each token attends to every
// token of its own row and to nothing else (a BERT encoder over unpadded rows).
struct AttentionShape {
  int heads = 0;
  int head_dim = 0;  // a multiple of 8, at most max_head_dim
  static constexpr int max_head_dim = 256;
};

// Floats of scratch one thread of self_attention() needs for rows of at most max_length tokens.
std::size_t attention_scratch_floats(AttentionShape shape, int max_length) noexcept;

// For each row r (tokens offsets[r] .. offsets[r + 1] - 1, at least one and at most the
// max_length the scratch was sized for) and each head h:
//   out[h] = softmax(Q_h K_h^T * scale) V_h   over the row's tokens, in FP32.
// qkv: FP32 [tokens, 3 * heads * head_dim] row-major, the fused projection's output: per token
//      Q (head h at columns h * head_dim ..), then K, then V, each heads * head_dim wide.
// out: FP32 [tokens, heads * head_dim] row-major, head h at columns h * head_dim (the layout
//      the output projection takes).
// offsets: rows + 1 ascending token indices. scratch: attention_scratch_floats() floats per
// thread: the (row, head) pairs are spread over the compute team (parallel_for), on as many
// threads as the scratch holds. Allocates nothing; the result does not depend on the threads.
void self_attention(const float* qkv, std::span<const std::int64_t> offsets, AttentionShape shape,
                    float scale, std::span<float> scratch, float* out) noexcept;

}  // namespace coinfer
