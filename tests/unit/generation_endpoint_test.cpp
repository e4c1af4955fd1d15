#include "coinfer/serving/generation_endpoint.hpp"

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "coinfer/generation/engine.hpp"
#include "toy_generation.hpp"

using namespace coinfer;
using namespace coinfer::generation;
using namespace coinfer::test;
namespace asio = boost::asio;

namespace {

std::unique_ptr<GenerationEndpoint> toy_endpoint(std::int32_t context = 256,
                                                 CacheMode cache = CacheMode::off) {
  auto tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(toy_tokenizer());
  auto engine = std::make_unique<Engine>(
      std::make_unique<FakeRunner>(toy_vocab_size, 128, 4, toy_script, 32, context), tokenizer,
      EngineConfig{});
  return std::make_unique<GenerationEndpoint>("toy", "1", std::move(engine), cache);
}

struct Outcome {
  Status status;
  std::string text;
  GenerationUpdate last;
  CacheOutcome cache;
};

// prepare, lookup, submit and every update, as a protocol does.
asio::awaitable<void> generate(GenerationEndpoint& endpoint, GenerationCall& call, Outcome& out) {
  out.status = endpoint.prepare(call);
  const auto executor = co_await asio::this_coro::executor;
  GenerationRun run;
  if (out.status.ok() && endpoint.caches(call)) co_await endpoint.lookup(call, run);
  if (out.status.ok()) out.status = endpoint.submit(call, run, executor);
  if (!out.status.ok()) co_return;
  GenerationUpdate update;
  while (co_await run.next(update)) {
    out.text += update.text;
    if (update.finish != FinishReason::none) out.last = update;
  }
  out.cache = run.outcome();
}

// One I/O context for every call, living to the end of the program: the engine's thread may
// drop its reference to a finished generation's stream (whose timer is bound to this
// context) after the requester has seen the final update, so the context must outlive the
// engines, as the server's outlive its generators.
Outcome run(GenerationEndpoint& endpoint, GenerationCall call) {
  static asio::io_context io;
  Outcome out;
  io.restart();
  asio::co_spawn(io, generate(endpoint, call, out), asio::detached);
  io.run();
  return out;
}

}  // namespace

TEST_CASE("generation endpoint: a prompt is generated and streamed to its end") {
  auto endpoint = toy_endpoint();
  GenerationCall call;
  call.token_ids = {hello, world};
  call.request.sampling.temperature = 0;
  call.request.max_tokens = 3;
  call.max_tokens_given = true;
  const auto out = run(*endpoint, call);
  REQUIRE_MESSAGE(out.status.ok(), out.status.message());
  CHECK(out.last.finish == FinishReason::length);
  CHECK(out.last.prompt_tokens == 2);
  CHECK(out.last.completion_tokens == 3);
  std::string expected;
  for (auto id : FakeRunner::expected({hello, world}, 3, toy_script)) {
    REQUIRE(endpoint->tokenizer().token_bytes(id, expected).ok());
  }
  CHECK(out.text == expected);
}

TEST_CASE(
    "generation endpoint: a text prompt is tokenized, and chat messages rendered with the template "
    "first") {
  auto endpoint = toy_endpoint(64);
  GenerationCall text;
  text.text = "Hi there";
  text.request.sampling.temperature = 0;
  const auto from_text = run(*endpoint, text);
  REQUIRE_MESSAGE(from_text.status.ok(), from_text.status.message());
  CHECK(from_text.last.prompt_tokens == 8);       // one token per character here
  CHECK(from_text.last.completion_tokens == 16);  // the completions default

  GenerationCall chat;
  chat.chat = true;
  chat.messages = {{"user", "Hi"}};
  chat.request.sampling.temperature = 0;
  chat.default_max_tokens_fill_context = true;
  const auto from_chat = run(*endpoint, chat);
  REQUIRE_MESSAGE(from_chat.status.ok(), from_chat.status.message());
  std::vector<std::int32_t> prompt;
  REQUIRE(endpoint->tokenizer()
              .encode(render_chatml(chat.messages, true, ""), prompt, Tokenizer::no_truncation)
              .ok());
  CHECK(prompt.front() == im_start);
  CHECK(from_chat.last.prompt_tokens == static_cast<std::int32_t>(prompt.size()));
  // No max_tokens: what the context (64) leaves.
  const auto left = 64 - static_cast<std::int32_t>(prompt.size());
  CHECK(from_chat.last.completion_tokens == left);
  std::string expected;
  for (auto id : FakeRunner::expected(prompt, static_cast<std::size_t>(left), toy_script)) {
    REQUIRE(endpoint->tokenizer().token_bytes(id, expected).ok());
  }
  CHECK(from_chat.text == expected);
}

