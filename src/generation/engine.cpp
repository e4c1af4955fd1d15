#include "coinfer/generation/engine.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>

#include "coinfer/models/llama.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer::generation {
namespace asio = boost::asio;

// --- Engine --------------------------------------------------------------------------------

struct Engine::Sequence {
  std::uint64_t id = 0;
  GenerationRequest request;
  std::shared_ptr<GenerationStream> stream;
  std::vector<std::int32_t> tokens;  // prompt, then generated
  std::int32_t prompt_len = 0;
  std::int32_t computed = 0;  // tokens whose KV is in the cache
  std::int32_t slots = 0;     // KV slots the block table holds
  bool allocated = false;
  std::int32_t cached_tokens = 0;
  std::mt19937_64 rng;
  std::string held;       // decoded bytes not yet sent (partial UTF-8, possible stop prefix)
  std::string sent_tail;  // the last bytes sent, to find stop strings across updates
  std::size_t max_stop = 0;
  Clock::time_point arrival;
  Clock::time_point last_token;
  bool first_token = false;
  GenerationUpdate update;  // what this step adds

  std::int32_t generated() const noexcept {
    return static_cast<std::int32_t>(tokens.size()) - prompt_len;
  }
  std::span<const std::int32_t> generated_tokens() const noexcept {
    return std::span<const std::int32_t>(tokens).subspan(prompt_len);
  }
};

namespace {
std::int32_t blocks_for(std::size_t kv_bytes_budget, std::size_t block_bytes) {
  return static_cast<std::int32_t>(std::max<std::size_t>(1, kv_bytes_budget / block_bytes));
}
}  // namespace

Engine::Engine(std::unique_ptr<LlamaModel> model,
               std::shared_ptr<const ByteLevelBpeTokenizer> tokenizer, EngineConfig config)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      config_(config),
      blocks_(model_->options().kv_blocks, model_->options().block_size, config.prefix_caching),
      sampler_(model_->config().vocab) {
  (void)blocks_for;
  // What ends a text: the end-of-sequence token and the other end markers the vocabulary has
  // (SmolLM2: eos is <|im_end|>; a completion of plain text ends with <|endoftext|>).
  if (tokenizer_->eos_id() >= 0) end_ids_.push_back(tokenizer_->eos_id());
  for (const char* marker : {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>"}) {
    if (auto id = tokenizer_->token_id(marker); id && std::find(end_ids_.begin(), end_ids_.end(), *id) == end_ids_.end()) {
      end_ids_.push_back(*id);
    }
  }
  config_.max_model_len = std::min(config_.max_model_len, model_->config().context);
  config_.max_step_tokens = std::min(config_.max_step_tokens, model_->options().max_step_tokens);
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

Status Engine::submit(GenerationRequest request, asio::any_io_executor executor,
                      std::shared_ptr<GenerationStream>& out) {
  const auto prompt_len = static_cast<std::int32_t>(request.prompt.size());
  if (prompt_len == 0) return Status::invalid("prompt: is empty");
  if (prompt_len + std::max(request.min_tokens, 1) > config_.max_model_len) {
    return Status::invalid("prompt: " + std::to_string(prompt_len) +
                           " tokens leave no room for output within max_model_len " +
                           std::to_string(config_.max_model_len));
  }
  if (blocks_.blocks_needed(prompt_len + 1) > blocks_.num_blocks()) {
    return Status::invalid(
        "prompt: " + std::to_string(prompt_len) + " tokens do not fit the KV cache (" +
        std::to_string(blocks_.num_blocks() * blocks_.block_size()) + " tokens)");
  }
  if (queued_.fetch_add(1) >= config_.max_waiting) {
    queued_.fetch_sub(1);
    return Status(Errc::unavailable, "the generation queue is full (" +
                                         std::to_string(config_.max_waiting) + " waiting)");
  }
  auto seq = std::make_unique<Sequence>();
  seq->request = std::move(request);
  seq->tokens = seq->request.prompt;
  seq->prompt_len = prompt_len;
  seq->rng.seed(seq->request.sampling.seed ? *seq->request.sampling.seed : std::random_device{}());
  for (const auto& s : seq->request.stop) seq->max_stop = std::max(seq->max_stop, s.size());
  seq->arrival = Clock::now();
  seq->stream = std::make_shared<GenerationStream>(std::move(executor));
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
  set_compute_threads(config_.compute_threads);
  std::vector<std::unique_ptr<Sequence>> incoming;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !incoming_.empty() || !waiting_.empty() || !running_.empty();
      });
      if (stopping_) break;
      incoming.swap(incoming_);
    }
    admit_new(incoming);
    schedule_and_run();
  }
  for (auto& s : incoming_) finish(*s, FinishReason::cancelled);
  for (auto& s : waiting_) finish(*s, FinishReason::cancelled);
  for (auto& s : running_) finish(*s, FinishReason::cancelled);
}

