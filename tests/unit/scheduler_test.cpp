#include "coinfer/generation/scheduler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <map>
#include <numeric>
#include <ostream>
#include <vector>

using namespace coinfer;
using namespace coinfer::generation;

namespace {

std::vector<std::int32_t> prompt_of(std::int32_t length, std::int32_t first = 1) {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(length));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

// What one chunk of a step was, kept after the step (the plan's spans do not outlive it).
struct Ran {
  std::uint64_t id = 0;
  std::int32_t count = 0;
  std::int32_t position = 0;
  bool logits = false;
  bool operator==(const Ran&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Ran& r) {
  return os << "{seq " << r.id << ", " << r.count << " at " << r.position
            << (r.logits ? ", logits}" : "}");
}

struct Step {
  std::vector<Ran> chunks;
  std::vector<std::pair<std::uint64_t, FinishReason>> ended;
  std::int32_t preemptions = 0;
  std::int32_t left_waiting = 0;
  std::uint64_t prefix_hits = 0;
};

// The real Scheduler and BlockManager driven as the engine drives them, with a fake runner and
// sampler: every chunk "runs" (its block table must cover what it writes), each logits row
// appends token 1000 + the count generated so far, and a sequence finishes (length) at its
// max_tokens; finished sequences retire at the end of the step.
struct Harness {
  explicit Harness(SchedulerConfig config, std::int32_t num_blocks = 64,
                   std::int32_t block_size = 4, bool prefix_caching = true)
      : blocks(num_blocks, block_size, prefix_caching), scheduler(config, blocks) {}

  // The prompt is first_token, first_token + 1, ...; by default a range no other prompt shares
  // (so no prefix cache hits).
  Sequence* add(std::int32_t prompt_len, std::int32_t max_tokens = 8, int priority = 0,
                std::int32_t first_token = -1, std::shared_ptr<const void> group = nullptr) {
    GenerationRequest r;
    r.prefill_group = std::move(group);
    r.prompt = prompt_of(prompt_len, first_token >= 0 ? first_token : 1 + 10000 * ++added);
    r.max_tokens = max_tokens;
    r.priority = priority;
    auto seq = make_sequence(std::move(r), nullptr);
    Sequence* raw = seq.get();
    REQUIRE(scheduler.validate(raw->request).ok());
    scheduler.add(std::move(seq));
    return raw;
  }

  Step step(Clock::time_point now = Clock::now()) {
    StepPlan plan = scheduler.schedule(now);
    Step out;
    out.preemptions = plan.preemptions;
    out.left_waiting = plan.left_waiting;
    out.prefix_hits = plan.prefix_hit_tokens;
    for (auto& e : plan.ended) {
      CHECK_FALSE(e.sequence->allocated);
      out.ended.emplace_back(e.sequence->id, e.reason);
      done.push_back(std::move(e.sequence));
    }
    REQUIRE(plan.chunks.size() == plan.sequences.size());
    for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
      const auto& c = plan.chunks[i];
      const Sequence& s = *plan.sequences[i];
      const auto count = static_cast<std::int32_t>(c.tokens.size());
      CHECK(c.position == s.computed);
      const auto last = c.position + count - 1;
      CHECK(static_cast<std::int32_t>(c.block_table.size()) > last / blocks.block_size());
      out.chunks.push_back({s.id, count, c.position, c.logit_rows > 0});
    }
    REQUIRE(plan.num_tokens() <= scheduler.config().max_step_tokens);
    scheduler.complete(plan);
    for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
      if (plan.chunks[i].logit_rows == 0) continue;
      Sequence& s = *plan.sequences[i];
      s.tokens.push_back(1000 + s.generated());
      if (s.generated() >= s.request.max_tokens) s.finish = FinishReason::length;
    }
    for (auto& s : scheduler.retire_finished()) done.push_back(std::move(s));
    CHECK(blocks.audit().empty());
    return out;
  }

  BlockManager blocks;
  Scheduler scheduler;
  int added = 0;
  std::vector<std::unique_ptr<Sequence>> done;  // ended and retired: the tests still read them
};

SchedulerConfig config_with(std::int32_t max_step_tokens, std::int32_t max_num_seqs = 64) {
  SchedulerConfig c;
  c.max_step_tokens = max_step_tokens;
  c.max_num_seqs = max_num_seqs;
  return c;
}

}  // namespace

