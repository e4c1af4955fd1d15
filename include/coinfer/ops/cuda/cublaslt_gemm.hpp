#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// The cuBLASLt library handle: one per model (it holds no stream, so the lanes share it).
class CublasLt {
 public:
  CublasLt() = default;
  ~CublasLt();
  CublasLt(CublasLt&& other) noexcept;
  CublasLt& operator=(CublasLt&& other) noexcept;

  static Status create(CublasLt& out);
  cublasLtHandle_t get() const noexcept { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// Element types of a GEMM plan.
enum class GemmKind {
  int8,  // A, B INT8 (CUDA_R_8I), C INT32 (CUDA_R_32I), CUBLAS_COMPUTE_32I, alpha/beta INT32
  fp16,  // A, B, C FP16 (CUDA_R_16F), CUBLAS_COMPUTE_32F (FP32 accumulation), alpha/beta FP32
};

// One GEMM shape, planned at load and run per batch:
//   Y[m, n] = X[m, k] · W[n, k]^T        all row-major, 1 <= m <= max_m
// which cuBLAS (column-major) sees as Y^T[n, m] = W[n, k]·X^T: transa = T, transb = N,
// m' = n, n' = m, k' = k, lda = ldb = k, ldc = n. That TN layout is the only one Hopper's
// INT8 kernels take; for INT8, n and k (hence every leading dimension) must be multiples of 4
// (callers pad W with zero rows and X with zero columns) and the pointers 16-byte aligned.
//
// The plan's layout descriptors are rewritten for each call's m and its per-m algorithm choice
// is cached, so a plan belongs to one stream (one lane) at a time; weights are shared.
class GemmPlan {
 public:
  GemmPlan() = default;
  ~GemmPlan();
  GemmPlan(GemmPlan&& other) noexcept;
  GemmPlan& operator=(GemmPlan&& other) noexcept;

  // `workspace` (device memory, may be null with 0 bytes) must outlive the plan and be used
  // by one stream at a time.
  static Status create(const CublasLt& lt, GemmKind kind, int max_m, int n, int k, void* workspace,
                       std::size_t workspace_bytes, GemmPlan& out);

  // Queries cuBLASLt's heuristic for every m in 1..max_m now (host-side only), so that no
  // batch pays for the query. Called when a model loads; run() queries an m it has not seen.
  Status prepare();

  // x: [m, k], w: [n, k], y: [m, n] device pointers of the plan's element types.
  Status run(const void* x, int m, const void* w, void* y, cudaStream_t stream);

  int n() const noexcept { return n_; }
  int k() const noexcept { return k_; }
  int max_m() const noexcept { return max_m_; }

 private:
  struct Choice {
    bool queried = false;
    cublasLtMatmulHeuristicResult_t result{};
  };
  void destroy() noexcept;
  Status set_m(int m);   // rewrites the X and Y layouts' column count
  Status choose(int m);  // the heuristic's algorithm for m, cached; an error is not cached

  cublasLtHandle_t handle_ = nullptr;
  GemmKind kind_ = GemmKind::int8;
  int max_m_ = 0, n_ = 0, k_ = 0;
  int current_m_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  std::vector<Choice> choices_;  // [max_m + 1], filled on first use of each m
};

}  // namespace coinfer::cuda
