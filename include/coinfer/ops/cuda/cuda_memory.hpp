#pragma once

#include <cstddef>
#include <memory_resource>
#include <utility>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// Owning device memory (cudaMalloc: 256-byte aligned). Allocated when a model loads, never
// per request. Moves, never copies.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  static Status allocate(std::size_t bytes, DeviceBuffer& out);

  std::byte* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  template <class T>
  T* as(std::size_t byte_offset = 0) const noexcept {
    return reinterpret_cast<T*>(data_ + byte_offset);
  }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owning page-locked host memory (cudaHostAlloc), the source and target of asynchronous
// copies: pageable memory would make cudaMemcpyAsync synchronous.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;

  static Status allocate(std::size_t bytes, PinnedBuffer& out);

  std::byte* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory as a std::pmr::memory_resource (cudaHostAlloc, portable to every
// device), for containers that H2D copies read straight from: the batcher's staging rows on a
// CudaExecutor. Allocation failure throws std::bad_alloc, as the interface requires. One
// process-wide instance, so memory allocated from it never outlives it.
std::pmr::memory_resource* pinned_memory_resource() noexcept;

// Whether `p` points into page-locked host memory registered with CUDA (so that an
// asynchronous copy from it needs no staging copy first). False for pageable memory.
bool is_pinned(const void* p) noexcept;

// Sub-buffers carved from one allocation start on 256-byte boundaries (cuBLASLt wants 16).
constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment = 256) noexcept {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Byte offsets of the parts of one allocation, each on a 256-byte boundary.
class AllocationLayout {
 public:
  std::size_t add(std::size_t bytes) noexcept {
    const std::size_t at = bytes_;
    bytes_ += align_up(bytes);
    return at;
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};

}  // namespace coinfer::cuda
