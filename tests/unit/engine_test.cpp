#include "coinfer/generation/engine.hpp"

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toy_generation.hpp"

using namespace coinfer;
using namespace coinfer::generation;
using namespace coinfer::test;
namespace asio = boost::asio;

namespace {

struct Run {
  std::vector<std::int32_t> tokens;
  GenerationUpdate last;
};

// Reads every stream to its end on `io`.
std::vector<Run> run_all(asio::io_context& io,
                         const std::vector<std::shared_ptr<GenerationStream>>& streams) {
  std::vector<Run> out(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          GenerationUpdate u;
          while (co_await streams[i]->next(u)) {
            for (const auto& t : u.tokens) out[i].tokens.push_back(t.id);
            if (u.finish != FinishReason::none) out[i].last = u;
          }
        },
        asio::detached);
  }
  io.run();
  io.restart();
  return out;
}

GenerationRequest greedy(std::vector<std::int32_t> prompt, std::int32_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

}  // namespace

TEST_CASE(
    "engine: greedy tokens through a fake runner follow its KV, also when sequences are "
    "preempted") {
  asio::io_context io;  // outlives the engine, whose last updates are posted to it
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  // 12 blocks of 4 tokens: six sequences of 20 tokens need 30, so they preempt each other.
  auto runner = std::make_unique<FakeRunner>(toy_vocab_size, 12, 4, toy_script, 16);
  FakeRunner& fake = *runner;
  EngineConfig config;
  Engine engine(std::move(runner), tokenizer, config);
  std::vector<std::shared_ptr<GenerationStream>> streams(6);
  std::vector<std::vector<std::int32_t>> prompts;
  // The first step waits at the gate until all six are submitted: on a loaded machine the
  // engine could otherwise finish each request before the next arrives, and never preempt.
  fake.close_gate();
  for (int i = 0; i < 6; ++i) {
    std::vector<std::int32_t> prompt(8, hello);
    prompt[static_cast<std::size_t>(i)] = world;  // distinct prompts, a shared first block for some
    prompts.push_back(prompt);
    REQUIRE(
        engine.submit(greedy(prompt, 12), io.get_executor(), streams[static_cast<std::size_t>(i)])
            .ok());
    if (i == 0) fake.wait_entered(1);
  }
  fake.open_gate();
  const auto runs = run_all(io, streams);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CAPTURE(i);
    CHECK(runs[i].tokens == FakeRunner::expected(prompts[i], 12, toy_script));
    CHECK(runs[i].last.finish == FinishReason::length);
    CHECK(runs[i].last.completion_tokens == 12);
  }
  CHECK_FALSE(fake.kv_missing.load());
  CHECK(engine.metrics().num_preemptions.value() > 0);
  CHECK(engine.metrics().request_success.value() == 6);
  CHECK(engine.metrics().prompt_tokens.value() >= 6 * 8);
}

TEST_CASE(
    "engine: a full waiting queue refuses at once with unavailable, and frees places as it "
    "drains") {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  auto runner = std::make_unique<FakeRunner>(toy_vocab_size, 64, 4, toy_script);
  FakeRunner& fake = *runner;
  EngineConfig config;
  config.max_waiting = 2;
  config.scheduler.max_num_seqs = 1;
  Engine engine(std::move(runner), tokenizer, config);
  fake.close_gate();
  std::vector<std::shared_ptr<GenerationStream>> streams(3);
  REQUIRE(engine.submit(greedy({hello}, 2), io.get_executor(), streams[0]).ok());
  fake.wait_entered(1);  // the first is running, held in its first step
  REQUIRE(engine.submit(greedy({world}, 2), io.get_executor(), streams[1]).ok());
  REQUIRE(engine.submit(greedy({bang}, 2), io.get_executor(), streams[2]).ok());
  std::shared_ptr<GenerationStream> refused;
  const Status full = engine.submit(greedy({op}, 2), io.get_executor(), refused);
  CHECK(full.code() == Errc::unavailable);
  CHECK(full.message() == "the generation queue is full (2 waiting)");
  CHECK(refused == nullptr);
  fake.open_gate();
  const auto runs = run_all(io, streams);
  for (const auto& r : runs) CHECK(r.last.finish == FinishReason::length);
  // Every place is free again.
  std::vector<std::shared_ptr<GenerationStream>> again(2);
  CHECK(engine.submit(greedy({hello}, 1), io.get_executor(), again[0]).ok());
  CHECK(engine.submit(greedy({world}, 1), io.get_executor(), again[1]).ok());
  run_all(io, again);
}