TEST_CASE(
    "scheduler: decodes run first, one token each, and prefill chunks fill the rest of the "
    "budget") {
  Harness h(config_with(16));
  Sequence* a = h.add(6);
  Sequence* b = h.add(5);
  auto first = h.step();  // both prompts fit the budget: 6 + 5
  CHECK(first.chunks == std::vector<Ran>{{a->id, 6, 0, true}, {b->id, 5, 0, true}});
  Sequence* c = h.add(30);
  auto second = h.step();
  // a and b decode (1 token each); c's prompt gets the 14 tokens left.
  CHECK(second.chunks ==
        std::vector<Ran>{{a->id, 1, 6, true}, {b->id, 1, 5, true}, {c->id, 14, 0, false}});
}

TEST_CASE(
    "scheduler: a long prompt is prefilled in chunks at the budget's edge and only the last asks "
    "for logits") {
  Harness h(config_with(8));
  Sequence* s = h.add(20);
  CHECK(h.step().chunks == std::vector<Ran>{{s->id, 8, 0, false}});
  CHECK(h.step().chunks == std::vector<Ran>{{s->id, 8, 8, false}});
  CHECK(h.step().chunks == std::vector<Ran>{{s->id, 4, 16, true}});
  CHECK(s->generated() == 1);
  CHECK(h.step().chunks == std::vector<Ran>{{s->id, 1, 20, true}});  // now a decode
}

TEST_CASE(
    "scheduler: without chunked prefill a prompt longer than the budget left waits for a step of "
    "its own") {
  auto config = config_with(8);
  config.chunked_prefill = false;
  Harness h(config);
  Sequence* a = h.add(3, 4);
  h.step();
  Sequence* b = h.add(6, 3);  // fits the 7 tokens left after a's decode: joins the step
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 1, 3, true}, {b->id, 6, 0, true}});
  Sequence* c = h.add(12);  // more than what is left: not split to share a step
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 1, 4, true}, {b->id, 1, 6, true}});
  // a and b end; c was admitted (it holds its blocks) but has not run.
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 1, 5, true}, {b->id, 1, 7, true}});
  REQUIRE(h.scheduler.num_running() == 1);
  // Alone, a prompt over the whole budget is split at it (a step never exceeds the budget).
  CHECK(h.step().chunks == std::vector<Ran>{{c->id, 8, 0, false}});
  CHECK(h.step().chunks == std::vector<Ran>{{c->id, 4, 8, true}});
}

TEST_CASE("scheduler: max_num_seqs bounds the running batch and the rest wait in arrival order") {
  Harness h(config_with(64, 2));
  Sequence* a = h.add(4, 2);
  Sequence* b = h.add(4, 2);
  Sequence* c = h.add(4, 2);
  auto first = h.step();
  CHECK(first.chunks == std::vector<Ran>{{a->id, 4, 0, true}, {b->id, 4, 0, true}});
  CHECK(h.scheduler.num_waiting() == 1);
  auto second = h.step();  // a and b make their second token and finish
  CHECK(second.chunks == std::vector<Ran>{{a->id, 1, 4, true}, {b->id, 1, 4, true}});
  CHECK(h.scheduler.num_running() == 0);
  auto third = h.step();
  CHECK(third.chunks == std::vector<Ran>{{c->id, 4, 0, true}});
}

TEST_CASE("scheduler: a finished sequence frees its blocks in the same step") {
  Harness h(config_with(64), 8, 4);
  Sequence* a = h.add(7, 1);  // 2 blocks; one token and done
  auto step = h.step();
  CHECK(step.chunks == std::vector<Ran>{{a->id, 7, 0, true}});
  CHECK(h.scheduler.num_running() == 0);
  CHECK(h.blocks.usage() == 0.0);
  CHECK(h.blocks.free_blocks() == 8);
}

