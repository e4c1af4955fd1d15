#include "coinfer/ops/cuda/cuda_memory.hpp"

#include <cuda_runtime_api.h>

#include <new>
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

namespace {

class PinnedMemoryResource final : public std::pmr::memory_resource {
 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    // cudaHostAlloc returns page-aligned memory.
    void* p = nullptr;
    if (alignment > 4096 || cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable) !=
                                cudaSuccess) {
      cudaGetLastError();  // not sticky; leave no error behind
      throw std::bad_alloc();
    }
    return p;
  }
  void do_deallocate(void* p, std::size_t, std::size_t) override { cudaFreeHost(p); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace

std::pmr::memory_resource* pinned_memory_resource() noexcept {
  static PinnedMemoryResource resource;
  return &resource;
}

bool is_pinned(const void* p) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace coinfer::cuda
