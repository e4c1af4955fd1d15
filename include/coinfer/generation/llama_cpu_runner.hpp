#pragma once

#include <memory>

#include "coinfer/generation/model_runner.hpp"
#include "coinfer/models/llama.hpp"

namespace coinfer::generation {

// A llama-architecture LlamaModel (INT8 or FP32 GEMMs through oneDNN) on the engine's thread,
// with a compute team of `compute_threads` for its GEMMs.
class LlamaCpuRunner final : public ModelRunner {
 public:
  LlamaCpuRunner(std::unique_ptr<LlamaModel> model, int compute_threads);
  ~LlamaCpuRunner() override;

  const RunnerLimits& limits() const noexcept override { return limits_; }
  void bind_thread() override;
  void copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) override;
  Status execute(std::span<const ScheduledChunk> chunks, std::vector<float>& logits) override;

  const LlamaModel& model() const noexcept { return *model_; }

 private:
  std::unique_ptr<LlamaModel> model_;
  int compute_threads_;
  RunnerLimits limits_;
  // The step as LlamaModel takes it, rebuilt each step (capacity kept).
  std::vector<std::int32_t> tokens_;
  std::vector<LlamaSequenceStep> steps_;
};

}  // namespace coinfer::generation