TEST_CASE(
    "scheduler: a cancelled sequence ends whether waiting or running, and its blocks are freed") {
  boost::asio::io_context io;
  Harness h(config_with(64, 1), 16, 4);
  auto with_stream = [&](std::int32_t len) {
    GenerationRequest r;
    r.prompt = prompt_of(len);
    r.max_tokens = 100;
    auto seq = make_sequence(std::move(r), std::make_shared<GenerationStream>(io.get_executor()));
    Sequence* raw = seq.get();
    h.scheduler.add(std::move(seq));
    return raw;
  };
  Sequence* running = with_stream(9);
  Sequence* waiting = with_stream(5);
  h.step();
  REQUIRE(running->allocated);
  REQUIRE_FALSE(waiting->allocated);
  const auto running_id = running->id, waiting_id = waiting->id;
  running->stream->cancel();
  waiting->stream->cancel();
  auto step = h.step();
  CHECK(step.chunks.empty());
  CHECK(step.ended ==
        std::vector<std::pair<std::uint64_t, FinishReason>>{{waiting_id, FinishReason::cancelled},
                                                            {running_id, FinishReason::cancelled}});
  CHECK(step.left_waiting == 1);  // the waiting one left the queue
  CHECK(h.scheduler.num_running() == 0);
  CHECK(h.scheduler.num_waiting() == 0);
  CHECK(h.blocks.usage() == 0.0);
}

TEST_CASE("scheduler: a sequence past its deadline ends with timeout") {
  Harness h(config_with(64));
  Sequence* s = h.add(4);
  const auto now = Clock::now();
  s->request.deadline = now + std::chrono::seconds(1);
  h.step(now);
  auto later = h.step(now + std::chrono::seconds(2));
  REQUIRE(later.ended.size() == 1);
  CHECK(later.ended[0].second == FinishReason::timeout);
  CHECK(later.chunks.empty());
  CHECK(h.blocks.usage() == 0.0);
}

TEST_CASE(
    "scheduler: out of blocks the latest admitted sequence is preempted and resumes with its "
    "tokens") {
  // 6 blocks of 4 tokens. a and b: 8-token prompts (2 blocks each); c: 4 tokens (1 block + 1).
  Harness h(config_with(64), 6, 4, /*prefix_caching=*/false);
  Sequence* a = h.add(8, 9);
  Sequence* b = h.add(8, 9, 0, 100);
  Sequence* c = h.add(4, 9, 0, 200);
  auto first = h.step();
  CHECK(first.chunks.size() == 3);  // 2 + 2 + 1 blocks
  // Step 2: a and b need a third block each, c a second: 8 blocks, 6 exist. a gets one (1 free
  // left), b gets it, c (the latest admitted) must be preempted for itself.
  auto second = h.step();
  CHECK(second.preemptions == 1);
  CHECK(second.chunks == std::vector<Ran>{{a->id, 1, 8, true}, {b->id, 1, 8, true}});
  CHECK(c->computed == 0);
  CHECK_FALSE(c->allocated);
  CHECK(c->generated() == 1);  // the token it made before is kept and recomputed
  CHECK(h.scheduler.num_waiting() == 1);
  // a and b run until they finish (9 tokens each); then c is prefilled again: its prompt and
  // the token it had generated, in one chunk, with logits for its next token.
  Step step;
  int steps = 0;
  do {
    step = h.step();
    REQUIRE(++steps < 100);
  } while (!std::any_of(step.chunks.begin(), step.chunks.end(),
                        [&](const Ran& r) { return r.id == c->id; }));
  CHECK(step.chunks.back() == Ran{c->id, 5, 0, true});
  CHECK(c->generated() == 2);
}

TEST_CASE(
    "scheduler: with priorities, lower values are admitted first, in arrival order within one") {
  auto config = config_with(64, 1);
  config.priority_scheduling = true;
  Harness h(config);
  Sequence* low = h.add(4, 1, 5);
  Sequence* high1 = h.add(4, 1, -1);
  Sequence* mid = h.add(4, 1, 2);
  Sequence* high2 = h.add(4, 1, -1);
  std::vector<std::uint64_t> order;
  for (int i = 0; i < 4; ++i) {
    auto step = h.step();
    REQUIRE(step.chunks.size() == 1);
    order.push_back(step.chunks[0].id);
  }
  CHECK(order == std::vector<std::uint64_t>{high1->id, high2->id, mid->id, low->id});
}

