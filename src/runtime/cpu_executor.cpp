#include "coinfer/runtime/cpu_executor.hpp"

#include "coinfer/ops/compute_threads.hpp"

namespace coinfer {

CpuExecutor::CpuExecutor(int compute_threads)
    : compute_threads_(compute_threads < 1 ? 1 : compute_threads) {
  queue_.start(1, [this] { set_compute_threads(compute_threads_); });
}

CpuExecutor::~CpuExecutor() {
  queue_.stop();
}

void CpuExecutor::submit(std::function<void()> work) {
  queue_.push(std::move(work));
}

}  // namespace coinfer
