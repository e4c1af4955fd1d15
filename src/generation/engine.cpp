#include "coinfer/generation/engine.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer::generation {

namespace {
EngineConfig capped(EngineConfig config, const RunnerLimits& limits) {
  auto& s = config.scheduler;
  s.max_model_len = std::min(s.max_model_len, limits.context);
  s.max_step_tokens = std::min(s.max_step_tokens, limits.max_step_tokens);
  return config;
}
}  // namespace

Engine::Engine(std::unique_ptr<ModelRunner> runner,
               std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer, EngineConfig config)
    : runner_(std::move(runner)),
      tokenizer_(std::move(tokenizer)),
      config_(capped(std::move(config), runner_->limits())),
      blocks_(runner_->limits().kv_blocks, runner_->limits().block_size, config_.prefix_caching),
      scheduler_(config_.scheduler, blocks_),
      output_(*tokenizer_, config_.scheduler.max_model_len, metrics_),
      sampler_(runner_->limits().vocab) {
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status Engine::submit(GenerationRequest request, boost::asio::any_io_executor executor,
                      std::shared_ptr<GenerationStream>& out) {
  if (auto s = scheduler_.validate(request); !s.ok()) return s;
  if (queued_.fetch_add(1) >= config_.max_waiting) {
    queued_.fetch_sub(1);
    return Status(Errc::unavailable, "the generation queue is full (" +
                                         std::to_string(config_.max_waiting) + " waiting)");
  }
  auto seq =
      make_sequence(std::move(request), std::make_shared<GenerationStream>(std::move(executor)));
  out = seq->stream;
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(seq));
  }
  metrics_.num_requests_waiting.fetch_add(1);
  wake_.notify_one();
  return {};
}

void Engine::run() {
  runner_->bind_thread();
  std::vector<std::unique_ptr<Sequence>> incoming;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !incoming_.empty() || scheduler_.num_waiting() > 0 ||
               scheduler_.num_running() > 0;
      });
      if (stopping_) break;
      incoming.swap(incoming_);
    }
    for (auto& s : incoming) scheduler_.add(std::move(s));
    incoming.clear();
    step();
  }
  for (auto& s : incoming_) {
    output_.finish(*s, FinishReason::cancelled);
    output_.flush(*s);
  }
  for (auto& s : scheduler_.drain()) {
    output_.finish(*s, FinishReason::cancelled);
    output_.flush(*s);
  }
}