TEST_CASE("scheduler: with priorities, the lowest-priority running sequence is preempted first") {
  auto config = config_with(64);
  config.priority_scheduling = true;
  Harness h(config, 6, 4, false);
  Sequence* low = h.add(8, 9, 3);
  Sequence* high = h.add(8, 9, 0, 100);
  Sequence* mid = h.add(4, 9, 1, 200);
  auto first = h.step();  // admitted by priority: high, mid, low
  CHECK(first.chunks ==
        std::vector<Ran>{{high->id, 8, 0, true}, {mid->id, 4, 0, true}, {low->id, 8, 0, true}});
  auto second = h.step();
  // Blocks for high's and low's third block and mid's second do not all fit: low goes,
  // although it is not the latest admitted.
  CHECK(second.preemptions == 1);
  CHECK_FALSE(low->allocated);
  CHECK(second.chunks == std::vector<Ran>{{high->id, 1, 8, true}, {mid->id, 1, 4, true}});
}

TEST_CASE(
    "scheduler: validate refuses an empty prompt, one over max_model_len and one over the KV "
    "cache") {
  auto config = config_with(64);
  config.max_model_len = 32;
  Harness h(config, 4, 4);  // 16 tokens of KV
  GenerationRequest r;
  CHECK(h.scheduler.validate(r).message() == "prompt: is empty");
  r.prompt = prompt_of(32);
  CHECK(h.scheduler.validate(r).message() ==
        "prompt: 32 tokens leave no room for output within max_model_len 32");
  r.prompt = prompt_of(16);
  CHECK(h.scheduler.validate(r).message() ==
        "prompt: 16 tokens do not fit the KV cache (16 tokens)");
  r.prompt = prompt_of(15);
  CHECK(h.scheduler.validate(r).ok());
  r.min_tokens = 20;
  CHECK(h.scheduler.validate(r).code() == Errc::invalid_argument);
}

TEST_CASE("scheduler: a generation that outgrows the whole KV cache ends with an error") {
  Harness h(config_with(64), 2, 4);  // 8 tokens of KV
  Sequence* s = h.add(6, 20);
  h.step();              // the prompt's 6 tokens; the 7th token is made
  h.step();              // the 7th token is fed; the 8th made
  h.step();              // the 8th fed (the two blocks are full); the 9th made
  auto step = h.step();  // feeding the 9th needs a third block: preempted, cannot come back
  CHECK(step.preemptions == 1);
  REQUIRE(step.ended.size() == 1);
  CHECK(step.ended[0] == std::pair{s->id, FinishReason::error});
  CHECK(h.blocks.usage() == 0.0);
}

TEST_CASE("scheduler: a prompt whose prefix is cached starts its prefill after the cached blocks") {
  Harness h(config_with(64));
  h.add(10, 1, 0, 1);
  h.step();                          // the first 2 full blocks (8 tokens) are cached, a finishes
  Sequence* b = h.add(11, 1, 0, 1);  // same first 10 tokens
  auto step = h.step();
  CHECK(step.prefix_hits == 8);
  CHECK(step.chunks == std::vector<Ran>{{b->id, 3, 8, true}});
  CHECK(b->cached_tokens == 8);
}

TEST_CASE("scheduler: the n choices of one prompt prefill it once and share its full blocks") {
  Harness h(config_with(8));
  const auto group = std::make_shared<int>(0);
  Sequence* a = h.add(18, 4, 0, 1, group);
  Sequence* b = h.add(18, 4, 0, 1, group);
  Sequence* c = h.add(18, 4, 0, 1, group);
  // a prefills in chunks of the step's budget; b and c wait for it.
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 8, 0, false}});
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 8, 8, false}});
  // Once its 4 full blocks (16 tokens) are computed the others find them in the prefix cache
  // and compute only the last 2 tokens, in the step where a computes them too.
  const auto step = h.step();
  CHECK(step.prefix_hits == 32);
  CHECK(step.chunks ==
        std::vector<Ran>{{a->id, 2, 16, true}, {b->id, 2, 16, true}, {c->id, 2, 16, true}});
  CHECK(b->cached_tokens == 16);
  CHECK(c->cached_tokens == 16);
  // Without a group the same prompts are admitted together, each prefilling all of it.
  Harness free(config_with(64));
  Sequence* x = free.add(18, 4, 0, 1);
  Sequence* y = free.add(18, 4, 0, 1);
  CHECK(free.step().chunks == std::vector<Ran>{{x->id, 18, 0, true}, {y->id, 18, 0, true}});
}

TEST_CASE("scheduler: static batching admits new sequences only when none is running") {
  auto config = config_with(64);
  config.static_batching = true;
  Harness h(config);
  Sequence* a = h.add(4, 3);
  h.step();
  Sequence* b = h.add(4, 1);
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 1, 4, true}});
  CHECK(h.step().chunks == std::vector<Ran>{{a->id, 1, 5, true}});  // a finishes
  CHECK(h.step().chunks == std::vector<Ran>{{b->id, 4, 0, true}});
}

