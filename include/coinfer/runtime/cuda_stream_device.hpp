#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"

namespace coinfer {

// The CUDA side of StreamScheduler's Device (see stream_scheduler.hpp): streams, events and
// pinned staging on one GPU. It owns every stream and event it creates.
class CudaStreamDevice {
 public:
  using Stream = cudaStream_t;
  using Event = cudaEvent_t;
  using HostBuffer = cuda::PinnedBuffer;

  // How many CUDA devices this process sees; 0, with `why` saying so, when there is no
  // device or no driver (never an error: a machine without a GPU is a normal case).
  static int device_count(std::string& why);

  // Checks that `index` names a device and makes it current on the calling thread; fills
  // name(). A startup error otherwise ("no CUDA device found (cudaGetDeviceCount: ...)").
  static Status open(int index, CudaStreamDevice& out);

  CudaStreamDevice() = default;
  ~CudaStreamDevice();
  CudaStreamDevice(const CudaStreamDevice&) = delete;
  CudaStreamDevice& operator=(const CudaStreamDevice&) = delete;
  CudaStreamDevice(CudaStreamDevice&& other) noexcept;
  CudaStreamDevice& operator=(CudaStreamDevice&& other) noexcept;

  // Makes this device current on the calling thread (CUDA's current device is per thread).
  Status select() const;

  Status create_stream(Stream& out);
  Status create_event(Event& out);  // blocking-sync: a waiting thread sleeps, never spins
  Status allocate_host(std::size_t bytes, HostBuffer& out);
  static std::size_t host_bytes(const HostBuffer& buffer) noexcept { return buffer.bytes(); }
  Status record(Event& event, Stream& stream);
  Status wait(Event& event);
  void synchronize(Stream& stream);
  bool usable();

  int index() const noexcept { return index_; }
  const std::string& name() const noexcept { return name_; }

 private:
  void destroy() noexcept;

  int index_ = -1;
  std::string name_;
  std::mutex mutex_;  // guards the lists below (streams are created from one thread, though)
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace coinfer