void Engine::step() {
  StepPlan plan = scheduler_.schedule(Clock::now());
  // Sequences the scheduler sent back to the queue count against its bound again.
  queued_.fetch_add(plan.preemptions);
  queued_.fetch_sub(plan.left_waiting);
  metrics_.num_preemptions.add(static_cast<std::uint64_t>(plan.preemptions));
  metrics_.prefix_cache_queries.add(plan.prefix_queried_tokens);
  metrics_.prefix_cache_hits.add(plan.prefix_hit_tokens);
  metrics_.num_requests_running.store(static_cast<std::int64_t>(scheduler_.num_running()));
  metrics_.num_requests_waiting.store(static_cast<std::int64_t>(scheduler_.num_waiting()));
  metrics_.kv_cache_usage.store(blocks_.usage());
  // Their blocks are free already: a requester that sees the final update sees the usage too.
  for (auto& e : plan.ended) {
    output_.finish(*e.sequence, e.reason, std::move(e.error));
    output_.flush(*e.sequence);
  }
  if (plan.empty()) return;

  runner_->copy_blocks(plan.block_copies);
  // On a runner that samples on its device, a step whose every logit row can be drawn there
  // (no penalties, logit bias, logprobs, logits processors or draft to verify) brings back
  // tokens instead of logits. The uniform each draw needs comes from the request's generator.
  bool on_device = runner_->samples_on_device();
  for (std::size_t i = 0; on_device && i < plan.chunks.size(); ++i) {
    if (plan.chunks[i].logit_rows == 0) continue;
    const Sequence& s = *plan.sequences[i];
    const SamplingParams& p = s.request.sampling;
    on_device = plan.chunks[i].logit_rows == 1 && s.draft.empty() &&
                s.request.logits_processors.empty() && p.logprobs < 0 &&
                p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f &&
                p.repetition_penalty == 1.0f && p.logit_bias.empty();
  }
  draws_.clear();
  for (std::size_t i = 0; on_device && i < plan.chunks.size(); ++i) {
    if (plan.chunks[i].logit_rows == 0) continue;
    Sequence& s = *plan.sequences[i];
    const SamplingParams& p = s.request.sampling;
    const auto uniform = static_cast<float>(static_cast<double>(s.rng() >> 40) * 0x1.0p-24);
    draws_.push_back({p.temperature, p.top_k, p.top_p, p.min_p, uniform});
  }
  const Status status = on_device ? runner_->execute_sampled(plan.chunks, draws_, drawn_)
                                  : runner_->execute(plan.chunks, logits_);
  if (!status.ok()) {
    spdlog::error("generation step failed: {}", status.message());
    for (auto* s : plan.sequences) {
      output_.finish(*s, FinishReason::error, Status(Errc::internal, status.message()));
    }
    for (auto& s : scheduler_.retire_finished()) output_.flush(*s);
    return;
  }
  metrics_.prompt_tokens.add(static_cast<std::uint64_t>(scheduler_.complete(plan)));

  // Sample where logits came back, in chunk order; then deliver. A draft's rows are sampled in
  // order while the sampled token is the drafted one: row j's logits follow draft tokens
  // 0..j-1, so they stand only if those were confirmed. Each kept token is drawn from its own
  // position's distribution, as without a draft, so a draft changes no output (a deterministic
  // draft's speculative sampling: accepted with probability p(draft), else a draw from the
  // rest of p).
  const auto vocab = static_cast<std::size_t>(runner_->limits().vocab);
  std::size_t row = 0;
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    const auto rows = static_cast<std::size_t>(plan.chunks[i].logit_rows);
    if (rows == 0) continue;
    Sequence& s = *plan.sequences[i];
    if (on_device) {  // one row each, drawn already
      SampleResult drawn;
      drawn.token = drawn_[row++];
      output_.append(s, drawn);
      continue;
    }
    processors_.clear();
    for (const auto& p : s.request.logits_processors) processors_.push_back(p.get());
    const std::size_t drafted = s.draft.size();  // rows - 1 when verifying a draft, else 0
    std::size_t accepted = 0;
    for (std::size_t j = 0; j < rows; ++j) {
      row_.assign(logits_.begin() + static_cast<std::ptrdiff_t>((row + j) * vocab),
                  logits_.begin() + static_cast<std::ptrdiff_t>((row + j + 1) * vocab));
      const auto sample =
          sampler_.sample(row_, s.request.sampling, s.generated_tokens(), s.rng, processors_);
      output_.append(s, sample);
      if (j == drafted || s.finished() || sample.token != s.draft[j]) break;
      ++accepted;
    }
    row += rows;
    if (drafted > 0) {
      scheduler_.accept_draft(s, static_cast<std::int32_t>(accepted));
      metrics_.spec_decode_num_drafts.add();
      metrics_.spec_decode_num_draft_tokens.add(drafted);
      metrics_.spec_decode_num_accepted_tokens.add(accepted);
    }
  }
  // Finished sequences leave (blocks freed, metrics current) before anyone hears of it.
  auto retired = scheduler_.retire_finished();
  metrics_.num_requests_running.store(static_cast<std::int64_t>(scheduler_.num_running()));
  metrics_.kv_cache_usage.store(blocks_.usage());
  for (const auto& s : scheduler_.running()) output_.flush(*s);
  for (const auto& s : retired) output_.flush(*s);
}

}  // namespace coinfer::generation