TEST_CASE("generation endpoint: prepare names what is wrong with a call") {
  auto endpoint = toy_endpoint(256);
  auto error = [&](auto change) {
    GenerationCall call;
    call.token_ids = {hello, world};
    change(call);
    return endpoint->prepare(call).message();
  };
  CHECK(error([](GenerationCall& c) { c.token_ids.clear(); }) == "prompt: empty");
  CHECK(error([](GenerationCall& c) {
          c.token_ids = {hello, 999};
        }) == "prompt: token id 999 is outside the vocabulary");
  CHECK(error([](GenerationCall& c) {
          c.request.max_tokens = 300;
          c.max_tokens_given = true;
        }) == "max_tokens: 2 prompt tokens + 300 exceed the model's context of 256 tokens");
  CHECK(error([](GenerationCall& c) {
          c.request.max_tokens = 4;
          c.request.min_tokens = 5;
          c.max_tokens_given = true;
        }) == "min_tokens: must not exceed max_tokens");
  CHECK(error([](GenerationCall& c) { c.request.sampling.top_p = 0; }) ==
        "top_p: must be in (0, 1], got 0");
  CHECK(error([](GenerationCall& c) {
          c.request.sampling.logit_bias = {{999, 1.0f}};
        }) == "logit_bias: token id 999 is outside the vocabulary");
  CHECK(error([](GenerationCall& c) {
          c.token_ids.assign(256, hello);
          c.default_max_tokens_fill_context = true;
        }) == "prompt: its 256 tokens leave no room in the model's context of 256 tokens");
  GenerationCall timed;
  timed.token_ids = {hello};
  timed.timeout_s = 5;
  REQUIRE(endpoint->prepare(timed).ok());
  CHECK(timed.request.deadline < Clock::now() + std::chrono::seconds(6));
  CHECK(timed.request.deadline > Clock::now() + std::chrono::seconds(4));
}

TEST_CASE(
    "generation endpoint: the cache answers a repeated call with the same text, no-store and "
    "uncacheable calls pass it by") {
  CacheStage stage(CacheConfig{}, nullptr);  // exact lookups only
  auto endpoint = toy_endpoint(256, CacheMode::exact);
  endpoint->set_cache(&stage);
  auto call = [](std::string text, std::int32_t max_tokens = 5) {
    GenerationCall c;
    c.text = std::move(text);
    c.request.sampling.temperature = 0;
    c.request.max_tokens = max_tokens;
    c.max_tokens_given = true;
    return c;
  };
  const auto first = run(*endpoint, call("Hi there"));
  REQUIRE(first.status.ok());
  CHECK(first.cache.looked);
  CHECK_FALSE(first.cache.hit);
  CHECK(first.cache.entry != 0);                          // stored
  const auto again = run(*endpoint, call("Hi  there "));  // the same text, normalized
  CHECK(again.cache.hit);
  CHECK_FALSE(again.cache.semantic);
  CHECK(again.text == first.text);
  CHECK(again.last.finish == FinishReason::length);
  CHECK(again.last.completion_tokens == 5);
  CHECK(again.last.prompt_tokens == 10);  // this call's own prompt ("Hi  there ")
  CHECK_FALSE(run(*endpoint, call("Hi there", 6)).cache.hit);  // other parameters

  auto no_store = call("Something else");
  no_store.directives.lookup = no_store.directives.store = false;
  const auto unstored = run(*endpoint, no_store);
  CHECK_FALSE(unstored.cache.hit);
  CHECK(unstored.cache.entry == 0);
  CHECK_FALSE(run(*endpoint, call("Something else")).cache.hit);

  auto bypass = call("Hi there");
  bypass.cacheable = false;
  CHECK_FALSE(run(*endpoint, bypass).cache.looked);
}

TEST_CASE("generation endpoint: the logit bias reaches the engine's sampler") {
  auto endpoint = toy_endpoint();
  GenerationCall call;
  call.token_ids = {hello, world};
  call.request.sampling.temperature = 0;
  call.request.sampling.logit_bias = {{op, 100.0f}};
  call.request.max_tokens = 4;
  call.max_tokens_given = true;
  const auto out = run(*endpoint, call);
  REQUIRE_MESSAGE(out.status.ok(), out.status.message());
  CHECK(out.text == "OPOPOPOP");
}
