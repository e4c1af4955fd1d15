#include "coinfer/generation/scheduler.hpp"

#include <algorithm>
#include <string>

namespace coinfer::generation {

std::int32_t StepPlan::num_tokens() const noexcept {
  std::size_t n = 0;
  for (const auto& c : chunks) n += c.tokens.size();
  return static_cast<std::int32_t>(n);
}

std::unique_ptr<Sequence> make_sequence(GenerationRequest request,
                                        std::shared_ptr<GenerationStream> stream) {
  auto seq = std::make_unique<Sequence>();
  seq->request = std::move(request);
  seq->tokens = seq->request.prompt;
  seq->prompt_len = static_cast<std::int32_t>(seq->tokens.size());
  seq->rng.seed(seq->request.sampling.seed ? *seq->request.sampling.seed : std::random_device{}());
  for (const auto& s : seq->request.stop) seq->max_stop = std::max(seq->max_stop, s.size());
  seq->arrival = Clock::now();
  seq->stream = std::move(stream);
  return seq;
}

namespace {
// A running sequence whose next step feeds one token: its last, sampled one.
bool is_decode(const Sequence& s) noexcept {
  return static_cast<std::int32_t>(s.tokens.size()) - s.computed == 1 && s.computed >= s.prompt_len;
}
}  // namespace

void propose_lookup_draft(std::span<const std::int32_t> tokens, const SpeculativeConfig& config,
                          std::int32_t count, std::vector<std::int32_t>& out) {
  out.clear();
  const auto len = static_cast<std::ptrdiff_t>(tokens.size());
  if (count <= 0) return;
  for (std::ptrdiff_t n = std::min<std::ptrdiff_t>(config.lookup_max, len - 1);
       n >= std::max(1, config.lookup_min); --n) {
    const auto suffix = tokens.subspan(static_cast<std::size_t>(len - n));
    // The latest earlier occurrence: recent text is the likeliest to be repeated.
    for (std::ptrdiff_t at = len - n - 1; at >= 0; --at) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + at)) continue;
      // What followed it; past the end of the text, what the draft itself says (a text that
      // repeats with a period continues to).
      for (std::ptrdiff_t i = at + n; i < at + n + count; ++i) {
        out.push_back(i < len ? tokens[static_cast<std::size_t>(i)]
                              : out[static_cast<std::size_t>(i - len)]);
      }
      return;
    }
  }
}

Scheduler::Scheduler(SchedulerConfig config, BlockManager& blocks)
    : config_(config), blocks_(blocks) {}

Status Scheduler::validate(const GenerationRequest& request) const {
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
  return {};
}

void Scheduler::enqueue(std::unique_ptr<Sequence> sequence, bool front) {
  if (!config_.priority_scheduling) {
    if (front) {
      waiting_.push_front(std::move(sequence));
    } else {
      waiting_.push_back(std::move(sequence));
    }
    return;
  }
  // Lower values first (vLLM's priority). A new sequence goes after every waiting one of the
  // same or a lower value; a preempted one before those of its own value (it was admitted
  // before them).
  const int p = sequence->request.priority;
  auto at = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) {
    return front ? w->request.priority >= p : w->request.priority > p;
  });
  waiting_.insert(at, std::move(sequence));
}

void Scheduler::add(std::unique_ptr<Sequence> sequence) {
  sequence->id = next_id_++;
  enqueue(std::move(sequence), false);
}

void Scheduler::end_dropped(Clock::time_point now, StepPlan& plan) {
  auto drop = [&](auto& list, bool queued) {
    for (auto& s : list) {
      EndedSequence ended;
      if (s->cancelled()) {
        ended.reason = FinishReason::cancelled;
      } else if (s->request.deadline <= now) {
        ended.reason = FinishReason::timeout;
        ended.error = Status(Errc::deadline_exceeded, "the request's timeout passed");
      } else {
        continue;
      }
      if (s->allocated) {
        blocks_.free(s->id);
        s->allocated = false;
      }
      if (queued) ++plan.left_waiting;
      ended.sequence = std::move(s);
      plan.ended.push_back(std::move(ended));
    }
    list.erase(std::remove(list.begin(), list.end(), nullptr), list.end());
  };
  drop(waiting_, true);
  drop(running_, false);
}

