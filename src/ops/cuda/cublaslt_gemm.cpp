#include "coinfer/ops/cuda/cublaslt_gemm.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer::cuda {

CublasLt::~CublasLt() {
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

CublasLt::CublasLt(CublasLt&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

CublasLt& CublasLt::operator=(CublasLt&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cublasLtDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Status CublasLt::create(CublasLt& out) {
  CublasLt lt;
  if (auto s = cublas_status(cublasLtCreate(&lt.handle_), "cublasLtCreate"); !s) return s;
  out = std::move(lt);
  return {};
}

GemmPlan::~GemmPlan() {
  destroy();
}

void GemmPlan::destroy() noexcept {
  if (preference_ != nullptr) cublasLtMatmulPreferenceDestroy(preference_);
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  preference_ = nullptr;
  a_ = b_ = c_ = nullptr;
  desc_ = nullptr;
}

GemmPlan::GemmPlan(GemmPlan&& other) noexcept {
  *this = std::move(other);
}

GemmPlan& GemmPlan::operator=(GemmPlan&& other) noexcept {
  if (this != &other) {
    destroy();
    handle_ = other.handle_;
    kind_ = other.kind_;
    max_m_ = other.max_m_;
    n_ = other.n_;
    k_ = other.k_;
    current_m_ = other.current_m_;
    desc_ = std::exchange(other.desc_, nullptr);
    a_ = std::exchange(other.a_, nullptr);
    b_ = std::exchange(other.b_, nullptr);
    c_ = std::exchange(other.c_, nullptr);
    preference_ = std::exchange(other.preference_, nullptr);
    workspace_ = other.workspace_;
    workspace_bytes_ = other.workspace_bytes_;
    choices_ = std::move(other.choices_);
  }
  return *this;
}

Status GemmPlan::create(const CublasLt& lt, GemmKind kind, int max_m, int n, int k, void* workspace,
                        std::size_t workspace_bytes, GemmPlan& out) {
  const std::string shape = "GEMM [" + std::to_string(max_m) + ", " + std::to_string(k) + "] x [" +
                            std::to_string(n) + ", " + std::to_string(k) + "]^T";
  if (max_m < 1 || n < 1 || k < 1) return Status::invalid(shape + ": every dimension must be >= 1");
  if (kind == GemmKind::int8 && (n % 4 != 0 || k % 4 != 0)) {
    return Status::invalid(shape + ": INT8 cuBLASLt needs n and k multiples of 4 (pad them)");
  }
  GemmPlan p;
  p.handle_ = lt.get();
  p.kind_ = kind;
  p.max_m_ = max_m;
  p.n_ = n;
  p.k_ = k;
  p.current_m_ = max_m;
  p.workspace_ = workspace;
  p.workspace_bytes_ = workspace_bytes;
  p.choices_.resize(static_cast<std::size_t>(max_m) + 1);

  const bool int8 = kind == GemmKind::int8;
  const cudaDataType_t ab_type = int8 ? CUDA_R_8I : CUDA_R_16F;
  const cudaDataType_t c_type = int8 ? CUDA_R_32I : CUDA_R_16F;
  const cublasComputeType_t compute = int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale_type = int8 ? CUDA_R_32I : CUDA_R_32F;
  const cublasOperation_t transa = CUBLAS_OP_T;
  const cublasOperation_t transb = CUBLAS_OP_N;
  const std::uint64_t workspace_limit = workspace_bytes;

  Status s = cublas_status(cublasLtMatmulDescCreate(&p.desc_, compute, scale_type),
                           shape + ": cublasLtMatmulDescCreate");
  if (s) {
    s = cublas_status(cublasLtMatmulDescSetAttribute(p.desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                                     sizeof transa),
                      shape + ": TRANSA");
  }
  if (s) {
    s = cublas_status(cublasLtMatmulDescSetAttribute(p.desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                                     sizeof transb),
                      shape + ": TRANSB");
  }
  // Stored shapes, column-major: W is [k, n] (ld k), X is [k, m] (ld k), Y is [n, m] (ld n).
  if (s) {
    s = cublas_status(cublasLtMatrixLayoutCreate(&p.a_, ab_type, static_cast<std::uint64_t>(k),
                                                 static_cast<std::uint64_t>(n), k),
                      shape + ": layout of W");
  }
  if (s) {
    s = cublas_status(cublasLtMatrixLayoutCreate(&p.b_, ab_type, static_cast<std::uint64_t>(k),
                                                 static_cast<std::uint64_t>(max_m), k),
                      shape + ": layout of X");
  }
  if (s) {
    s = cublas_status(cublasLtMatrixLayoutCreate(&p.c_, c_type, static_cast<std::uint64_t>(n),
                                                 static_cast<std::uint64_t>(max_m), n),
                      shape + ": layout of Y");
  }
  if (s) {
    s = cublas_status(cublasLtMatmulPreferenceCreate(&p.preference_),
                      shape + ": cublasLtMatmulPreferenceCreate");
  }
  if (s) {
    s = cublas_status(cublasLtMatmulPreferenceSetAttribute(
                          p.preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_limit,
                          sizeof workspace_limit),
                      shape + ": workspace preference");
  }
  if (!s) return s;
  out = std::move(p);
  return {};
}

Status GemmPlan::set_m(int m) {
  if (m == current_m_) return {};
  const std::uint64_t cols = static_cast<std::uint64_t>(m);
  if (auto s = cublas_status(
          cublasLtMatrixLayoutSetAttribute(b_, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols),
          "cublasLtMatrixLayoutSetAttribute (X columns)");
      !s) {
    return s;
  }
  if (auto s = cublas_status(
          cublasLtMatrixLayoutSetAttribute(c_, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols),
          "cublasLtMatrixLayoutSetAttribute (Y columns)");
      !s) {
    return s;
  }
  current_m_ = m;
  return {};
}

Status GemmPlan::choose(int m) {
  Choice& choice = choices_[static_cast<std::size_t>(m)];
  if (choice.queried) return {};
  if (auto s = set_m(m); !s) return s;
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, desc_, a_, b_, c_, c_, preference_, 1, &choice.result, &found);
  const std::string what = "cublasLtMatmulAlgoGetHeuristic (m=" + std::to_string(m) + ", n=" +
                           std::to_string(n_) + ", k=" + std::to_string(k_) + ", workspace " +
                           std::to_string(workspace_bytes_) + " bytes)";
  if (auto s = cublas_status(status, what); !s) return s;
  if (found == 0) return {Errc::unavailable, what + ": no algorithm for this shape"};
  choice.queried = true;
  return {};
}

Status GemmPlan::prepare() {
  for (int m = 1; m <= max_m_; ++m) {
    if (auto s = choose(m); !s) return s;
  }
  return {};
}

Status GemmPlan::run(const void* x, int m, const void* w, void* y, cudaStream_t stream) {
  if (m < 1 || m > max_m_) {
    return {Errc::internal,
            "GemmPlan::run: m = " + std::to_string(m) + " outside 1.." + std::to_string(max_m_)};
  }
  if (auto s = choose(m); !s) return s;
  if (auto s = set_m(m); !s) return s;
  const cublasLtMatmulAlgo_t* algo = &choices_[static_cast<std::size_t>(m)].result.algo;
  const std::int32_t alpha_i = 1, beta_i = 0;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const void* alpha = kind_ == GemmKind::int8 ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = kind_ == GemmKind::int8 ? static_cast<const void*>(&beta_i) : &beta_f;
  return cublas_status(cublasLtMatmul(handle_, desc_, alpha, w, a_, x, b_, beta, y, c_, y, c_, algo,
                                      workspace_, workspace_bytes_, stream),
                       "cublasLtMatmul");
}

}  // namespace coinfer::cuda
