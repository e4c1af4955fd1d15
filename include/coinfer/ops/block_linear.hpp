#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "coinfer/core/page_arena.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer {

// ggml's block formats that BlockLinear multiplies: 32 weights per block, an output channel's
// inputs in consecutive blocks, the bytes as a GGUF file stores them.
enum class WeightBlocks {
  q4_1,  // FP16 scale d, FP16 min m, 16 bytes of 4-bit q (input j in the low nibble of byte j,
         // input j + 16 in its high nibble): w = d * q + m. 20 bytes, 0.625 per weight.
  q8_0,  // FP16 scale d, 32 signed bytes q: w = d * q. 34 bytes.
};

const char* to_string(WeightBlocks format) noexcept;

// How BlockLinear quantizes a row's activations, per block of 32 inputs.
enum class BlockActivations {
  // One signed byte per input and a scale per block (max |x| / 127), as llama.cpp's CPU
  // kernels do (Q8_0, Q8_1): the fastest.
  int8,
  // That byte and a second one for what it leaves (x minus its first-byte value, quantized
  // the same way with a scale of its own): about 15 bits per input and two integer products
  // per weight, the same weight bytes read once. For a model whose weights are already
  // quantized it leaves the weights' own rounding as nearly the only difference from FP32.
  int16,
};

const char* to_string(BlockActivations activations) noexcept;
std::size_t weight_block_bytes(WeightBlocks format) noexcept;

// The most BlockLinear::create may use of what the CPU has (each gives the same bits; tests
// compare them on one machine).
enum class BlockKernels {
  avx2,         // 8-channel tiles (vpmaddubsw)
  avx512_vnni,  // 16-channel tiles (vpdpbusd)
  amx,          // and AMX-INT8 tile multiplies for steps of 5-16 rows
};

// A fully connected layer y = x W^T + b whose weights stay in a ggml block format (above) and
// whose activations are quantized per row in blocks of 32 inputs, each block its own scale
// (max |x| / 127), as llama.cpp's CPU kernels do. Each block pair gives an exact integer dot
// product, scaled in FP32 by the weight block's d and the activation block's scale (Q4_1 adds
// m times the activation block's scaled sum). A channel whose activations run far above the
// others sets only its own block's scale, so none is taken out of the integer product (what
// Int8Linear's FP32 side channels are for), and 4-bit weights are 0.625 bytes per weight.
//
// With BlockActivations::int16 each row's second byte is a row of its own in the same tiles,
// added into the first's result: twice the multiplies, the same weight bytes.
//
// Columns are split over the compute team (compute_threads.hpp): for up to 16 rows (a decode
// step) one contiguous run per thread, for more in small chunks taken in turn; rows run in
// tiles (up to 8) that share each weight block from registers, so a step of a few rows reads
// every weight byte once. AVX2 (the build's x86-64-v3: 8 channels a vector), AVX-512 VNNI chosen
// at run time (16 channels a 512-bit vector, vpdpbusd), with AMX-INT8 where the CPU has it for
// steps of 5-16 rows (a block of all of them as one tile multiply, tdpbsud), or portable C++;
// every one gives the same bits.
// forward() allocates nothing. One instance is never run concurrently; distinct instances may
// be.
class BlockLinear {
 public:
  static constexpr int block = 32;

  BlockLinear();  // empty: usable only as the target of create()
  ~BlockLinear();
  BlockLinear(BlockLinear&&) noexcept;
  BlockLinear& operator=(BlockLinear&&) noexcept;

  // blocks: out_features rows of in_features / 32 blocks each (in_features a multiple of 32,
  // at most 65,536), copied. bias: FP32 [out_features] or empty for none. forward() takes up to
  // max_batch rows. kernels: the most to use where the CPU has it (AVX-512 VNNI only where
  // oneDNN's ISA is not capped below it); each gives the same bits. arena: where the repacked
  // weights go (a model's layers side by side on 2 MiB pages), which must outlive the layer;
  // null: memory of the layer's own.
  static Status create(WeightBlocks format, std::span<const std::byte> blocks,
                       std::span<const float> bias, int out_features, int in_features,
                       int max_batch, BlockLinear& out,
                       BlockActivations activations = BlockActivations::int8,
                       BlockKernels kernels = BlockKernels::amx, PageArena* arena = nullptr);

  // x: FP32 [m, in_features]; y: FP32 [m, out_features]; 1 <= m <= max_batch; no overlap.
  // A row's result does not depend on m or on the other rows.
  Status forward(const float* x, int m, float* y);

  WeightBlocks format() const noexcept;
  BlockActivations activations() const noexcept;
  int in_features() const noexcept;
  int out_features() const noexcept;
  int max_batch() const noexcept;
  const char* kernel() const noexcept;  // "amx", "avx512_vnni", "avx2" or "portable"
  std::size_t weight_bytes() const noexcept;  // the blocks and the bias

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace coinfer
