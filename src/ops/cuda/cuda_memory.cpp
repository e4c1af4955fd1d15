#include "coinfer/ops/cuda/cuda_memory.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer::cuda {

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Status DeviceBuffer::allocate(std::size_t bytes, DeviceBuffer& out) {
  DeviceBuffer buffer;
  void* p = nullptr;
  if (bytes > 0) {
    if (auto s =
            cuda_status(cudaMalloc(&p, bytes), "cudaMalloc (" + std::to_string(bytes) + " bytes)");
        !s) {
      return s;
    }
  }
  buffer.data_ = static_cast<std::byte*>(p);
  buffer.bytes_ = bytes;
  out = std::move(buffer);
  return {};
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Status PinnedBuffer::allocate(std::size_t bytes, PinnedBuffer& out) {
  PinnedBuffer buffer;
  void* p = nullptr;
  if (bytes > 0) {
    if (auto s =
            cuda_status(cudaHostAlloc(&p, bytes, cudaHostAllocDefault),
                        "cudaHostAlloc (" + std::to_string(bytes) + " bytes of pinned staging)");
        !s) {
      return s;
    }
  }
  buffer.data_ = static_cast<std::byte*>(p);
  buffer.bytes_ = bytes;
  out = std::move(buffer);
  return {};
}

}  // namespace coinfer::cuda
