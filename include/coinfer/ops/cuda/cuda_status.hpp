#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string_view>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// Every cudaError_t and cublasStatus_t ends as a Status naming the call that failed and what
// it was doing: "cudaMemcpyAsync (H2D INPUT0): cudaErrorIllegalAddress: an illegal memory
// access was encountered". Nothing in ops/cuda aborts.
//
// Errors are `unavailable` (503): the device, not the request, is at fault.
Status cuda_status(cudaError_t error, std::string_view what);
Status cublas_status(cublasStatus_t status, std::string_view what);

// A launch or asynchronous error from the last kernel (cudaGetLastError), as a Status.
Status last_launch_status(std::string_view kernel);

// True for errors after which the CUDA context is unusable for the rest of the process
// (illegal address, launch failure, ECC, ...): every later call fails the same way.
bool is_sticky(cudaError_t error) noexcept;

}  // namespace coinfer::cuda
