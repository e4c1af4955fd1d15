#pragma once

#include <condition_variable>
#include <deque>
#include <thread>

#include "coinfer/generation/block_manager.hpp"
#include "coinfer/generation/generator.hpp"

namespace coinfer {
class LlamaModel;
}  // namespace coinfer

namespace coinfer::generation {

struct EngineConfig {
  std::int32_t max_num_seqs = 64;      // sequences in one step (running)
  std::int32_t max_step_tokens = 256;  // token budget of one step: decodes + prefill chunks
  std::int32_t max_waiting = 256;      // queued beyond: 503
  std::int32_t max_model_len = 8192;   // prompt + output tokens of one sequence
  bool chunked_prefill = true;         // split long prompts across steps
  bool prefix_caching = true;
  bool priority_scheduling = false;  // else FCFS
  // Static batching (for comparison only): admit new sequences only when none is running.
  bool static_batching = false;
  int compute_threads = 1;
  // The system message chat requests get when they bring none (the chat template's).
  std::string default_system_prompt;
};

// Continuous batching over a paged KV cache. A thread of its own runs steps: the running
// decodes first (one token each), then prefill chunks of new or partly prefilled prompts up
// to the step's token budget, all in one forward of the model; each step may admit and finish
// sequences. When KV blocks run out the latest-admitted running sequence is preempted
// (its blocks freed; it is recomputed later from its prompt and the tokens it had made).
// Scheduling policy lives here; block bookkeeping in BlockManager; tensors in the model.
class Engine final : public Generator {
 public:
  Engine(std::unique_ptr<LlamaModel> model, std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer,
         EngineConfig config);
  ~Engine();  // stops the thread; unfinished requests end with FinishReason::cancelled

  // Queues a request; the stream delivers on `executor`. unavailable (503) when the waiting
  // queue is full, invalid_argument when the prompt cannot fit the model or the KV cache.
  Status submit(GenerationRequest request, boost::asio::any_io_executor executor,
                std::shared_ptr<GenerationStream>& out) override;

  const LlamaModel& model() const noexcept { return *model_; }
  const ByteLevelBpeTokenizer& tokenizer() const noexcept override { return *tokenizer_; }
  const EngineConfig& config() const noexcept { return config_; }
  const GenerationMetrics& metrics() const noexcept override { return metrics_; }
  std::int32_t max_model_len() const noexcept override { return config_.max_model_len; }
  const std::string& default_system_prompt() const noexcept override {
    return config_.default_system_prompt;
  }

 private:
  struct Sequence;
  void run();
  void admit_new(std::vector<std::unique_ptr<Sequence>>& incoming);
  bool schedule_and_run();
  void finish(Sequence& seq, FinishReason reason, Status error = {});
  void emit(Sequence& seq, std::int32_t token, const SampleResult& sample);
  void preempt(Sequence& seq);

  std::unique_ptr<LlamaModel> model_;
  std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer_;
  EngineConfig config_;
  BlockManager blocks_;
  Sampler sampler_;
  GenerationMetrics metrics_;

  std::mutex mutex_;  // guards incoming_, stopping_
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  std::atomic<std::int32_t> queued_{0};  // incoming + waiting, for the 503 bound
  bool stopping_ = false;

  // Engine thread only.
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;
  std::uint64_t next_id_ = 1;
  std::vector<std::int32_t> end_ids_;  // tokens that end a generation (unless ignore_eos)
  std::vector<std::int32_t> step_tokens_;
  std::vector<float> logits_;
  std::vector<float> row_;
  std::thread thread_;
};

}  // namespace coinfer::generation
