#pragma once

#include <cstdint>

namespace coinfer {

// Hand-written u8 x s8 -> s32 kernels for GEMMs with few rows (a language model's decode
// steps: 1 to a few dozen tokens), where a general GEMM spends most of its time on packing
// and edges. Int8Linear runs them below a row count and oneDNN above it, on one copy of the
// weights: the kernels read the layout oneDNN's primitive chose (see SmallMWeights).
//
// They are memory-bound by design: each thread streams its own columns' weights once per call,
// and every weight vector loaded serves a tile of rows from registers (the next tile of the
// same columns finds the weights in L1). Results are exact INT32 sums: with AVX-512 VNNI
// (vpdpbusd) for any weights; with AVX2 (vpmaddubsw, which adds pairs of u8 x s8 products in
// saturating INT16) only for |W| <= 63, which Int8Linear guarantees on CPUs without VNNI.

// The instruction sets a kernel is written for.
enum class SmallMIsa {
  none,         // no kernel: the caller uses its general GEMM
  avx2,         // vpmaddubsw + vpmaddwd (|W| <= 63)
  avx512_vnni,  // vpdpbusd on 512-bit (blocked weights) or 256-bit (row-major weights) vectors
};

const char* to_string(SmallMIsa isa) noexcept;

// The best kernel ISA this CPU runs, capped by oneDNN's effective ISA (so ONEDNN_MAX_CPU_ISA
// caps both, and the weights' range that Int8Linear derives from oneDNN's ISA stays safe for
// the kernel chosen).
SmallMIsa detect_small_m_isa() noexcept;
// Whether oneDNN's effective ISA reaches AVX-512 with AMX (ONEDNN_MAX_CPU_ISA below it turns
// BlockLinear's AMX tiles off as well). Says nothing of whether the CPU has AMX.
bool onednn_allows_amx() noexcept;

// INT8 weights of [n] output channels over [k] inputs, in one of the two layouts the kernels
// read (the two oneDNN chooses for an s8 matmul's weights on x86):
// - rows: W[c][i] at data[c * k + i] (PyTorch's layout; oneDNN's "ba" for its [k, n]
//   weights, what its AVX2 GEMM takes);
// - blocked: oneDNN's VNNI layout for AVX-512 and AMX ("BA16a{B}b4a", B = block columns):
//   columns in blocks of B, each block holding k_padded / 4 groups of [B columns][4 inputs],
//   one block every block_stride bytes; inputs past k are zero.
struct SmallMWeights {
  enum class Layout { rows, blocked } layout = Layout::rows;
  const std::int8_t* data = nullptr;
  int n = 0;
  int k = 0;
  int block = 0;                   // blocked: columns per block (16, 32 or 64)
  std::int64_t block_stride = 0;   // blocked: bytes from one column block to the next
  int k_groups = 0;                // blocked: groups of 4 inputs per block (ceil(k / 4))
};

// Columns a call's [col_begin, col_end) must be aligned to (but col_end may be n): the block
// of a blocked layout, 4 for rows.
int small_m_column_grain(const SmallMWeights& w) noexcept;

// Whether `isa` has a kernel for the weights' layout (data is not looked at).
bool small_m_supports(SmallMIsa isa, const SmallMWeights& w) noexcept;

// acc[r * acc_stride + c] = sum_i x[r * x_stride + i] * W[c][i] for r < m and col_begin <=
// c < col_end. x: u8 rows of at least k bytes, readable up to 4 * k_groups bytes (blocked:
// the bytes past k meet zero weights). Requires small_m_supports(isa, w).
void small_m_gemm(SmallMIsa isa, const SmallMWeights& w, const std::uint8_t* x, int m,
                  int x_stride, int col_begin, int col_end, std::int32_t* acc,
                  int acc_stride) noexcept;

}  // namespace coinfer
