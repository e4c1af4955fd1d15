#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/activation.hpp"

namespace coinfer {

// How create() builds a layer.
struct Int8LinearOptions {
  int max_batch = 1;  // the most rows one forward() takes
  // The most rows one oneDNN GEMM runs: a larger batch runs as consecutive chunks of this many
  // rows, each quantized, multiplied and finished by the epilogue before the next. The scratch
  // then holds max_gemm_rows rows instead of max_batch, and a chunk's accumulator is still in
  // cache when the epilogue reads it: what a model batching thousands of tokens wants.
  // 0: max_batch (one GEMM per forward()).
  int max_gemm_rows = 0;
  // The largest |q| of a quantized weight (scale_c = max|W_c| / weight_qmax), 1..127, or 0 for
  // saturation_free_weight_qmax(). 127 uses the full INT8 range, but without VNNI (AVX2)
  // oneDNN's u8 x s8 kernels add pairs of products in saturating INT16 (vpmaddubsw):
  // 2 * 255 * 127 overflows it, 2 * 255 * 63 does not. So the default is 127 where VNNI or AMX
  // accumulate in INT32 and 63 elsewhere: never a silently saturated (wrong) sum.
  int weight_qmax = 0;
  // Input channels multiplied in FP32 beside the INT8 GEMM (LLM.int8()-style outlier
  // decomposition). A few channels whose activations run far above the others (transformer
  // hidden states have some) would set every row's scale and leave the rest a few levels;
  // taken out, they neither set the row's scale nor their weight columns the weight scales,
  // and the epilogue adds x[m][c] * W[n][c] for each in FP32 (one FMA per output element
  // per channel). Distinct, in 0..in_features-1; usually a handful or none.
  std::span<const int> fp32_input_channels = {};
  // The side channels' weights stored in FP16 (IEEE binary16, round to nearest), widened to
  // FP32 as the epilogue reads them: half the bytes a step reads for them (a language model's
  // decode reads them from memory each step), at a relative rounding of 2^-11 per weight.
  bool fp16_side_weights = false;
  bool keep_fp32_weight = false;  // keep the FP32 masters (fp32_weight()) for a reference path
  // Chunks of at most this many rows (a language model's decode steps) run through coinfer's
  // own small-M kernels (small_m_gemm.hpp), with the epilogue fused, instead of oneDNN: on the
  // same weight copy, when the CPU has a kernel for the layout oneDNN chose (AVX-512 VNNI for
  // its blocked VNNI layout, AVX2 or AVX-512 VNNI for row-major weights). -1: the default
  // (default_small_m_rows); 0: oneDNN for every chunk. The default suits weights that stay
  // in cache between calls (where oneDNN's VNNI/AMX kernels win from M ~ 4 on); a model that
  // streams its weights from memory every step (a language model's decode) gains up to 16.
  int small_m_rows = -1;
  static constexpr int default_small_m_rows = 4;
};

// A fully connected layer y = act(x W^T + b) run in INT8 on the CPU (oneDNN):
// - weights quantized once at create(), symmetric per output channel (see quantize.hpp);
// - activations quantized per row at each forward();
// - u8 (activations +128) x s8 -> s32 GEMM, then an epilogue over each row while it is in cache:
//     y[m][n] = act((acc[m][n] - 128 * sum_k W_q[n][k]) * row_scale[m] * col_scale[n] + b[n])
//   (plus, before act, the FP32 products of fp32_input_channels, if any).
// Chunks of few rows run coinfer's small-M kernels instead of the oneDNN GEMM (see
// Int8LinearOptions::small_m_rows), on the same weights, with the same exact INT32 sums.
// Every buffer forward() touches (quantized x, row scales, accumulator, oneDNN scratchpad)
// is allocated at create() for max_gemm_rows rows; forward() allocates nothing and creates no
// oneDNN primitive. One instance is never run concurrently; distinct instances may be.
class Int8Linear {
 public:
  // Largest in_features whose u8 x s8 dot products cannot overflow the INT32 accumulator.
  static constexpr int max_in_features = 65536;

  Int8Linear();  // empty: usable only as the target of create()
  ~Int8Linear();
  Int8Linear(Int8Linear&&) noexcept;
  Int8Linear& operator=(Int8Linear&&) noexcept;

  // weight: FP32 [out_features, in_features] row-major (PyTorch Linear layout);
  // bias: FP32 [out_features], or empty for none. keep_fp32_weight keeps a copy of the FP32
  // masters (fp32_weight()) for a reference path; serving leaves it off.
  static Status create(std::span<const float> weight, std::span<const float> bias, int out_features,
                       int in_features, Activation activation, int max_batch, Int8Linear& out,
                       bool keep_fp32_weight = false);
  // The same with every option (the overload above sets max_batch and keep_fp32_weight and
  // leaves the others at their defaults).
  static Status create(std::span<const float> weight, std::span<const float> bias, int out_features,
                       int in_features, Activation activation, const Int8LinearOptions& options,
                       Int8Linear& out);

  // 63 on a CPU whose INT8 kernels saturate pairs of u8 x s8 products (no VNNI), else 127.
  static int saturation_free_weight_qmax() noexcept;

  // x: FP32 [m, in_features] row-major; y: FP32 [m, out_features] row-major; 1 <= m <=
  // max_batch. x and y must not overlap. A row's result does not depend on m or on the other
  // rows (per-row scales, exact INT32 accumulation).
  Status forward(const float* x, int m, float* y);

  int in_features() const noexcept;
  int out_features() const noexcept;
  int max_batch() const noexcept;
  int max_gemm_rows() const noexcept;
  int weight_qmax() const noexcept;
  std::span<const int> fp32_input_channels() const noexcept;  // ascending
  Activation activation() const noexcept;
  std::span<const float> weight_scales() const noexcept;  // FP32 [out_features]
  std::span<const float> bias() const noexcept;           // FP32 [out_features] (zeros if none)
  std::span<const float> fp32_weight() const noexcept;    // [out, in]; empty unless kept
  // The small-M kernel the layer runs ("avx512_vnni/blocked", "avx2/rows", ...) or "none",
  // and the most rows a chunk may have to run through it (0 with none).
  const char* small_m_kernel() const noexcept;
  int small_m_rows() const noexcept;
  // Reordered INT8 weight copies the buckets hold: 1, unless a batch size's kernel could not
  // take the layout the largest bucket chose.
  int weight_copies() const noexcept;
  // Bytes of weights the layer keeps for serving: the INT8 copies, the per-channel scales,
  // the u8 compensation, the bias and the FP32 side-channel weights (not the FP32 masters).
  std::size_t weight_bytes() const noexcept;

 private:
  struct State;  // oneDNN objects and buffers; keeps oneDNN out of the public headers
  std::unique_ptr<State> state_;
};

}  // namespace coinfer
