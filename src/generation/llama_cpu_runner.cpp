#include "coinfer/generation/llama_cpu_runner.hpp"

#include "coinfer/ops/compute_threads.hpp"

namespace coinfer::generation {

LlamaCpuRunner::LlamaCpuRunner(std::unique_ptr<LlamaModel> model, int compute_threads)
    : model_(std::move(model)), compute_threads_(compute_threads) {
  limits_.vocab = model_->config().vocab;
  limits_.context = model_->config().context;
  limits_.kv_blocks = model_->options().kv_blocks;
  limits_.block_size = model_->options().block_size;
  limits_.max_step_tokens = model_->options().max_step_tokens;
}

LlamaCpuRunner::~LlamaCpuRunner() = default;

void LlamaCpuRunner::bind_thread() {
  set_compute_threads(compute_threads_);
}

void LlamaCpuRunner::copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) {
  for (auto [src, dst] : copies) model_->copy_block(src, dst);
}

Status LlamaCpuRunner::execute(std::span<const ScheduledChunk> chunks, std::vector<float>& logits) {
  tokens_.clear();
  steps_.clear();
  for (const auto& c : chunks) {
    LlamaSequenceStep step;
    step.token_begin = static_cast<int>(tokens_.size());
    step.token_count = static_cast<int>(c.tokens.size());
    step.position = c.position;
    step.block_table = c.block_table;
    step.logit_rows = c.logit_rows;
    tokens_.insert(tokens_.end(), c.tokens.begin(), c.tokens.end());
    steps_.push_back(step);
  }
  return model_->forward(tokens_, steps_, logits);
}

}  // namespace coinfer::generation
