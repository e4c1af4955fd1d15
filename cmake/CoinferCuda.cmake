# The device side of coinfer: ops/cuda and the CUDA calls of the executor. It needs only the
# CUDA toolkit and a C++ compiler (no Boost, simdjson, oneDNN, spdlog or toml++), so GPU
# machines build it on their own through tests/gpu/CMakeLists.txt; the main build adds its
# objects to the coinfer library.
#
# In:  COINFER_ROOT (the repository root), CUDAToolkit found, CUDA language enabled.
# Out: coinfer_cuda_objects (OBJECT library), COINFER_CUDA_HOST_SOURCES (dependency-free host
#      sources the device side calls; part of coinfer in the main build).
include_guard(GLOBAL)

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
  set(COINFER_CUDA_ARCHITECTURES "80;90")
else()
  set(COINFER_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
endif()

add_library(coinfer_cuda_objects OBJECT
  ${COINFER_ROOT}/src/ops/cuda/cuda_status.cpp
  ${COINFER_ROOT}/src/ops/cuda/cuda_memory.cpp
  ${COINFER_ROOT}/src/ops/cuda/cuda_graph.cpp
  ${COINFER_ROOT}/src/ops/cuda/kernels.cu
  ${COINFER_ROOT}/src/ops/cuda/cublaslt_gemm.cpp
  ${COINFER_ROOT}/src/ops/cuda/int8_mlp.cpp
  ${COINFER_ROOT}/src/ops/cuda/bert_kernels.cu
  ${COINFER_ROOT}/src/ops/cuda/llm_kernels.cu
  ${COINFER_ROOT}/src/ops/cuda/int8_bert.cpp
  ${COINFER_ROOT}/src/ops/cuda/int8_llama.cpp
  ${COINFER_ROOT}/src/runtime/cuda/cuda_stream_device.cpp
  ${COINFER_ROOT}/src/runtime/cuda/cuda_executor.cpp)
target_include_directories(coinfer_cuda_objects PUBLIC ${COINFER_ROOT}/include)
# Static CUDA runtime: the binaries then need only the driver and cuBLASLt at run time.
target_link_libraries(coinfer_cuda_objects PUBLIC CUDA::cudart_static CUDA::cublasLt)
set_target_properties(coinfer_cuda_objects PROPERTIES
  CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
  # CMake 3.25 knows no C++20 flag for nvcc; the .cu sources and the headers they include
  # are C++17.
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
  CUDA_ARCHITECTURES "${COINFER_CUDA_ARCHITECTURES}"
  POSITION_INDEPENDENT_CODE ON)
# Warnings as errors for host code; nvcc passes the host compiler's warnings on device
# translation units and turns its own into errors.
target_compile_options(coinfer_cuda_objects PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=all-warnings>)

set(COINFER_CUDA_HOST_SOURCES
  ${COINFER_ROOT}/src/core/half.cpp
  ${COINFER_ROOT}/src/core/status.cpp
  ${COINFER_ROOT}/src/ops/activation.cpp
  ${COINFER_ROOT}/src/ops/quantize.cpp
  ${COINFER_ROOT}/src/ops/reference.cpp
  ${COINFER_ROOT}/src/ops/softmax.cpp)
