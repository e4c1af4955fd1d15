#include "coinfer/generation/output_processor.hpp"

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

SampleResult sample(std::int32_t token) {
  return SampleResult{token, -0.5f, {}};
}

struct Outputs {
  explicit Outputs(std::int32_t max_model_len = 64)
      : tokenizer(toy_tokenizer()), processor(*tokenizer, max_model_len, metrics) {}

  std::unique_ptr<Sequence> sequence(GenerationRequest r) {
    if (r.prompt.empty()) r.prompt = {hello};
    return make_sequence(std::move(r), std::make_shared<GenerationStream>(io.get_executor()));
  }

  // Appends each token as the engine does (append, then flush), until the sequence finishes.
  void feed(Sequence& s, std::initializer_list<std::int32_t> tokens) {
    for (auto t : tokens) {
      REQUIRE_FALSE(s.finished());
      processor.append(s, sample(t));
      processor.flush(s);
    }
  }

  // Everything pushed to the stream so far, as one update (the stream merges unread ones).
  GenerationUpdate take(Sequence& s) {
    GenerationUpdate u;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { co_await s.stream->next(u); }, asio::detached);
    io.run();
    io.restart();
    return u;
  }

  asio::io_context io;
  GenerationMetrics metrics;
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  OutputProcessor processor;
};

}  // namespace

TEST_CASE("output processor: a character split across two tokens is sent only once whole") {
  Outputs o;
  auto s = o.sequence({});
  o.processor.append(*s, sample(hello));
  o.processor.append(*s, sample(e_acute_lead));
  CHECK(s->update.text == "Hello");  // C3 alone is half of é: held back
  o.processor.append(*s, sample(e_acute_tail));
  CHECK(s->update.text == "Hello\xC3\xA9");
  CHECK(s->update.tokens.size() == 3);
}

TEST_CASE(
    "output processor: a stop string across tokens ends the text before it, and nothing after is "
    "sent") {
  Outputs o;
  GenerationRequest r;
  r.stop = {" STOP"};
  auto s = o.sequence(r);
  o.feed(*s, {hello, world, space_st});
  CHECK_FALSE(s->finished());
  // " ST" could begin " STOP": it and what could complete it are held back.
  auto sent = o.take(*s);
  CHECK(sent.text.find("ST") == std::string::npos);
  o.feed(*s, {op});
  CHECK(s->finish == FinishReason::stop);
  auto last = o.take(*s);
  CHECK(sent.text + last.text == "Hello world");
  CHECK(last.finish == FinishReason::stop);
  CHECK(last.completion_tokens == 4);
}

TEST_CASE("output processor: a stop string inside one token cuts that token's text") {
  Outputs o;
  GenerationRequest r;
  r.stop = {"wor", "zzz"};
  auto s = o.sequence(r);
  o.feed(*s, {hello, world});
  auto u = o.take(*s);
  CHECK(u.text == "Hello ");
  CHECK(u.finish == FinishReason::stop);
}

TEST_CASE(
    "output processor: text held back for a possible stop string is sent when the length limit "
    "ends it") {
  Outputs o;
  GenerationRequest r;
  r.stop = {"!!"};
  r.max_tokens = 2;
  auto s = o.sequence(r);
  o.feed(*s, {hello});
  o.processor.append(*s, sample(bang));
  o.processor.flush(*s);
  auto u = o.take(*s);
  CHECK(u.text == "Hello!");
  CHECK(u.finish == FinishReason::length);
}

