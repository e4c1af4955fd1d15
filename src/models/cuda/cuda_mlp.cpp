#include "coinfer/models/cuda_mlp.hpp"

#include <cstring>

#include "coinfer/models/mlp.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer {

Status CudaMlp::load(const std::filesystem::path& file, std::string name, std::string version,
                     int max_batch_size, CudaExecutor& executor, std::unique_ptr<CudaMlp>& out) {
  // The CPU model validates the file and keeps the FP32 masters; the device quantizes them
  // itself (the same per-channel scheme) and the CPU copy is dropped.
  std::unique_ptr<Mlp> host;
  if (auto s = Mlp::load(file, name, version, max_batch_size, host, /*keep_fp32_reference=*/true);
      !s) {
    return s;
  }
  std::vector<cuda::LinearWeights> layers;
  for (std::size_t i = 0; i < host->layer_count(); ++i) {
    const Int8Linear& l = host->layer(i);
    layers.push_back(
        {l.fp32_weight(), l.bias(), l.out_features(), l.in_features(), l.activation()});
  }
  if (auto s = executor.device().select(); !s) return s;
  std::unique_ptr<CudaMlp> mlp(new CudaMlp());
  if (auto s = cuda::Int8Mlp::create(layers, max_batch_size, mlp->network_); !s) {
    return Status(s.code(),
                  file.string() + ": on " + executor.device().name() + ": " + s.message());
  }
  mlp->scratch_.resize(static_cast<std::size_t>(executor.scheduler().lanes()));
  for (auto& scratch : mlp->scratch_) {
    if (auto s = mlp->network_.create_scratch(scratch); !s) return s;
  }
  const auto rows = static_cast<std::size_t>(max_batch_size);
  mlp->labels_offset_ = cuda::align_up(sizeof(float) * rows * mlp->classes());
  if (auto s =
          executor.scheduler().reserve_staging(sizeof(float) * rows * mlp->in_features(),
                                               mlp->labels_offset_ + sizeof(std::int64_t) * rows);
      !s) {
    return s;
  }
  mlp->executor_ = &executor;
  mlp->metadata_ = host->metadata();
  mlp->metadata_.platform = "coinfer_mlp_cuda";
  out = std::move(mlp);
  return {};
}

Status CudaMlp::forward(const Batch& batch, std::span<Tensor> outputs) {
  if (batch.inputs.size() != 1 || outputs.size() != 2) {
    return {Errc::internal, "CudaMlp::forward: expected 1 input and 2 outputs"};
  }
  const ConstTensorView& x = batch.inputs[0];
  if (x.dtype != DType::FP32 || x.shape.size() != 2 || x.shape[1] != in_features()) {
    return Status::invalid("INPUT0: expected FP32 [-1, " + std::to_string(in_features()) +
                           "], got " + std::string(to_string(x.dtype)) + " " + to_string(x.shape));
  }
  if (x.shape[0] > metadata_.max_batch_size) {
    return Status::invalid("INPUT0: batch of " + std::to_string(x.shape[0]) +
                           " exceeds max_batch_size " + std::to_string(metadata_.max_batch_size));
  }
  const auto m = static_cast<int>(x.shape[0]);
  const std::int64_t probabilities_shape[] = {m, classes()};
  outputs[0].resize(DType::FP32, probabilities_shape);
  outputs[1].resize(DType::Int64, std::span<const std::int64_t>(probabilities_shape, 1));
  if (m == 0) return {};

  const std::size_t in_bytes = x.values<float>().size_bytes();
  const std::size_t probabilities_bytes = outputs[0].bytes().size();
  const std::size_t labels_bytes = outputs[1].bytes().size();
  // The batcher's rows are page-locked on a CudaExecutor (its staging_memory()), and the H2D
  // copy reads them in place. Rows from elsewhere (pageable) are first copied into the lane's
  // pinned input, so that the copy is still asynchronous and overlaps the other lanes.
  const bool pinned = cuda::is_pinned(x.data);
  using Lane = CudaExecutor::Scheduler::Lane;
  Status status = executor_->scheduler().run(
      [&](Lane& lane) -> Status {
        cuda::Int8Mlp::Scratch& scratch = scratch_[static_cast<std::size_t>(lane.index)];
        const void* source = x.data;
        if (!pinned) {
          std::memcpy(lane.input.data(), x.data, in_bytes);
          source = lane.input.data();
        }
        Status s = cuda::cuda_status(cudaMemcpyAsync(scratch.input(), source, in_bytes,
                                                     cudaMemcpyHostToDevice, lane.stream),
                                     "cudaMemcpyAsync (H2D INPUT0)");
        if (s) s = network_.enqueue(scratch, m, lane.stream);
        if (s) {
          s = cuda::cuda_status(
              cudaMemcpyAsync(lane.output.data(), scratch.probabilities(), probabilities_bytes,
                              cudaMemcpyDeviceToHost, lane.stream),
              "cudaMemcpyAsync (D2H probabilities)");
        }
        if (s) {
          s = cuda::cuda_status(
              cudaMemcpyAsync(lane.output.data() + labels_offset_, scratch.labels(), labels_bytes,
                              cudaMemcpyDeviceToHost, lane.stream),
              "cudaMemcpyAsync (D2H label)");
        }
        return s;
      },
      [&](Lane& lane) -> Status {
        std::memcpy(outputs[0].bytes().data(), lane.output.data(), probabilities_bytes);
        std::memcpy(outputs[1].bytes().data(), lane.output.data() + labels_offset_, labels_bytes);
        return {};
      });
  if (!status) return Status(status.code(), "GPU batch failed: " + status.message());
  return {};
}

}  // namespace coinfer