TEST_CASE(
    "engine: on a runner that samples on its device the steps it can draw bring back tokens "
    "and those with logprobs or penalties bring back logits") {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  auto runner = std::make_unique<FakeRunner>(toy_vocab_size, 64, 4, toy_script);
  FakeRunner& fake = *runner;
  fake.device_sampling = true;
  EngineConfig config;
  config.scheduler.speculative.num_tokens = 0;
  Engine engine(std::move(runner), tokenizer, config);

  // Greedy and seeded sampling, drawn on the "device": the greedy tokens are the model's, and
  // a seed gives the same tokens twice.
  const std::vector<std::int32_t> prompt = {hello, world, bang};
  std::vector<std::shared_ptr<GenerationStream>> streams(3);
  REQUIRE(engine.submit(greedy(prompt, 10), io.get_executor(), streams[0]).ok());
  GenerationRequest sampled = greedy(prompt, 10);
  sampled.sampling.temperature = 4.0f;  // the one-hot 10 against 0s: others get drawn too
  sampled.sampling.seed = 7;
  GenerationRequest again = sampled;
  REQUIRE(engine.submit(std::move(sampled), io.get_executor(), streams[1]).ok());
  REQUIRE(engine.submit(std::move(again), io.get_executor(), streams[2]).ok());
  auto runs = run_all(io, streams);
  CHECK(runs[0].tokens == FakeRunner::expected(prompt, 10, toy_script));
  CHECK(runs[1].tokens.size() == 10);
  CHECK(runs[1].tokens == runs[2].tokens);
  CHECK(runs[1].tokens != runs[0].tokens);
  CHECK(fake.sampled_steps.load() == fake.steps.load());

  // A request that wants logprobs (or penalties) needs the logits: its steps, and the others'
  // in them, are sampled on the host, and give the same greedy tokens.
  const int before = fake.sampled_steps.load(), steps_before = fake.steps.load();
  std::vector<std::shared_ptr<GenerationStream>> mixed(2);
  GenerationRequest with_logprobs = greedy(prompt, 6);
  with_logprobs.sampling.logprobs = 2;
  GenerationRequest penalized = greedy({world, world}, 6);
  penalized.sampling.presence_penalty = 0.5f;
  REQUIRE(engine.submit(std::move(with_logprobs), io.get_executor(), mixed[0]).ok());
  REQUIRE(engine.submit(std::move(penalized), io.get_executor(), mixed[1]).ok());
  runs = run_all(io, mixed);
  CHECK(runs[0].tokens == FakeRunner::expected(prompt, 6, toy_script));
  CHECK(runs[1].tokens.size() == 6);
  CHECK(fake.sampled_steps.load() == before);
  CHECK(fake.steps.load() > steps_before);
}

TEST_CASE("engine: a request that cannot fit is refused with the scheduler's reason") {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  EngineConfig config;
  config.scheduler.max_model_len = 100000;  // capped by the runner's context (256)
  Engine engine(std::make_unique<FakeRunner>(toy_vocab_size, 128, 4, toy_script), tokenizer, config);
  CHECK(engine.max_model_len() == 256);
  std::shared_ptr<GenerationStream> s;
  const Status status =
      engine.submit(greedy(std::vector<std::int32_t>(256, hello), 4), io.get_executor(), s);
  CHECK(status.message() == "prompt: 256 tokens leave no room for output within max_model_len 256");
}

TEST_CASE("engine: a cancelled stream ends its sequence and frees its blocks") {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  auto runner = std::make_unique<FakeRunner>(toy_vocab_size, 64, 4, toy_script);
  FakeRunner& fake = *runner;
  Engine engine(std::move(runner), tokenizer, EngineConfig{});
  fake.close_gate();
  std::vector<std::shared_ptr<GenerationStream>> streams(1);
  REQUIRE(engine.submit(greedy({hello, world}, 1000), io.get_executor(), streams[0]).ok());
  fake.wait_entered(1);
  streams[0]->cancel();
  fake.open_gate();
  const auto runs = run_all(io, streams);
  CHECK(runs[0].last.finish == FinishReason::cancelled);
  CHECK(engine.metrics().request_failure.value() == 1);
  CHECK(engine.metrics().kv_cache_usage.load() == 0.0);
}

namespace {
struct SpeculationRun {
  std::vector<Run> runs;
  std::uint64_t drafts = 0, drafted = 0, accepted = 0;
  int steps = 0;
  bool kv_missing = false;
};

// Six requests with prompts that repeat themselves, run to the end with `speculative_tokens`
// drafted per step (0: off) on a KV cache of `kv_blocks` blocks of 4.
SpeculationRun run_speculating(std::int32_t speculative_tokens, float temperature,
                               std::int32_t kv_blocks, std::int32_t max_running = 8) {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  auto runner = std::make_unique<FakeRunner>(toy_vocab_size, kv_blocks, 4, toy_script, 64);
  FakeRunner& fake = *runner;
  EngineConfig config;
  config.scheduler.speculative.num_tokens = speculative_tokens;
  config.scheduler.speculative.max_running = max_running;
  SpeculationRun out;
  {
    Engine engine(std::move(runner), tokenizer, config);
    std::vector<std::shared_ptr<GenerationStream>> streams(6);
    fake.close_gate();
    for (int i = 0; i < 6; ++i) {
      std::vector<std::int32_t> prompt{hello, world, bang, op, hello, world, bang, space_st};
      prompt[static_cast<std::size_t>(i)] = end_word;
      auto request = greedy(prompt, 29 + i);
      request.sampling.temperature = temperature;
      request.ignore_eos = true;  // sampled, the end-of-sequence token comes up too
      request.sampling.seed = 100 + static_cast<std::uint64_t>(i);
      REQUIRE(engine.submit(std::move(request), io.get_executor(), streams[static_cast<std::size_t>(i)]).ok());
      if (i == 0) fake.wait_entered(1);
    }
    fake.open_gate();
    out.runs = run_all(io, streams);
    const auto& m = engine.metrics();
    out.drafts = m.spec_decode_num_drafts.value();
    out.drafted = m.spec_decode_num_draft_tokens.value();
    out.accepted = m.spec_decode_num_accepted_tokens.value();
    out.steps = fake.steps.load();
    out.kv_missing = fake.kv_missing.load();
  }
  return out;
}
}  // namespace