TEST_CASE(
    "output processor: the end-of-sequence tokens end with stop, after min_tokens, unless "
    "ignore_eos") {
  SUBCASE("eos") {
    Outputs o;
    auto s = o.sequence({});
    o.feed(*s, {hello, im_end});
    auto u = o.take(*s);
    CHECK(u.finish == FinishReason::stop);
    CHECK(u.text == "Hello");
    CHECK(u.tokens.size() == 1);  // the end token is not an output token
    CHECK(u.completion_tokens == 2);
  }
  SUBCASE("the vocabulary's other end marker") {
    Outputs o;
    auto s = o.sequence({});
    o.feed(*s, {endoftext});
    CHECK(s->finish == FinishReason::stop);
  }
  SUBCASE("not before min_tokens, and its text is skipped") {
    Outputs o;
    GenerationRequest r;
    r.min_tokens = 3;
    auto s = o.sequence(r);
    o.feed(*s, {hello, im_end});
    CHECK_FALSE(s->finished());
    o.feed(*s, {world, im_end});
    auto u = o.take(*s);
    CHECK(u.finish == FinishReason::stop);
    CHECK(u.text == "Hello world");
  }
  SUBCASE("ignore_eos") {
    Outputs o;
    GenerationRequest r;
    r.ignore_eos = true;
    r.max_tokens = 3;
    auto s = o.sequence(r);
    o.feed(*s, {im_end, hello, im_end});
    CHECK(s->finish == FinishReason::length);
  }
}

TEST_CASE(
    "output processor: a stop string sent before min_tokens does not stop the generation later") {
  Outputs o;
  GenerationRequest r;
  r.min_tokens = 3;
  r.stop = {"!"};
  auto s = o.sequence(r);
  o.feed(*s, {hello, bang, world});  // "!" before min_tokens: sent, not a stop
  CHECK_FALSE(s->finished());
  o.feed(*s, {bang});  // after min_tokens: a stop
  auto u = o.take(*s);
  CHECK(u.finish == FinishReason::stop);
  CHECK(u.text == "Hello! world");
}

TEST_CASE("output processor: stop_token_ids end with stop and the stop token's text is not sent") {
  Outputs o;
  GenerationRequest r;
  r.stop_token_ids = {bang};
  auto s = o.sequence(r);
  o.feed(*s, {hello, world, bang});
  auto u = o.take(*s);
  CHECK(u.finish == FinishReason::stop);
  CHECK(u.text == "Hello world");
}

TEST_CASE(
    "output processor: max_tokens and max_model_len end with length, usage and logprobs are "
    "reported") {
  SUBCASE("max_tokens") {
    Outputs o;
    GenerationRequest r;
    r.prompt = {hello, world};
    r.max_tokens = 2;
    auto s = o.sequence(r);
    s->cached_tokens = 1;
    o.feed(*s, {world, end_word});
    auto u = o.take(*s);
    CHECK(u.finish == FinishReason::length);
    CHECK(u.text == " world end");
    CHECK(u.prompt_tokens == 2);
    CHECK(u.completion_tokens == 2);
    CHECK(u.cached_tokens == 1);
    REQUIRE(u.tokens.size() == 2);
    CHECK(u.tokens[1].id == end_word);
    CHECK(u.tokens[1].logprob == -0.5f);
  }
  SUBCASE("max_model_len") {
    Outputs o(4);  // prompt + output
    auto s = o.sequence({});
    o.feed(*s, {world, world, world});
    CHECK(s->finish == FinishReason::length);
    CHECK(s->generated() == 3);
  }
}

TEST_CASE("output processor: control tokens are text only when skip_special_tokens is off") {
  Outputs o;
  GenerationRequest r;
  r.ignore_eos = true;
  r.skip_special_tokens = false;
  r.max_tokens = 2;
  auto s = o.sequence(r);
  o.feed(*s, {hello, im_end});
  CHECK(o.take(*s).text == "Hello<|im_end|>");
}

TEST_CASE(
    "output processor: finishing records success or failure, tokens and time to first token") {
  Outputs o;
  auto a = o.sequence({});
  o.feed(*a, {hello, world, im_end});
  auto b = o.sequence({});
  o.processor.finish(*b, FinishReason::timeout, Status(Errc::deadline_exceeded, "late"));
  o.processor.flush(*b);
  auto u = o.take(*b);
  CHECK(u.finish == FinishReason::timeout);
  CHECK(u.error.message() == "late");
  CHECK(o.metrics.request_success.value() == 1);
  CHECK(o.metrics.request_failure.value() == 1);
  CHECK(o.metrics.generation_tokens.value() == 3);
  CHECK(o.metrics.time_to_first_token_s.count() == 1);
  CHECK(o.metrics.time_per_output_token_s.count() == 2);
}
