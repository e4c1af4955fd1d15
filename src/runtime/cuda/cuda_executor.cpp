#include "coinfer/runtime/cuda_executor.hpp"

namespace coinfer {

CudaExecutor::CudaExecutor(CudaStreamDevice device, int streams)
    : device_(std::move(device)), scheduler_(device_, streams) {}

Status CudaExecutor::create(int device_index, int streams, std::unique_ptr<CudaExecutor>& out) {
  CudaStreamDevice device;
  if (auto s = CudaStreamDevice::open(device_index, device); !s) return s;
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(std::move(device), streams));
  if (auto s = executor->scheduler_.start(); !s) return s;
  // The current device is per host thread. Should selecting it fail, the batches run on that
  // thread fail with the CUDA error as their Status.
  executor->queue_.start(executor->scheduler_.lanes(),
                         [e = executor.get()] { (void)e->device_.select(); });
  out = std::move(executor);
  return {};
}

CudaExecutor::~CudaExecutor() {
  queue_.stop();
}

std::pmr::memory_resource* CudaExecutor::staging_memory() const noexcept {
  return cuda::pinned_memory_resource();
}

void CudaExecutor::submit(std::function<void()> work) {
  queue_.push(std::move(work));
}

}  // namespace coinfer
