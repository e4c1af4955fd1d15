#pragma once

#include <condition_variable>
#include <thread>

#include "coinfer/generation/block_manager.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/generation/model_runner.hpp"
#include "coinfer/generation/output_processor.hpp"
#include "coinfer/generation/scheduler.hpp"

namespace coinfer::generation {

struct EngineConfig {
  SchedulerConfig scheduler;       // max_model_len and max_step_tokens are capped by the runner
  std::int32_t max_waiting = 256;  // queued beyond: 503
  bool prefix_caching = true;
  // The system message chat requests get when they bring none (the chat template's).
  std::string default_system_prompt;
};

// Continuous batching over a paged KV cache, in vLLM v1's parts: a thread of its own loops
//   Scheduler::schedule -> ModelRunner::execute -> Sampler -> OutputProcessor
// taking new requests between steps. The scheduler decides (policy, over the BlockManager),
// the runner computes logits, the sampler picks tokens, the output processor turns them into
// text and finish reasons on the requesters' streams. The engine only wires them and owns the
// thread and the queue between submit() and the scheduler.
class Engine final : public Generator {
 public:
  Engine(std::unique_ptr<ModelRunner> runner,
         std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer, EngineConfig config);
  ~Engine();  // stops the thread; unfinished requests end with FinishReason::cancelled

  // Queues a request; the stream delivers on `executor`. unavailable (503) when the waiting
  // queue is full, invalid_argument when the prompt cannot fit the model or the KV cache.
  Status submit(GenerationRequest request, boost::asio::any_io_executor executor,
                std::shared_ptr<GenerationStream>& out) override;

  const ByteLevelBpeTokenizer& tokenizer() const noexcept override { return *tokenizer_; }
  const EngineConfig& config() const noexcept { return config_; }
  const GenerationMetrics& metrics() const noexcept override { return metrics_; }
  std::int32_t max_model_len() const noexcept override { return config_.scheduler.max_model_len; }
  const std::string& default_system_prompt() const noexcept override {
    return config_.default_system_prompt;
  }

 private:
  void run();
  void step();

  std::unique_ptr<ModelRunner> runner_;
  std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer_;
  EngineConfig config_;
  GenerationMetrics metrics_;
  BlockManager blocks_;
  Scheduler scheduler_;
  OutputProcessor output_;
  Sampler sampler_;

  std::mutex mutex_;  // guards incoming_, stopping_
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  std::atomic<std::int32_t> queued_{0};  // incoming + waiting, for the 503 bound
  bool stopping_ = false;

  // Engine thread only.
  std::vector<float> logits_;  // [rows, vocab]
  std::vector<float> row_;     // the row being sampled, [vocab]
  std::vector<LogitsProcessor*> processors_;  // the sampled sequence's, per row
  std::vector<DeviceDraw> draws_;             // a step sampled on the runner's device: per row
  std::vector<std::int32_t> drawn_;           // and its tokens
  std::thread thread_;
};

}  // namespace coinfer::generation
