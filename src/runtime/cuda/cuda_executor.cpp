#include "coinfer/runtime/cuda_executor.hpp"

namespace coinfer {

CudaExecutor::CudaExecutor(CudaStreamDevice device, int streams)
    : device_(std::move(device)), scheduler_(device_, streams) {}

Status CudaExecutor::create(int device_index, int streams, std::unique_ptr<CudaExecutor>& out) {
  CudaStreamDevice device;
  if (auto s = CudaStreamDevice::open(device_index, device); !s) return s;
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(std::move(device), streams));
  if (auto s = executor->scheduler_.start(); !s) return s;
  for (int i = 0; i < executor->scheduler_.lanes(); ++i) {
    executor->threads_.emplace_back([e = executor.get()] { e->run(); });
  }
  out = std::move(executor);
  return {};
}

CudaExecutor::~CudaExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::pmr::memory_resource* CudaExecutor::staging_memory() const noexcept {
  return cuda::pinned_memory_resource();
}

void CudaExecutor::submit(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.notify_one();
}

void CudaExecutor::run() {
  // The current device is per host thread. Should this fail, the batches run here fail with
  // the CUDA error as their Status.
  (void)device_.select();
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

}  // namespace coinfer
