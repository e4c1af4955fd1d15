#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/block_manager.hpp"
#include "coinfer/generation/sequence.hpp"

namespace coinfer::generation {

// Prompt-lookup speculative decoding (vLLM's "ngram" method, no draft model): a decoding
// sequence whose last tokens occurred earlier in its prompt or output proposes the tokens that
// followed them there, and one step feeds its last token and the draft together; the engine
// keeps the draft's longest prefix that sampling confirms, plus the token sampled after it.
struct SpeculativeConfig {
  std::int32_t num_tokens = 4;   // draft tokens per step, the requests' default (0: off)
  std::int32_t lookup_min = 2;   // the shortest suffix (n-gram) looked up
  std::int32_t lookup_max = 4;   // the longest, tried first
  // Drafts only while at most this many sequences decode in a step: beyond, the step's rows
  // already fill the GEMMs, and rejected draft rows cost what they do not save.
  std::int32_t max_running = 4;
};

struct SchedulerConfig {
  std::int32_t max_num_seqs = 64;      // sequences in one step (running)
  std::int32_t max_step_tokens = 256;  // token budget of one step: decodes + prefill chunks
  std::int32_t max_model_len = 8192;   // prompt + output tokens of one sequence
  bool chunked_prefill = true;         // split long prompts across steps
  bool priority_scheduling = false;    // else FCFS
  // Static batching (for comparison only): admit new sequences only when none is running.
  bool static_batching = false;
  SpeculativeConfig speculative;
};

// The prompt-lookup draft for a sequence whose tokens are `tokens`: for n from lookup_max down
// to lookup_min, the latest earlier occurrence of its last n tokens, and the `count` tokens
// that followed it there (continuing with the draft's own tokens where the text ends: a
// repeated span goes on repeating). Empty when no suffix recurs.
void propose_lookup_draft(std::span<const std::int32_t> tokens, const SpeculativeConfig& config,
                          std::int32_t count, std::vector<std::int32_t>& out);

// One sequence's part of a step, all a model runner sees of it: feed `tokens` at positions
// position .. position + tokens.size() - 1 (earlier positions are in its KV blocks already);
// position p lives in block block_table[p / block_size], slot p % block_size, and the table
// covers every position the chunk writes. `logit_rows`: how many of the chunk's last tokens
// the step returns logits for, in order: 0 for a prefill chunk that does not reach the end of
// the prompt, 1 for a decode or a prompt's last chunk, 1 + the draft's length for a decode
// that verifies a draft (the chunk is the last token, then the draft).
struct ScheduledChunk {
  std::span<const std::int32_t> tokens;
  std::int32_t position = 0;
  std::span<const std::int32_t> block_table;
  std::int32_t logit_rows = 0;
};

// A sequence the scheduler took out of the queue or the running batch without running it
// further: cancelled by its requester, past its deadline, or unable to fit the KV cache.
struct EndedSequence {
  std::unique_ptr<Sequence> sequence;
  FinishReason reason = FinishReason::none;
  Status error;
};

// One step, as decided. The spans point into the sequences and the block manager and stay
// valid until the next call into the scheduler or a change to the sequences' tokens.
struct StepPlan {
  std::vector<ScheduledChunk> chunks;  // running decodes first (one token each), then prefills
  std::vector<Sequence*> sequences;    // chunks[i] is sequences[i]'s
  // (src, dst): copy-on-write, the runner copies block src's KV to dst before the step.
  std::vector<std::pair<std::int32_t, std::int32_t>> block_copies;
  std::vector<EndedSequence> ended;
  std::int32_t preemptions = 0;   // running sequences sent back to the waiting queue
  std::int32_t left_waiting = 0;  // sequences that left the waiting queue (admitted or ended)
  // Prefix cache, over the prompts admitted for the first time in this step.
  std::uint64_t prefix_queried_tokens = 0;
  std::uint64_t prefix_hit_tokens = 0;

  bool empty() const noexcept { return chunks.empty(); }
  std::int32_t num_tokens() const noexcept;
};

// Continuous batching policy over a paged KV cache (vLLM v1's scheduler): which sequences run
// in the next step and how many of their tokens. Each step:
//   1. cancelled and expired sequences, waiting or running, end (their blocks freed);
//   2. running sequences get KV slots for the tokens they feed next (a decode with a draft
//      for its draft too, unless that would preempt: the draft is dropped first); when blocks
//      run out the
//      victim is preempted by recompute (blocks freed, back to the front of the queue, its
//      prompt and generated tokens prefilled again later). The victim is the latest admitted
//      running sequence; with priorities, the latest admitted of the lowest priority;
//   3. waiting sequences are admitted in queue order (FCFS, or by priority, stable) while the
//      sequence limit and the free blocks (counting prefix cache hits) allow; the head of the
//      queue blocks the rest (no overtaking);
//   4. the step: every running decode one token, then prefill chunks in admission order within
//      the token budget. A prompt longer than what is left is split; without chunked prefill
//      it is not split to share a step, but waits for a step of its own (split there only
//      where it exceeds the whole budget: a step never does).
// Policy only: blocks are counted by BlockManager, tensors never seen. Not thread-safe: the
// engine's thread drives it, except validate(), which reads only what never changes.
class Scheduler {
 public:
  Scheduler(SchedulerConfig config, BlockManager& blocks);

  const SchedulerConfig& config() const noexcept { return config_; }

  // Whether a request can ever run: a prompt, with room for one output token (min_tokens'
  // worth) within max_model_len, whose KV fits the whole cache. invalid_argument naming why.
  Status validate(const GenerationRequest& request) const;

  // Queues a sequence (priority order, stable, when priorities are on) and names it.
  void add(std::unique_ptr<Sequence> sequence);

  StepPlan schedule(Clock::time_point now);

  // After the runner executed `plan`: its chunks' tokens have KV now (their full blocks join
  // the prefix cache), a draft's only once accept_draft() says how much of it stands. Returns
  // how many of them were prompt tokens.
  std::int64_t complete(const StepPlan& plan);

  // After sampling: the first `accepted` tokens of s's draft were confirmed and appended to its
  // tokens, and their KV (written by the step) is valid; the rest is dropped, and its KV slots
  // are written over by the tokens that come next.
  void accept_draft(Sequence& s, std::int32_t accepted);

  // Running sequences that finished leave, their blocks freed; they are handed back.
  std::vector<std::unique_ptr<Sequence>> retire_finished();

  // Every sequence still queued or running, blocks freed: for shutdown.
  std::vector<std::unique_ptr<Sequence>> drain();

  std::size_t num_waiting() const noexcept { return waiting_.size(); }
  std::size_t num_running() const noexcept { return running_.size(); }
  std::span<const std::unique_ptr<Sequence>> running() const noexcept { return running_; }

 private:
  void end_dropped(Clock::time_point now, StepPlan& plan);
  void propose_draft(Sequence& s, std::int32_t decoding) const;
  void reserve_slots(StepPlan& plan);
  void admit(StepPlan& plan);
  void plan_chunks(StepPlan& plan);
  void preempt(std::size_t running_index);
  void enqueue(std::unique_ptr<Sequence> sequence, bool front);

  SchedulerConfig config_;
  BlockManager& blocks_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // admission order
  std::uint64_t next_id_ = 1;
};

}  // namespace coinfer::generation