TEST_CASE("scheduler: drain hands back every sequence with its blocks freed") {
  Harness h(config_with(64, 1));
  h.add(5);
  h.add(5);
  h.step();
  auto all = h.scheduler.drain();
  CHECK(all.size() == 2);
  CHECK(h.blocks.usage() == 0.0);
  CHECK(h.scheduler.num_running() + h.scheduler.num_waiting() == 0);
  CHECK(std::none_of(all.begin(), all.end(), [](const auto& s) { return s->allocated; }));
}

TEST_CASE("scheduler: a prompt-lookup draft follows the latest earlier occurrence of the longest suffix") {
  SpeculativeConfig spec;
  spec.lookup_min = 2;
  spec.lookup_max = 3;
  std::vector<std::int32_t> draft;
  // The suffix 7 8 9 occurs at 0 and at 5: the later one's continuation (4 4) wins.
  propose_lookup_draft(std::vector<std::int32_t>{7, 8, 9, 1, 2, 7, 8, 9, 4, 4, 7, 8, 9}, spec, 5,
                       draft);
  CHECK(draft == std::vector<std::int32_t>{4, 4, 7, 8, 9});
  // Only its last two tokens recur (8 9): the 2-gram's continuation, cut at `count`.
  propose_lookup_draft(std::vector<std::int32_t>{8, 9, 1, 2, 3, 6, 8, 9}, spec, 2, draft);
  CHECK(draft == std::vector<std::int32_t>{1, 2});
  // A continuation that runs into the end of the text goes on with the period it found.
  propose_lookup_draft(std::vector<std::int32_t>{5, 5, 5}, spec, 4, draft);
  CHECK(draft == std::vector<std::int32_t>{5, 5, 5, 5});
  propose_lookup_draft(std::vector<std::int32_t>{1, 6, 2, 3, 6, 2, 3}, spec, 5, draft);
  CHECK(draft == std::vector<std::int32_t>{6, 2, 3, 6, 2});
  // Nothing recurs, or only a 1-gram (below lookup_min), or no room: no draft.
  propose_lookup_draft(std::vector<std::int32_t>{1, 2, 3, 4}, spec, 4, draft);
  CHECK(draft.empty());
  propose_lookup_draft(std::vector<std::int32_t>{4, 1, 2, 4}, spec, 4, draft);
  CHECK(draft.empty());
  propose_lookup_draft(std::vector<std::int32_t>{7, 8, 9, 7, 8, 9}, spec, 0, draft);
  CHECK(draft.empty());
  spec.lookup_min = 1;
  propose_lookup_draft(std::vector<std::int32_t>{4, 1, 2, 4}, spec, 4, draft);
  CHECK(draft == std::vector<std::int32_t>{1, 2, 4, 1});
}

namespace {
// Queues a sequence whose prompt 1 2 3 1 2 repeats itself (its suffix "1 2" occurred at 0).
Sequence* add_repeating(Harness& h, std::int32_t max_tokens = 10) {
  GenerationRequest r;
  r.prompt = {1, 2, 3, 1, 2};
  r.max_tokens = max_tokens;
  auto seq = make_sequence(std::move(r), nullptr);
  Sequence* s = seq.get();
  h.scheduler.add(std::move(seq));
  return s;
}

// Steps until every queued prompt is prefilled, each then "sampling" 3 (1 2 3 1 2 3): the next
// step decodes them, with a draft to propose.
void prefill_and_sample(Harness& h) {
  for (int pending = static_cast<int>(h.scheduler.num_waiting()); pending > 0;) {
    StepPlan plan = h.scheduler.schedule(Clock::now());
    REQUIRE_FALSE(plan.empty());
    h.scheduler.complete(plan);
    for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
      if (plan.chunks[i].logit_rows == 0) continue;
      plan.sequences[i]->tokens.push_back(3);
      --pending;
    }
  }
}
}  // namespace