TEST_CASE("engine: prompt-lookup drafts change no token, greedy or sampled, and save steps") {
  for (const float temperature : {0.0f, 2.0f}) {
    CAPTURE(temperature);
    const auto plain = run_speculating(0, temperature, 128);
    const auto spec = run_speculating(4, temperature, 128);
    CHECK(plain.drafts == 0);
    CHECK(spec.drafts > 0);
    CHECK(spec.accepted > 0);
    CHECK_FALSE(spec.kv_missing);
    for (std::size_t i = 0; i < spec.runs.size(); ++i) {
      CAPTURE(i);
      CHECK(spec.runs[i].tokens == plain.runs[i].tokens);
      CHECK(spec.runs[i].last.finish == FinishReason::length);
      CHECK(spec.runs[i].last.completion_tokens == 29 + static_cast<std::int32_t>(i));
    }
    if (temperature == 0.0f) {
      // The toy model's greedy output is periodic: its drafts are right, and steps fewer.
      CHECK(spec.accepted * 2 > spec.drafted);
      CHECK(spec.steps * 2 < plain.steps);
    } else {
      CHECK(spec.accepted < spec.drafted);  // sampling rejects some
    }
  }
}

TEST_CASE("engine: drafts survive preemption and a KV cache too small for them") {
  // 14 blocks of 4 for six sequences of up to 42 tokens: they preempt each other, and drafts
  // must give way; the tokens are those of the run without drafts.
  const auto plain = run_speculating(0, 2.0f, 14);
  const auto spec = run_speculating(4, 2.0f, 14);
  CHECK_FALSE(spec.kv_missing);
  CHECK(spec.drafts > 0);
  for (std::size_t i = 0; i < spec.runs.size(); ++i) {
    CAPTURE(i);
    CHECK(spec.runs[i].tokens == plain.runs[i].tokens);
  }
}

TEST_CASE("engine: a request's num_speculative_tokens overrides the model's default") {
  asio::io_context io;
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  EngineConfig config;
  config.scheduler.speculative.num_tokens = 0;
  Engine engine(std::make_unique<FakeRunner>(toy_vocab_size, 64, 4, toy_script), tokenizer, config);
  std::vector<std::shared_ptr<GenerationStream>> streams(2);
  auto on = greedy({hello, world, bang, hello, world}, 24);
  on.num_speculative_tokens = 3;
  REQUIRE(engine.submit(std::move(on), io.get_executor(), streams[0]).ok());
  run_all(io, {streams[0]});
  const auto drafted = engine.metrics().spec_decode_num_draft_tokens.value();
  CHECK(drafted > 0);
  CHECK(engine.metrics().spec_decode_num_drafts.value() * 3 >= drafted);
  REQUIRE(engine.submit(greedy({hello, world, bang, hello, world}, 24), io.get_executor(), streams[1]).ok());
  run_all(io, {streams[1]});
  CHECK(engine.metrics().spec_decode_num_draft_tokens.value() == drafted);
}

TEST_CASE(
    "generation stream: the engine may push to it and drop it after the requester's io_context is gone") {
  // A requester's io_context may end while its reader waits in next() (an offline job's own
  // io_context, a server going down) and the engine thread still holds the stream: its later
  // pushes and its release must not touch that io_context (they did: ASan, use after scope).
  std::shared_ptr<GenerationStream> engine_side;
  int read = 0;
  {
    asio::io_context io;
    auto stream = std::make_shared<GenerationStream>(io.get_executor());
    engine_side = stream;
    asio::co_spawn(
        io,
        [&, stream]() -> asio::awaitable<void> {
          GenerationUpdate u;
          while (co_await stream->next(u)) read += static_cast<int>(u.tokens.size());
        },
        asio::detached);
    GenerationUpdate first;
    first.tokens.emplace_back().id = 7;
    engine_side->push(std::move(first));
    while (read == 0) io.run_one();
    io.poll();  // the reader waits for the next update
    REQUIRE(read == 1);
  }
  GenerationUpdate last;
  last.tokens.emplace_back().id = 8;
  last.finish = FinishReason::length;
  engine_side->push(std::move(last));
  engine_side.reset();
  CHECK(read == 1);
}
