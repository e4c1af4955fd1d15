// Triton's generate extension: text in, text out, over the generation engine; over HTTP
// (one JSON, or Server-Sent Events) and as /v2/ws messages (tokens streamed as messages).
#include "triton_generate.hpp"

#include <simdjson.h>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/serving/model_repository.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "cache_fields.hpp"
#include "cached_generation.hpp"
#include "generation_fields.hpp"

namespace coinfer {
namespace {

namespace asio = boost::asio;
namespace ondemand = simdjson::ondemand;
using generation::FinishReason;
using generation::GenerationStream;
using generation::GenerationUpdate;
using generation_fields::append_usage;
using generation_fields::finish_status;

struct GenerateRequest {
  std::string text_input;
  bool has_text_input = false;
  bool stream = false;
  generation_fields::Fields fields;
};

// A generation field, at the top level or in "parameters" (`prefix` "parameters."): Triton's
// clients put them in either place.
Status read_generate_field(std::string_view key, ondemand::value& value, std::string_view prefix,
                           GenerateRequest& out) {
  std::string where(prefix);
  where += key;
  if (key == "stream") return generation_fields::read_bool(value, where, out.stream);
  bool known = false;
  const Status s = generation_fields::read_field(key, value, out.fields, known);
  if (!known) return Status::invalid(where + ": not supported");
  if (!s.ok() && !prefix.empty()) return Status(s.code(), std::string(prefix) + s.message());
  return s;
}

// `message`: a /v2/ws message, whose routing fields ("id", "model_name", "model_version")
// the caller has read.
Status read_generate(std::string_view body, std::size_t capacity, bool message,
                     GenerateRequest& out) {
  thread_local ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  if (capacity < body.size() + simdjson::SIMDJSON_PADDING ||
      parser.iterate(body.data(), body.size(), capacity).get(doc) ||
      doc.get_object().get(object)) {
    return Status::invalid(R"(body must be a JSON object: {"text_input", "parameters"})");
  }
  for (auto field : object) {
    std::string_view key;
    ondemand::value value;
    if (field.unescaped_key().get(key)) return Status::invalid("invalid JSON key");
    if (field.value().get(value)) return Status::invalid(std::string(key) + ": invalid JSON");
    Status s;
    if (key == "text_input") {
      out.has_text_input = true;
      s = generation_fields::read_string(value, key, out.text_input);
    } else if (key == "parameters") {
      ondemand::object parameters;
      if (value.get_object().get(parameters)) return Status::invalid("parameters: expected an object");
      for (auto parameter : parameters) {
        std::string_view name;
        ondemand::value v;
        if (parameter.unescaped_key().get(name) || parameter.value().get(v)) {
          return Status::invalid("parameters: invalid JSON");
        }
        if (s = read_generate_field(name, v, "parameters.", out); !s.ok()) return s;
      }
    } else if (message && (key == "id" || key == "model_name" || key == "model_version")) {
      continue;
    } else {
      s = read_generate_field(key, value, "", out);
    }
    if (!s.ok()) return s;
  }
  if (!out.has_text_input) return Status::invalid("text_input: missing");
  return {};
}

// Tokenizes the text and checks the request against the model.
Status prepare(generation::Generator& engine, GenerateRequest& r) {
  auto& g = r.fields.generation;
  Status status = engine.tokenizer().encode(r.text_input, g.prompt, Tokenizer::no_truncation);
  if (status.ok() && g.prompt.empty()) status = Status::invalid("text_input: empty");
  // vLLM's default max_tokens (Triton's vLLM backend passes it on).
  if (status.ok()) status = generation_fields::prepare(engine, 16, r.fields);
  return status;
}

// prepare(), then queues the request.
Status start(generation::Generator& engine, GenerateRequest& r,
             const asio::any_io_executor& executor, std::shared_ptr<GenerationStream>& out) {
  Status status = prepare(engine, r);
  if (status.ok()) status = engine.submit(std::move(r.fields.generation), executor, out);
  return status;
}

// ,"finish_reason":...,"usage":{...}
void append_finish(std::string& out, const GenerationUpdate& last) {
  out += R"(,"finish_reason":)";
  json_append_string(out, last.finish == FinishReason::length ? "length" : "stop");
  out += ',';
  append_usage(out, last);
}

void fail(net::HttpResponse& res, const Status& status) {
  res.error(http_status(status.code()), status.message());
  if (status.code() == Errc::unavailable) res.headers.emplace_back("Retry-After", "1");
}

asio::awaitable<void> generate(const ModelRepository& repo, const net::HttpRequest& req,
                               net::HttpResponse& res, bool events) {
  const std::string model(req.param("model"));
  generation::Generator* engine = nullptr;
  GenerateRequest r;
  // The body first: a request is checked whole before the model is looked up.
  Status status = read_generate(req.body, req.body_capacity, false, r);
  if (status.ok()) status = repo.find_generator(model, req.tenant, engine);
  if (status.ok()) status = prepare(*engine, r);

  // The cache stage, as for OpenAI's completions (scope "generate": the text_input is the
  // text compared).
  cached_generation::CachedRun run(repo.cache(), status.ok() ? repo.cache_mode(model) : CacheMode::off);
  if (run.caching()) {
    status = cache_fields::read_directives(req, run.directives);
    if (status.ok()) {
      cached_generation::append_scope(run.scope, "generate", model,
                                      repo.language_model(model)->version, r.fields.generation);
      cached_generation::append_normalized(run.text, r.text_input);
      co_await run.lookup();
    }
  }
  const auto executor = co_await asio::this_coro::executor;
  if (status.ok()) status = run.start(*engine, std::move(r.fields.generation), executor);
  if (!status.ok()) {
    fail(res, status);
    co_return;
  }
  GenerationUpdate update;

  if (events && res.stream) {
    net::HttpResponse head = generation_fields::event_stream_head();
    cache_fields::annotate(head, run.outcome());
    if (!co_await res.stream->begin(head)) co_return;
    std::string event;
    while (co_await run.next(update)) {
      event.clear();
      if (Status s = finish_status(update); !s.ok()) {
        event += R"(data: {"error":)";
        json_append_string(event, s.message());
        event += "}\n\n";
        (void)co_await res.stream->write(event);
        co_return;
      }
      if (update.text.empty() && update.finish == FinishReason::none) continue;
      event += R"(data: {"model_name":)";
      json_append_string(event, model);
      event += R"(,"text_output":)";
      json_append_string(event, update.text);
      if (update.finish != FinishReason::none) append_finish(event, update);
      event += "}\n\n";
      if (!co_await res.stream->write(event)) co_return;
    }
    co_return;
  }

  std::string whole;
  GenerationUpdate last;
  while (co_await run.next(update)) {
    whole += update.text;
    if (update.finish != FinishReason::none) last = std::move(update);
  }
  if (Status s = finish_status(last); !s.ok()) {
    fail(res, s);
    co_return;
  }
  cache_fields::annotate(res, run.outcome());
  res.body += R"({"model_name":)";
  json_append_string(res.body, model);
  res.body += R"(,"text_output":)";
  json_append_string(res.body, whole);
  append_finish(res.body, last);
  res.body += '}';
}

void begin_message(std::string& out, std::string_view id, std::string_view model) {
  out += R"({"id":)";
  json_append_string(out, id);
  out += R"(,"model_name":)";
  json_append_string(out, model);
}

}  // namespace

asio::awaitable<void> generate_message(generation::Generator& engine, std::string_view model,
                                       std::string_view id, std::string_view message,
                                       std::size_t capacity, net::WebSocketStream* ws,
                                       std::string& reply) {
  GenerateRequest r;
  Status status = read_generate(message, capacity, true, r);
  std::shared_ptr<GenerationStream> stream;
  const auto executor = co_await asio::this_coro::executor;
  if (status.ok()) status = start(engine, r, executor, stream);
  if (status.ok()) {
    generation_fields::CancelOnExit cancel_on_exit{*stream};
    const bool streaming = r.stream && ws;
    GenerationUpdate update;
    GenerationUpdate last;
    std::string text;  // not streaming: all of it; streaming: the final update's
    while (co_await stream->next(update)) {
      if (update.finish != FinishReason::none) {
        text += update.text;
        last = std::move(update);
      } else if (!streaming) {
        text += update.text;
      } else if (!update.text.empty()) {
        std::string part;
        begin_message(part, id, model);
        part += R"(,"text_output":)";
        json_append_string(part, update.text);
        part += '}';
        if (!co_await ws->send(std::move(part))) {
          status = Status(Errc::unavailable, "the connection closed");
          break;
        }
      }
    }
    if (status.ok()) status = finish_status(last);
    if (status.ok()) {
      begin_message(reply, id, model);
      reply += R"(,"text_output":)";
      json_append_string(reply, text);
      append_finish(reply, last);
      reply += R"(,"final":true})";
      co_return;
    }
  }
  reply.clear();
  reply += R"({"id":)";
  json_append_string(reply, id);
  reply += R"(,"error":)";
  json_append_string(reply, status.message());
  reply += R"(,"status":)";
  json_append_number(reply, http_status(status.code()));
  reply += '}';
}

void add_generate_routes(net::Router& router, const ModelRepository& repository) {
  const ModelRepository* repo = &repository;
  router.add(net::Method::post, "/v2/models/{model}/generate",
             net::AsyncHandler([repo](const net::HttpRequest& req, net::HttpResponse& res) {
               return generate(*repo, req, res, false);
             }));
  router.add(net::Method::post, "/v2/models/{model}/generate_stream",
             net::AsyncHandler([repo](const net::HttpRequest& req, net::HttpResponse& res) {
               return generate(*repo, req, res, true);
             }));
}

}  // namespace coinfer