void Engine::admit_new(std::vector<std::unique_ptr<Sequence>>& incoming) {
  for (auto& s : incoming) {
    s->id = next_id_++;
    if (config_.priority_scheduling) {
      // Stable: after every waiting sequence of the same or higher priority.
      auto at = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) {
        return w->request.priority < s->request.priority;
      });
      waiting_.insert(at, std::move(s));
    } else {
      waiting_.push_back(std::move(s));
    }
  }
  incoming.clear();
}

void Engine::finish(Sequence& seq, FinishReason reason, Status error) {
  if (seq.allocated) {
    blocks_.free(seq.id);
    seq.allocated = false;
  }
  // Whatever text is held back is complete now (a stop string would have matched already).
  if (reason == FinishReason::length || (reason == FinishReason::stop && !seq.held.empty())) {
    seq.update.text += seq.held;
    seq.held.clear();
  }
  seq.update.finish = reason;
  seq.update.error = std::move(error);
  seq.update.prompt_tokens = seq.prompt_len;
  seq.update.completion_tokens = std::max(0, seq.generated());
  seq.update.cached_tokens = seq.cached_tokens;
  const auto now = Clock::now();
  if (reason == FinishReason::stop || reason == FinishReason::length) {
    metrics_.request_success.add();
    metrics_.e2e_request_latency_s.observe(
        std::chrono::duration<double>(now - seq.arrival).count());
  } else {
    metrics_.request_failure.add();
  }
  seq.stream->push(std::move(seq.update));
  seq.update = {};
}

void Engine::preempt(Sequence& seq) {
  blocks_.free(seq.id);
  seq.allocated = false;
  seq.computed = 0;
  seq.slots = 0;
  metrics_.num_preemptions.add();
}

// Appends a sampled token and its text; finishes the sequence on a stop condition.
void Engine::emit(Sequence& seq, std::int32_t token, const SampleResult& sample) {
  const auto& r = seq.request;
  const auto now = Clock::now();
  if (!seq.first_token) {
    seq.first_token = true;
    metrics_.time_to_first_token_s.observe(
        std::chrono::duration<double>(now - seq.arrival).count());
  } else {
    metrics_.time_per_output_token_s.observe(
        std::chrono::duration<double>(now - seq.last_token).count());
  }
  seq.last_token = now;
  metrics_.generation_tokens.add();
  seq.tokens.push_back(token);
  const bool may_stop = seq.generated() >= r.min_tokens;
  const bool eos = !r.ignore_eos && std::find(end_ids_.begin(), end_ids_.end(), token) != end_ids_.end();
  const bool stop_id =
      std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), token) != r.stop_token_ids.end();
  if (may_stop && (eos || stop_id)) {
    finish(seq, FinishReason::stop);
    return;
  }
  GeneratedToken out{token, sample.logprob, sample.top};
  seq.update.tokens.push_back(std::move(out));
  if (!(r.skip_special_tokens && tokenizer_->is_control(token))) {
    (void)tokenizer_->token_bytes(token, seq.held);
  }
  // Stop strings: search the held text together with the tail already sent.
  if (may_stop && seq.max_stop > 0) {
    const std::string window = seq.sent_tail + seq.held;
    std::size_t cut = std::string::npos;
    for (const auto& s : r.stop) {
      if (s.empty()) continue;
      const auto at = window.find(s);
      if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
      // Text before the stop string that was not sent yet goes out; the rest is dropped.
      if (cut > seq.sent_tail.size())
        seq.update.text += seq.held.substr(0, cut - seq.sent_tail.size());
      seq.held.clear();
      finish(seq, FinishReason::stop);
      return;
    }
  }
  // Send everything but a trailing partial UTF-8 character and a suffix that could begin a
  // stop string.
  std::size_t keep = 0;
  {
    const std::size_t n = seq.held.size();
    for (std::size_t back = 1; back <= std::min<std::size_t>(n, 4); ++back) {
      const auto c = static_cast<unsigned char>(seq.held[n - back]);
      if ((c & 0xC0) == 0x80) continue;  // continuation byte
      const std::size_t len = c < 0x80           ? 1
                              : (c >> 5) == 0x6  ? 2
                              : (c >> 4) == 0xE  ? 3
                              : (c >> 3) == 0x1E ? 4
                                                 : 1;
      if (len > back) keep = back;
      break;
    }
  }
  if (seq.max_stop > 1) keep = std::max(keep, std::min(seq.held.size(), seq.max_stop - 1));
  const std::size_t send = seq.held.size() - keep;
  if (send > 0) {
    seq.update.text.append(seq.held, 0, send);
    seq.sent_tail += seq.held.substr(0, send);
    if (seq.sent_tail.size() > seq.max_stop)
      seq.sent_tail.erase(0, seq.sent_tail.size() - seq.max_stop);
    seq.held.erase(0, send);
  }
  if (seq.generated() >= r.max_tokens ||
      static_cast<std::int32_t>(seq.tokens.size()) >= config_.max_model_len) {
    finish(seq, FinishReason::length);
  }
}

