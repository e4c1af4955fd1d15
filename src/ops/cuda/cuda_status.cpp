#include "coinfer/ops/cuda/cuda_status.hpp"

#include <string>

namespace coinfer::cuda {

Status cuda_status(cudaError_t error, std::string_view what) {
  if (error == cudaSuccess) return {};
  return {Errc::unavailable,
          std::string(what) + ": " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error)};
}

Status cublas_status(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return {};
  return {Errc::unavailable, std::string(what) + ": " + cublasLtGetStatusName(status) + ": " +
                                 cublasLtGetStatusString(status)};
}

Status last_launch_status(std::string_view kernel) {
  return cuda_status(cudaGetLastError(), std::string("launch of ") + std::string(kernel));
}

bool is_sticky(cudaError_t error) noexcept {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

}  // namespace coinfer::cuda
