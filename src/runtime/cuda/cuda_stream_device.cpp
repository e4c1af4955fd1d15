#include "coinfer/runtime/cuda_stream_device.hpp"

#include <utility>

#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer {

int CudaStreamDevice::device_count(std::string& why) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(error) + ": " +
          cudaGetErrorString(error);
    cudaGetLastError();  // not sticky; leave no error behind for the next call
    return 0;
  }
  if (count == 0) why = "cudaGetDeviceCount: 0 devices";
  return count;
}

Status CudaStreamDevice::open(int index, CudaStreamDevice& out) {
  std::string why;
  const int count = device_count(why);
  if (count == 0) return {Errc::unavailable, "no CUDA device found (" + why + ")"};
  if (index < 0 || index >= count) {
    return {Errc::unavailable, "CUDA device " + std::to_string(index) + " does not exist (" +
                                   std::to_string(count) + " found)"};
  }
  CudaStreamDevice device;
  device.index_ = index;
  if (auto s = device.select(); !s) return s;
  cudaDeviceProp properties{};
  if (auto s =
          cuda::cuda_status(cudaGetDeviceProperties(&properties, index), "cudaGetDeviceProperties");
      !s) {
    return s;
  }
  device.name_ = std::string(properties.name) + " (sm_" + std::to_string(properties.major) +
                 std::to_string(properties.minor) + ")";
  out = std::move(device);
  return {};
}

CudaStreamDevice::~CudaStreamDevice() {
  destroy();
}

void CudaStreamDevice::destroy() noexcept {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  events_.clear();
  streams_.clear();
}

CudaStreamDevice::CudaStreamDevice(CudaStreamDevice&& other) noexcept {
  *this = std::move(other);
}

CudaStreamDevice& CudaStreamDevice::operator=(CudaStreamDevice&& other) noexcept {
  if (this != &other) {
    destroy();
    index_ = std::exchange(other.index_, -1);
    name_ = std::move(other.name_);
    streams_ = std::move(other.streams_);
    events_ = std::move(other.events_);
  }
  return *this;
}

Status CudaStreamDevice::select() const {
  return cuda::cuda_status(cudaSetDevice(index_), "cudaSetDevice(" + std::to_string(index_) + ")");
}

Status CudaStreamDevice::create_stream(Stream& out) {
  // Non-blocking: no implicit synchronization with the legacy default stream.
  if (auto s = cuda::cuda_status(cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking),
                                 "cudaStreamCreateWithFlags");
      !s) {
    return s;
  }
  std::lock_guard lock(mutex_);
  streams_.push_back(out);
  return {};
}

Status CudaStreamDevice::create_event(Event& out) {
  if (auto s = cuda::cuda_status(
          cudaEventCreateWithFlags(&out, cudaEventDisableTiming | cudaEventBlockingSync),
          "cudaEventCreateWithFlags");
      !s) {
    return s;
  }
  std::lock_guard lock(mutex_);
  events_.push_back(out);
  return {};
}

Status CudaStreamDevice::allocate_host(std::size_t bytes, HostBuffer& out) {
  return cuda::PinnedBuffer::allocate(bytes, out);
}

Status CudaStreamDevice::record(Event& event, Stream& stream) {
  return cuda::cuda_status(cudaEventRecord(event, stream), "cudaEventRecord");
}

Status CudaStreamDevice::wait(Event& event) {
  return cuda::cuda_status(cudaEventSynchronize(event), "batch on the GPU (cudaEventSynchronize)");
}

void CudaStreamDevice::synchronize(Stream& stream) {
  cudaStreamSynchronize(stream);
  cudaGetLastError();
}

bool CudaStreamDevice::usable() {
  // Called only after a failure. A non-sticky error is cleared by reading it; after a sticky
  // one every call, even this no-op, returns it again.
  cudaGetLastError();
  return !cuda::is_sticky(cudaFree(nullptr));
}

}  // namespace coinfer