void Scheduler::preempt(std::size_t running_index) {
  auto victim = std::move(running_[running_index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  blocks_.free(victim->id);
  victim->allocated = false;
  victim->computed = 0;
  victim->slots = 0;
  victim->draft.clear();
  enqueue(std::move(victim), true);
}

void Scheduler::reserve_slots(StepPlan& plan) {
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Sequence* s = running_[i].get();
    const auto missing = static_cast<std::int32_t>(s->tokens.size()) - s->slots;
    if (missing <= 0) continue;
    while (!blocks_.append_slots(s->id, missing, plan.block_copies)) {
      // The victim: the latest admitted (of the lowest priority, the highest value, with
      // priorities).
      std::size_t victim = running_.size() - 1;
      if (config_.priority_scheduling) {
        for (std::size_t j = running_.size(); j-- > 0;) {
          if (running_[j]->request.priority > running_[victim]->request.priority) victim = j;
        }
      }
      const bool self = running_[victim].get() == s;
      preempt(victim);
      ++plan.preemptions;
      if (self) {
        s = nullptr;
        --i;  // running_[i] is now the next sequence
        break;
      }
      if (victim < i) --i;
    }
    if (s != nullptr) s->slots += missing;
  }
  // Drafts, with the blocks left over once every plain decode has its slots: a draft that
  // does not fit is dropped, never a reason to preempt. (Slots a rejected draft reserved stay
  // with its sequence, for the tokens that follow.)
  std::int32_t decoding = 0;
  for (const auto& s : running_) decoding += is_decode(*s) ? 1 : 0;
  for (const auto& s : running_) {
    s->draft.clear();
    if (!is_decode(*s)) continue;
    propose_draft(*s, decoding);
    const auto missing = static_cast<std::int32_t>(s->tokens.size() + s->draft.size()) - s->slots;
    if (missing <= 0) continue;
    if (blocks_.append_slots(s->id, missing, plan.block_copies)) {
      s->slots += missing;
    } else {
      s->draft.clear();
    }
  }
}

void Scheduler::propose_draft(Sequence& s, std::int32_t decoding) const {
  const auto& r = s.request;
  const auto& spec = config_.speculative;
  const std::int32_t wanted = r.num_speculative_tokens >= 0 ? r.num_speculative_tokens : spec.num_tokens;
  if (wanted <= 0 || decoding > spec.max_running) return;
  // A step that confirms a whole draft of d tokens adds d + 1: no more than the request's
  // max_tokens and the model's length allow.
  const auto len = static_cast<std::int32_t>(s.tokens.size());
  const std::int32_t room = std::min(r.max_tokens - s.generated(), config_.max_model_len - len) - 1;
  propose_lookup_draft(s.tokens, spec, std::min(wanted, room), s.draft);
}

void Scheduler::admit(StepPlan& plan) {
  const bool may_admit = !config_.static_batching || running_.empty();
  while (may_admit && !waiting_.empty() &&
         static_cast<std::int32_t>(running_.size()) < config_.max_num_seqs) {
    Sequence& s = *waiting_.front();
    if (s.request.prefill_group && s.generated() == 0 &&
        std::ranges::any_of(running_, [&](const std::unique_ptr<Sequence>& r) {
          const auto full = r->prompt_len / blocks_.block_size() * blocks_.block_size();
          return r->request.prefill_group == s.request.prefill_group && r->computed < full;
        })) {
      break;  // its prompt's full blocks are being computed: admitted after, it shares them
    }
    if (!blocks_.can_allocate(s.tokens)) break;
    std::int32_t cached = 0;
    if (!blocks_.allocate(s.id, s.tokens, cached)) break;
    s.allocated = true;
    s.slots = static_cast<std::int32_t>(s.tokens.size());
    s.computed = cached;
    if (s.generated() == 0) {
      s.cached_tokens = cached;
      plan.prefix_queried_tokens += static_cast<std::uint64_t>(s.prompt_len);
      plan.prefix_hit_tokens += static_cast<std::uint64_t>(cached);
    }
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    ++plan.left_waiting;
  }
  // A sequence that needs more blocks than exist even alone cannot run: validate() refuses
  // prompts that do not fit, but a preempted long generation may not fit back.
  if (running_.empty() && !waiting_.empty()) {
    EndedSequence ended{std::move(waiting_.front()), FinishReason::error,
                        Status(Errc::unavailable, "the KV cache cannot hold the sequence")};
    waiting_.pop_front();
    ++plan.left_waiting;
    plan.ended.push_back(std::move(ended));
  }
}

void Scheduler::plan_chunks(StepPlan& plan) {
  std::int32_t budget = config_.max_step_tokens;
  auto add = [&](Sequence& s, std::span<const std::int32_t> tokens, std::int32_t logit_rows) {
    plan.chunks.push_back({tokens, s.computed, blocks_.table(s.id), logit_rows});
    plan.sequences.push_back(&s);
    budget -= static_cast<std::int32_t>(tokens.size());
  };
  for (auto& s : running_) {
    if (budget <= 0 || !is_decode(*s)) continue;
    // The last token, then as much of the draft as the budget leaves, each with logits.
    const auto room = static_cast<std::size_t>(budget - 1);
    if (s->draft.size() > room) s->draft.resize(room);
    s->feed.assign(1, s->tokens.back());
    s->feed.insert(s->feed.end(), s->draft.begin(), s->draft.end());
    add(*s, s->feed, static_cast<std::int32_t>(s->feed.size()));
  }
  for (auto& s : running_) {
    if (budget <= 0) break;
    if (is_decode(*s)) continue;  // added above
    const auto pending = static_cast<std::int32_t>(s->tokens.size()) - s->computed;
    if (pending <= 0) continue;
    const std::int32_t chunk = std::min(pending, budget);
    if (chunk < pending && !config_.chunked_prefill && !plan.chunks.empty()) {
      continue;  // the whole prompt in a later step, alone if need be
    }
    add(*s,
        std::span<const std::int32_t>(s->tokens).subspan(static_cast<std::size_t>(s->computed),
                                                         static_cast<std::size_t>(chunk)),
        chunk == pending ? 1 : 0);
  }
}

StepPlan Scheduler::schedule(Clock::time_point now) {
  StepPlan plan;
  end_dropped(now, plan);
  reserve_slots(plan);
  admit(plan);
  plan_chunks(plan);
  return plan;
}

std::int64_t Scheduler::complete(const StepPlan& plan) {
  std::int64_t prompt_tokens = 0;
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    Sequence& s = *plan.sequences[i];
    // A draft's tokens have KV only once accept_draft() confirms them; the last token's is
    // valid now.
    const auto count =
        s.draft.empty() ? static_cast<std::int32_t>(plan.chunks[i].tokens.size()) : 1;
    if (s.computed < s.prompt_len) prompt_tokens += std::min(count, s.prompt_len - s.computed);
    s.computed += count;
    blocks_.mark_computed(
        s.id, std::span<const std::int32_t>(s.tokens).first(static_cast<std::size_t>(s.computed)));
  }
  return prompt_tokens;
}

void Scheduler::accept_draft(Sequence& s, std::int32_t accepted) {
  s.computed += accepted;
  s.draft.clear();
}

std::vector<std::unique_ptr<Sequence>> Scheduler::retire_finished() {
  std::vector<std::unique_ptr<Sequence>> retired;
  for (auto& s : running_) {
    if (!s->finished()) continue;
    blocks_.free(s->id);
    s->allocated = false;
    retired.push_back(std::move(s));
  }
  running_.erase(std::remove(running_.begin(), running_.end(), nullptr), running_.end());
  return retired;
}

std::vector<std::unique_ptr<Sequence>> Scheduler::drain() {
  std::vector<std::unique_ptr<Sequence>> all;
  for (auto& s : waiting_) all.push_back(std::move(s));
  for (auto& s : running_) {
    blocks_.free(s->id);
    s->allocated = false;
    all.push_back(std::move(s));
  }
  waiting_.clear();
  running_.clear();
  return all;
}

}  // namespace coinfer::generation
