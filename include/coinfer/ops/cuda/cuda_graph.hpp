#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "coinfer/core/status.hpp"

namespace coinfer::cuda {

// A sequence of stream work captured once and replayed with one cudaGraphLaunch. A small
// network on a small batch is bound by the host's launch rate, not by the GPU: the digits MLP
// is 10 launches (3 cuBLASLt GEMMs among them) at several microseconds each, while its
// kernels run for a few. Replaying the captured graph costs one launch.
//
// A graph replays the same kernels with the same arguments: the same device pointers (a
// lane's scratch) and the same shapes (the batch's row count). Callers keep one per shape.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec();
  GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& other) noexcept;

  // Records what `enqueue()` (returning Status) puts on `stream` and instantiates it, without
  // running it. `stream` must be a created stream (the legacy default stream cannot be
  // captured). Capture is thread-local: other threads' CUDA calls are unaffected. An error of
  // `enqueue` itself is returned as it is, with the capture ended.
  template <class Enqueue>
  static Status capture(cudaStream_t stream, Enqueue&& enqueue, GraphExec& out) {
    if (auto s = begin_capture(stream); !s) return s;
    Status body = std::forward<Enqueue>(enqueue)();
    return end_capture(stream, std::move(body), out);
  }

  // Enqueues the whole graph on `stream`.
  Status launch(cudaStream_t stream) const;

  explicit operator bool() const noexcept { return exec_ != nullptr; }

 private:
  static Status begin_capture(cudaStream_t stream);
  static Status end_capture(cudaStream_t stream, Status body, GraphExec& out);

  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace coinfer::cuda