TEST_CASE("scheduler: a decode with a draft feeds its last token and the draft, and keeps what is accepted") {
  auto config = config_with(64);
  config.speculative.num_tokens = 3;
  Harness h(config, 64, 4);
  Sequence* s = add_repeating(h);
  prefill_and_sample(h);
  StepPlan plan = h.scheduler.schedule(Clock::now());
  REQUIRE(plan.chunks.size() == 1);
  CHECK(s->draft == std::vector<std::int32_t>{1, 2, 3});
  const auto& c = plan.chunks[0];
  CHECK(std::vector<std::int32_t>(c.tokens.begin(), c.tokens.end()) ==
        std::vector<std::int32_t>{3, 1, 2, 3});
  CHECK(c.position == 5);
  CHECK(c.logit_rows == 4);
  CHECK(static_cast<std::int32_t>(c.block_table.size()) * 4 >= 9);
  h.scheduler.complete(plan);
  CHECK(s->computed == 6);  // the last token's KV; the draft's waits for the verdict
  // Sampling confirmed 1, then chose 7 instead of 2.
  s->tokens.push_back(1);
  s->tokens.push_back(7);
  h.scheduler.accept_draft(*s, 1);
  CHECK(s->computed == 7);
  CHECK(s->draft.empty());
  plan = h.scheduler.schedule(Clock::now());
  REQUIRE(plan.chunks.size() == 1);
  CHECK(plan.chunks[0].position == 7);
  CHECK(plan.chunks[0].tokens[0] == 7);
  CHECK(s->draft.empty());  // 7 never occurred before
  CHECK(h.blocks.audit().empty());
}

TEST_CASE("scheduler: drafts take only free blocks, and stop beyond speculative.max_running decodes") {
  auto config = config_with(64);
  config.speculative.num_tokens = 4;
  config.speculative.max_running = 1;
  Harness h(config, 64, 4);
  add_repeating(h);
  add_repeating(h);
  prefill_and_sample(h);
  StepPlan plan = h.scheduler.schedule(Clock::now());
  REQUIRE(plan.chunks.size() == 2);
  for (const auto& c : plan.chunks) CHECK(c.logit_rows == 1);  // two decode: none drafts
  h.scheduler.complete(plan);

  // One block left after a sequence of 5 tokens (2 blocks of 4): its draft of 4 would need a
  // third, so it decodes without one rather than preempt anybody.
  auto tight = config_with(64);
  tight.speculative.num_tokens = 4;
  Harness t(tight, 2, 4);
  Sequence* s = add_repeating(t);
  prefill_and_sample(t);
  plan = t.scheduler.schedule(Clock::now());
  REQUIRE(plan.chunks.size() == 1);
  CHECK(plan.chunks[0].logit_rows == 1);
  CHECK(plan.preemptions == 0);
  CHECK(s->draft.empty());
}

TEST_CASE("scheduler: a draft stays within max_tokens, max_model_len and the step's budget") {
  // Unbounded, 1 2 3 1 2 3 drafts 1 2 3 1 (4 tokens, the period continued).
  auto config = config_with(64);
  {
    Harness h(config);
    Sequence* s = add_repeating(h);
    prefill_and_sample(h);
    h.scheduler.schedule(Clock::now());
    CHECK(s->draft == std::vector<std::int32_t>{1, 2, 3, 1});
  }
  // max_tokens 3 with 1 generated: a confirmed draft of d adds d + 1 tokens, so d <= 1.
  {
    Harness h(config);
    Sequence* s = add_repeating(h, 3);
    prefill_and_sample(h);
    CHECK(h.scheduler.schedule(Clock::now()).chunks[0].logit_rows == 2);
    CHECK(s->draft == std::vector<std::int32_t>{1});
  }
  // max_model_len 8 with 6 tokens: positions up to 7 at most, so d <= 1.
  {
    auto short_model = config;
    short_model.max_model_len = 8;
    Harness h(short_model);
    Sequence* s = add_repeating(h);
    prefill_and_sample(h);
    h.scheduler.schedule(Clock::now());
    CHECK(s->draft.size() == 1u);
  }
  // A step budget of 3 tokens: the last token and 2 of the draft.
  {
    Harness h(config_with(3));
    Sequence* s = add_repeating(h);
    prefill_and_sample(h);  // the prompt in two chunks, 3 and 2
    const StepPlan plan = h.scheduler.schedule(Clock::now());
    REQUIRE(plan.chunks.size() == 1);
    CHECK(plan.chunks[0].tokens.size() == 3u);
    CHECK(s->draft == std::vector<std::int32_t>{1, 2});
  }
}