bool Engine::schedule_and_run() {
  const auto now = Clock::now();
  // Drop what was cancelled or expired, waiting or running.
  auto drop = [&](auto& list, bool queued) {
    for (auto& s : list) {
      if (s->stream->cancelled()) {
        finish(*s, FinishReason::cancelled);
      } else if (s->request.deadline <= now) {
        finish(*s, FinishReason::timeout,
               Status(Errc::deadline_exceeded, "the request's timeout passed"));
      } else {
        continue;
      }
      s.reset();
      if (queued) queued_.fetch_sub(1);  // a place in the bounded queue is free again
    }
    list.erase(std::remove(list.begin(), list.end(), nullptr), list.end());
  };
  drop(waiting_, true);
  drop(running_, false);

  // 1. Running decodes (and partly prefilled prompts) keep their KV: one slot each for the
  //    token they feed next. Out of blocks: preempt the latest admitted.
  std::vector<std::pair<std::int32_t, std::int32_t>> copies;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = *running_[i];
    const auto missing = static_cast<std::int32_t>(s.tokens.size()) - s.slots;
    if (missing <= 0) continue;
    bool appended = false;
    while (!(appended = blocks_.append_slots(s.id, missing, copies))) {
      auto& victim = running_.back();
      preempt(*victim);
      const bool self = victim.get() == &s;
      waiting_.push_front(std::move(victim));
      queued_.fetch_add(1);  // back in the queue, to be admitted (and counted out) again
      running_.pop_back();
      if (self) break;
    }
    if (appended) s.slots += missing;
  }
  for (auto [src, dst] : copies) model_->copy_block(src, dst);

  // 2. Admit waiting sequences while blocks, the sequence limit and the budget allow.
  const bool may_admit = !config_.static_batching || running_.empty();
  while (may_admit && !waiting_.empty() &&
         static_cast<std::int32_t>(running_.size()) < config_.max_num_seqs) {
    Sequence& s = *waiting_.front();
    if (!blocks_.can_allocate(s.tokens)) break;
    std::int32_t cached = 0;
    if (!blocks_.allocate(s.id, s.tokens, cached)) break;
    s.allocated = true;
    s.slots = static_cast<std::int32_t>(s.tokens.size());
    s.computed = cached;
    if (s.generated() == 0) {
      s.cached_tokens = cached;
      metrics_.prefix_cache_queries.add(static_cast<std::uint64_t>(s.prompt_len));
      metrics_.prefix_cache_hits.add(static_cast<std::uint64_t>(cached));
    }
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    queued_.fetch_sub(1);
  }
  // A sequence that needs more blocks than exist even alone cannot run: submit() refuses
  // prompts that do not fit, but a preempted long generation may not fit back.
  if (running_.empty() && !waiting_.empty()) {
    auto& s = waiting_.front();
    finish(*s, FinishReason::error,
           Status(Errc::unavailable, "the KV cache cannot hold the sequence"));
    waiting_.pop_front();
    queued_.fetch_sub(1);
  }

  // 3. The step: decodes first (one token each), then prefill chunks within the budget.
  std::vector<LlamaSequenceStep> steps;
  std::vector<Sequence*> stepped;
  step_tokens_.clear();
  std::int32_t budget = config_.max_step_tokens;
  auto add = [&](Sequence& s, std::int32_t count) {
    LlamaSequenceStep st;
    st.token_begin = static_cast<int>(step_tokens_.size());
    st.token_count = count;
    st.position = s.computed;
    st.block_table = blocks_.table(s.id);
    const bool reaches_end = s.computed + count == static_cast<std::int32_t>(s.tokens.size());
    st.logits = reaches_end ? LlamaSequenceStep::Logits::last : LlamaSequenceStep::Logits::none;
    step_tokens_.insert(step_tokens_.end(), s.tokens.begin() + s.computed,
                        s.tokens.begin() + s.computed + count);
    steps.push_back(st);
    stepped.push_back(&s);
    budget -= count;
  };
  for (auto& s : running_) {
    const auto pending = static_cast<std::int32_t>(s->tokens.size()) - s->computed;
    if (pending == 1 && s->computed >= s->prompt_len && budget > 0) add(*s, 1);
  }
  for (auto& s : running_) {
    if (budget <= 0) break;
    const auto pending = static_cast<std::int32_t>(s->tokens.size()) - s->computed;
    if (pending == 1 && s->computed >= s->prompt_len) continue;  // a decode, added above
    if (pending <= 0) continue;
    const std::int32_t chunk = std::min(pending, budget);
    if (chunk < pending && !config_.chunked_prefill) {
      if (!steps.empty()) continue;  // the whole prompt next step, alone if need be
    }
    add(*s, chunk);
  }
  metrics_.num_requests_running.store(static_cast<std::int64_t>(running_.size()));
  metrics_.num_requests_waiting.store(static_cast<std::int64_t>(waiting_.size()));
  metrics_.kv_cache_usage.store(blocks_.usage());
  if (steps.empty()) return false;

  if (auto status = model_->forward(step_tokens_, steps, logits_); !status.ok()) {
    spdlog::error("generation step failed: {}", status.message());
    for (auto* s : stepped) {
      finish(*s, FinishReason::error, Status(Errc::internal, status.message()));
    }
    running_.erase(std::remove_if(running_.begin(), running_.end(),
                                  [](const auto& s) { return !s->allocated; }),
                   running_.end());
    return true;
  }

  // 4. Sample where logits came back; update the prefix cache; deliver.
  const std::int32_t vocab = model_->config().vocab;
  std::size_t row = 0;
  std::vector<Sequence*> finished;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Sequence& s = *stepped[i];
    const bool was_prefill = s.computed < s.prompt_len;
    if (was_prefill)
      metrics_.prompt_tokens.add(
          static_cast<std::uint64_t>(std::min(steps[i].token_count, s.prompt_len - s.computed)));
    s.computed += steps[i].token_count;
    blocks_.mark_computed(s.id, std::span<const std::int32_t>(s.tokens).first(s.computed));
    if (steps[i].logits == LlamaSequenceStep::Logits::none) continue;
    row_.assign(logits_.begin() + static_cast<std::ptrdiff_t>(row * vocab),
                logits_.begin() + static_cast<std::ptrdiff_t>((row + 1) * vocab));
    ++row;
    const SampleResult sample =
        sampler_.sample(row_, s.request.sampling, s.generated_tokens(), s.rng);
    emit(s, sample.token, sample);
  }
  for (auto& s : running_) {
    if (s->update.finish == FinishReason::none &&
        (!s->update.tokens.empty() || !s->update.text.empty())) {
      s->stream->push(std::move(s->update));
      s->update = {};
    }
  }
  running_.erase(
      std::remove_if(running_.begin(), running_.end(), [](const auto& s) { return !s->allocated; }),
      running_.end());
  metrics_.num_requests_running.store(static_cast<std::int64_t>(running_.size()));
  metrics_.kv_cache_usage.store(blocks_.usage());
  return true;
}

}  // namespace coinfer::generation
