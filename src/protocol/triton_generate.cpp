// Triton's generate extension: text in, text out, over the generation engine; over HTTP
// (one JSON, or Server-Sent Events) and as /v2/ws messages (tokens streamed as messages).
#include "triton_generate.hpp"

#include <simdjson.h>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>

#include "cache_fields.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/generation_endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"
#include "coinfer/tokenizers/bpe.hpp"
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
  GenerationCall call;  // text_input is its text
  bool has_text_input = false;
  bool stream = false;
  // /v2/ws only (HTTP has X-Cache-Namespace and Cache-Control): the response cache's namespace
  // and no-cache / no-store.
  std::string cache_namespace;
  std::string cache_control;
};

// A generation field, at the top level or in "parameters" (`prefix` "parameters."): Triton's
// clients put them in either place.
Status read_generate_field(std::string_view key, ondemand::value& value, std::string_view prefix,
                           GenerateRequest& out) {
  std::string where(prefix);
  where += key;
  if (key == "stream") return generation_fields::read_bool(value, where, out.stream);
  bool known = false;
  const Status s = generation_fields::read_field(key, value, out.call, known);
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
      s = generation_fields::read_string(value, key, out.call.text);
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
    } else if (message && key == "cache_namespace") {
      s = generation_fields::read_string(value, key, out.cache_namespace);
    } else if (message && key == "cache_control") {
      s = generation_fields::read_string(value, key, out.cache_control);
    } else {
      s = read_generate_field(key, value, "", out);
    }
    if (!s.ok()) return s;
  }
  if (!out.has_text_input) return Status::invalid("text_input: missing");
  return {};
}

// Tokenizes the text and checks the request against the model.
Status prepare(const GenerationEndpoint& endpoint, GenerateRequest& r) {
  if (r.call.text.empty()) return Status::invalid("text_input: empty");
  r.call.route = "generate";
  r.call.default_max_tokens = 16;  // vLLM's default (Triton's vLLM backend passes it on)
  return endpoint.prepare(r.call);
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
  GenerationEndpoint* endpoint = nullptr;
  GenerateRequest r;
  // The body first: a request is checked whole before the model is looked up.
  Status status = read_generate(req.body, req.body_capacity, false, r);
  if (status.ok()) status = repo.find_generation(model, req.tenant, endpoint);
  if (status.ok()) status = prepare(*endpoint, r);
  const bool caching = status.ok() && endpoint->caches(r.call);
  if (caching) status = cache_fields::read_directives(req, r.call.directives);
  const auto executor = co_await asio::this_coro::executor;
  GenerationRun run;
  if (caching && status.ok()) co_await endpoint->lookup(r.call, run);
  if (status.ok()) status = endpoint->submit(r.call, run, executor);
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

asio::awaitable<void> run_generate_message(GenerationEndpoint& endpoint, const Tenant* tenant,
                                           std::string_view message, std::size_t capacity,
                                           double deadline_s, const GeneratePiece* piece,
                                           GenerateResult& out) {
  GenerateRequest r;
  Status status = read_generate(message, capacity, true, r);
  if (status.ok() && deadline_s > 0 && (r.call.timeout_s == 0 || deadline_s < r.call.timeout_s)) {
    r.call.timeout_s = deadline_s;
  }
  if (status.ok()) status = prepare(endpoint, r);
  out.caching = status.ok() && endpoint.caches(r.call);
  if (out.caching) {
    status = cache_fields::namespace_for(tenant, "cache_namespace",
                                         r.cache_namespace.empty() ? "default" : r.cache_namespace,
                                         r.call.directives.ns);
    cache_fields::apply_cache_control(r.cache_control, r.call.directives);
  }
  const auto executor = co_await asio::this_coro::executor;
  GenerationRun run;
  if (out.caching && status.ok()) co_await endpoint.lookup(r.call, run);
  if (status.ok()) status = endpoint.submit(r.call, run, executor);
  if (status.ok()) {
    const bool streaming = r.stream && piece;
    GenerationUpdate update;
    while (co_await run.next(update)) {
      if (update.finish != FinishReason::none) {
        out.text += update.text;
        out.last = std::move(update);
      } else if (!streaming) {
        out.text += update.text;
      } else if (!update.text.empty() && !co_await (*piece)(update.text)) {
        status = Status(Errc::unavailable, "the connection closed");
        break;
      }
    }
    if (status.ok()) status = finish_status(out.last);
  }
  out.cache = run.outcome();
  out.status = std::move(status);
}

asio::awaitable<void> generate_message(GenerationEndpoint& endpoint, const Tenant* tenant,
                                       std::string_view id, std::string_view message,
                                       std::size_t capacity, net::WebSocketStream* ws,
                                       std::string& reply) {
  const std::string& model = endpoint.name();
  const GeneratePiece send = [&](std::string_view text) -> asio::awaitable<bool> {
    std::string part;
    begin_message(part, id, model);
    part += R"(,"text_output":)";
    json_append_string(part, text);
    part += '}';
    co_return co_await ws->send(std::move(part));
  };
  GenerateResult result;
  co_await run_generate_message(endpoint, tenant, message, capacity, 0, ws ? &send : nullptr,
                                result);
  if (result.status.ok()) {
    begin_message(reply, id, model);
    reply += R"(,"text_output":)";
    json_append_string(reply, result.text);
    append_finish(reply, result.last);
    if (result.cache.looked || result.caching) {
      reply += R"(,"cache":)";
      json_append_string(reply, cache_fields::outcome_name(result.cache));
    }
    reply += R"(,"final":true})";
    co_return;
  }
  reply.clear();
  reply += R"({"id":)";
  json_append_string(reply, id);
  reply += R"(,"error":)";
  json_append_string(reply, result.status.message());
  reply += R"(,"status":)";
  json_append_number(reply, http_status(result.status.code()));
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
