#include "coinfer/ops/cuda/cuda_graph.hpp"

#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer::cuda {

GraphExec::~GraphExec() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

Status GraphExec::begin_capture(cudaStream_t stream) {
  if (stream == nullptr) {
    return {Errc::internal, "CUDA graph capture needs a created stream, not the default stream"};
  }
  return cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                     "cudaStreamBeginCapture");
}

Status GraphExec::end_capture(cudaStream_t stream, Status body, GraphExec& out) {
  cudaGraph_t graph = nullptr;
  // The capture always ends, also after an error of the body, so the stream is usable again.
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!body) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();  // an invalidated capture's error is the body's, reported above
    return body;
  }
  if (auto s = cuda_status(ended, "cudaStreamEndCapture"); !s) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return s;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (auto s = cuda_status(instantiated, "cudaGraphInstantiate"); !s) return s;
  GraphExec captured;
  captured.exec_ = exec;
  out = std::move(captured);
  return {};
}

Status GraphExec::launch(cudaStream_t stream) const {
  return cuda_status(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
}

}  // namespace coinfer::cuda
