#include "coinfer/protocol/oip_routes.hpp"

#include "coinfer/generation/generator.hpp"

#include <simdjson.h>

#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <span>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/protocol/oip_decoder.hpp"
#include "coinfer/protocol/oip_encoder.hpp"
#include "coinfer/protocol/server_timing.hpp"
#include "coinfer/serving/cache_stage.hpp"

#include "cache_fields.hpp"
#include "stats_stream.hpp"
#include "triton_generate.hpp"

namespace coinfer {
namespace {

namespace asio = boost::asio;
using net::HttpRequest;
using net::HttpResponse;
using net::Method;

constexpr std::string_view kExtensions[] = {"model_repository", "binary_tensor_data", "generate",
                                            "statistics"};

void fail(HttpResponse& res, const Status& status) {
  res.error(http_status(status.code()), status.message());
  if (status.code() == Errc::unavailable) res.headers.emplace_back("Retry-After", "1");
}

// Whether Content-Type's media type (before any parameters, blanks ignored) is `expected`
// (lower case), compared case-insensitively without a copy.
bool media_type_is(std::string_view content_type, std::string_view expected) {
  const auto media = content_type.substr(0, content_type.find(';'));
  std::size_t at = 0;
  for (char ch : media) {
    if (ch == ' ' || ch == '\t') continue;
    if (at == expected.size() ||
        std::tolower(static_cast<unsigned char>(ch)) != static_cast<unsigned char>(expected[at])) {
      return false;
    }
    ++at;
  }
  return at == expected.size();
}

Endpoint* find_model(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  Endpoint* entry = nullptr;
  if (auto status = repo.find(req.param("model"), req.param("version"), req.tenant, entry); !status.ok()) {
    fail(res, status);
    return nullptr;
  }
  return entry;
}

bool is_generator(const ModelRepository& repo, std::string_view name) {
  return std::any_of(repo.language_models().begin(), repo.language_models().end(),
                     [&](const auto& g) { return g->name() == name; });
}

// A language model (served by its engine, in its one configured version): found (true), or
// an error answered.
bool find_generation(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  GenerationEndpoint* generator = nullptr;
  Status status = repo.find_generation(req.param("model"), req.tenant, generator);
  const std::string_view version = req.param("version");
  if (status.ok() && !version.empty() && version != generator->version()) {
    status = Status(Errc::not_found, "model '" + std::string(req.param("model")) +
                                         "' has no version '" + std::string(version) + "'");
  }
  if (!status.ok()) fail(res, status);
  return status.ok();
}

// Triton's generate models: text in, text out (BYTES tensors text_input and text_output).
void generator_metadata(std::string_view name, std::string_view version, std::string& out) {
  out += R"({"name":)";
  json_append_string(out, name);
  out += R"(,"versions":[)";
  json_append_string(out, version);
  out += R"(],"platform":"coinfer_llm",)"
         R"("inputs":[{"name":"text_input","datatype":"BYTES","shape":[1]}],)"
         R"("outputs":[{"name":"text_output","datatype":"BYTES","shape":[1]}]})";
}

void model_metadata(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  if (is_generator(repo, req.param("model"))) {
    if (find_generation(repo, req, res)) {
      generator_metadata(req.param("model"), repo.language_model(req.param("model"))->version(),
                         res.body);
    }
    return;
  }
  if (auto* entry = find_model(repo, req, res)) encode_model_metadata(entry->metadata(), res.body);
}

void model_ready(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  if (is_generator(repo, req.param("model"))) {
    if (!find_generation(repo, req, res)) return;
    res.body += "{\"name\":";
    json_append_string(res.body, req.param("model"));
    res.body += ",\"ready\":true}";
    return;
  }
  auto* entry = find_model(repo, req, res);
  if (!entry) return;
  const bool ready = entry->state() == ModelState::ready;
  res.status = ready ? 200 : 503;
  res.body += "{\"name\":";
  json_append_string(res.body, entry->metadata().name);
  res.body += ready ? ",\"ready\":true}" : ",\"ready\":false}";
}

// The OIP adapter's side of the pipeline: the JSON body (and binary tensor data) decoded
// against the endpoint's metadata, numeric inputs straight into the batch's rows.
class OipRequestDecoder final : public RequestDecoder {
 public:
  OipRequestDecoder(std::string_view body, std::size_t capacity, std::span<const std::byte> binary)
      : body_(body), capacity_(capacity), binary_(binary) {}
  Status decode(const ModelMetadata& model, InferRequest& request, InputSink* sink) override {
    // simdjson's parser keeps its buffers between documents; one per I/O thread, used only
    // here (no suspension point), so no request ever shares it with another.
    thread_local OipDecoder decoder;
    return sink ? decoder.decode_infer(body_, capacity_, model, request, *sink, binary_)
                : decoder.decode_infer(body_, capacity_, model, request, binary_);
  }

 private:
  std::string_view body_;
  std::size_t capacity_;
  std::span<const std::byte> binary_;
};

// Encodes a finished request's outputs into `out`; the JSON's length returned. Not part of the
// coroutine below, so that its frame stays small enough for Asio's recycled frame memory.
std::size_t encode_answer(const ModelMetadata& meta, InferRequest& request, BatchTicket& ticket,
                          bool binary_outputs, std::string& out) {
  InferResponse response;
  response.model_name = meta.name;
  response.model_version = meta.version;
  response.id = std::move(request.id);
  response.outputs.swap(ticket.outputs());  // borrowed for the encoding, then given back
  const std::size_t json_bytes =
      encode_infer_response(response, meta.outputs, request.requested_outputs, out,
                            binary_outputs ? std::span<const std::uint8_t>(request.binary_outputs)
                                           : std::span<const std::uint8_t>());
  response.outputs.swap(ticket.outputs());  // the ticket keeps their storage for the next one
  return json_bytes;
}

// Runs an OIP infer request through the endpoint's pipeline and encodes the answer into
// `out`; with `timing`, where its time went. Shared by the HTTP route and the WebSocket
// endpoint.
asio::awaitable<Status> run_infer(Endpoint& endpoint, std::string_view body, std::size_t capacity,
                                  std::span<const std::byte> binary, bool binary_outputs,
                                  std::string& out, std::size_t& json_bytes,
                                  const CacheDirectives* cache = nullptr,
                                  CacheOutcome* cache_outcome = nullptr,
                                  net::ServerTiming* timing = nullptr) {
  OipRequestDecoder decoder(body, capacity, binary);
  InferRequest request;
  request.cache = cache;
  BatchTicket ticket;  // the request's rows in a staging buffer, then its outputs
  const Status status = co_await endpoint.infer(decoder, request, ticket);
  if (cache_outcome) *cache_outcome = request.cache_outcome;
  if (!status.ok()) co_return status;
  const auto encode_started = std::chrono::steady_clock::now();
  json_bytes = encode_answer(endpoint.metadata(), request, ticket, binary_outputs, out);
  if (timing) {
    add_server_timing(request.timing, std::chrono::steady_clock::now() - encode_started, *timing);
  }
  co_return status;
}

// What an infer request asks for, read before it runs.
struct InferTarget {
  Endpoint* endpoint = nullptr;  // null: `res` holds the error
  std::string_view json;
  std::span<const std::byte> binary;
};

// Binary tensor data extension: with Inference-Header-Content-Length the body is that many
// bytes of JSON, then the inputs' binary data; outputs asked for as binary follow the
// response's JSON the same way. Not a coroutine: the error messages' temporaries stay out of
// the infer coroutine's frame (GCC keeps every temporary there), which then fits Asio's
// recycled frame memory.
InferTarget read_infer_target(const ModelRepository& repo, const HttpRequest& req,
                              HttpResponse& res, CacheDirectives& directives) {
  InferTarget target;
  target.json = req.body;
  const std::string_view header_length = req.header("Inference-Header-Content-Length");
  if (!header_length.empty()) {
    std::size_t length = 0;
    const char* last = header_length.data() + header_length.size();
    auto [end, ec] = std::from_chars(header_length.data(), last, length);
    if (ec != std::errc() || end != last || length > req.body.size()) {
      res.error(400, "Inference-Header-Content-Length: '" + std::string(header_length) +
                         "' is not a length within the body's " + std::to_string(req.body.size()) +
                         " bytes");
      return target;
    }
    target.json = req.body.substr(0, length);
    target.binary = std::as_bytes(std::span(req.body.data() + length, req.body.size() - length));
  }
  const std::string_view content_type = req.header("Content-Type");
  if (!(media_type_is(content_type, "") || media_type_is(content_type, "application/json") ||
        (!header_length.empty() && media_type_is(content_type, "application/octet-stream")))) {
    res.error(415,
              "Content-Type must be application/json (or application/octet-stream with "
              "Inference-Header-Content-Length), got '" +
                  std::string(req.header("Content-Type")) + "'");
    return target;
  }
  Endpoint* endpoint = find_model(repo, req, res);
  if (!endpoint) return target;
  if (endpoint->cached()) {
    if (Status s = cache_fields::read_directives(req, directives); !s.ok()) {
      fail(res, s);
      return target;
    }
  }
  target.endpoint = endpoint;
  return target;
}

// After the answer is encoded: cache headers, and the JSON's length when binary outputs follow.
void finish_infer(const Status& status, const CacheOutcome& cache_outcome, std::size_t json_bytes,
                  HttpResponse& res) {
  if (!status.ok()) {
    fail(res, status);
    return;
  }
  cache_fields::annotate(res, cache_outcome);
  if (res.body.size() > json_bytes) {
    res.content_type = "application/octet-stream";
    res.headers.emplace_back("Inference-Header-Content-Length", std::to_string(json_bytes));
  }
}

asio::awaitable<void> infer(const ModelRepository& repo, const HttpRequest& req,
                            HttpResponse& res) {
  CacheDirectives directives;
  const InferTarget target = read_infer_target(repo, req, res, directives);
  if (!target.endpoint) co_return;
  std::size_t json_bytes = 0;
  CacheOutcome cache_outcome;
  const bool cached = target.endpoint->cached();
  const Status status = co_await run_infer(*target.endpoint, target.json, req.body_capacity,
                                           target.binary, /*binary_outputs=*/true, res.body,
                                           json_bytes, cached ? &directives : nullptr,
                                           &cache_outcome, &res.timing);
  finish_infer(status, cache_outcome, json_bytes, res);
}

// A WebSocket message is an infer request naming its model:
//   {"model_name": "digits", "model_version"?: "1", "id": "7", "inputs": [...], ...}
// The reply is the OIP infer response (with the id), or {"id", "error", "status"}.
// A /v2/ws message: an infer request, or a generate request (triton_generate.hpp) when it
// names a language model.
asio::awaitable<void> infer_message(const ModelRepository& repo, std::string_view message,
                                    std::size_t capacity, const Tenant* tenant,
                                    net::WebSocketStream* stream, std::string& reply) {
  thread_local simdjson::ondemand::parser parser;  // for the routing fields only
  std::string_view model, version, id;
  std::string id_copy, model_copy, version_copy;
  Status status;
  {
    simdjson::ondemand::document doc;
    simdjson::ondemand::object object;
    if (capacity < message.size() + simdjson::SIMDJSON_PADDING ||
        parser.iterate(message.data(), message.size(), capacity).get(doc) ||
        doc.get_object().get(object)) {
      status = Status::invalid("message must be a JSON object: an infer request with model_name");
    } else {
      // Missing fields stay empty; a present field of the wrong type is an error.
      auto read = [&](const char* key, std::string_view& field) {
        auto value = object.find_field_unordered(key);
        if (value.error() == simdjson::NO_SUCH_FIELD) return true;
        return !value.get_string().get(field);
      };
      if (!read("id", id)) status = Status::invalid("id: expected a string");
      if (status.ok() && !read("model_name", model)) {
        status = Status::invalid("model_name: expected a string");
      }
      if (status.ok() && !read("model_version", version)) {
        status = Status::invalid("model_version: expected a string");
      }
      if (status.ok() && model.empty()) status = Status::invalid("model_name: missing");
      // The views point into the parser's string buffer, which the decoder's parse would not
      // touch, but the next message on this thread would: keep copies across the await.
      id_copy = id;
      model_copy = model;
      version_copy = version;
    }
  }
  Endpoint* endpoint = nullptr;
  GenerationEndpoint* generator = nullptr;
  if (status.ok() && is_generator(repo, model_copy)) {
    status = repo.find_generation(model_copy, tenant, generator);
  } else if (status.ok()) {
    status = repo.find(model_copy, version_copy, tenant, endpoint);
  }
  TenantPermit permit;  // each message counts against the key's limits, as a request does
  if (status.ok() && tenant) status = tenant->admit(permit);
  if (status.ok() && generator) {
    co_await generate_message(*generator, tenant, id_copy, message, capacity, stream, reply);
    co_return;
  }
  // Text messages carry JSON only: binary inputs are refused by the decoder (no bytes after
  // the JSON), and outputs asked for as binary come as JSON.
  std::size_t json_bytes = 0;
  if (status.ok()) {
    status = co_await run_infer(*endpoint, message, capacity, {}, /*binary_outputs=*/false, reply,
                                json_bytes);
  }
  if (!status.ok()) {
    reply.clear();
    reply += "{\"id\":";
    json_append_string(reply, id_copy);
    reply += ",\"error\":";
    json_append_string(reply, status.message());
    reply += ",\"status\":";
    json_append_number(reply, http_status(status.code()));
    reply += '}';
  }
}

// Body: optional {"ready": bool}; true lists only models that are ready.
void repository_index(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  bool ready_only = false;
  if (!req.body.empty()) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (auto error = parser.parse(req.body.data(), req.body.size()).get(doc)) {
      res.error(400, std::string("invalid JSON: ") + simdjson::error_message(error));
      return;
    }
    simdjson::dom::object object;
    if (doc.get(object)) {
      res.error(400, "repository index request must be a JSON object");
      return;
    }
    if (auto ready = object["ready"]; ready.error() != simdjson::NO_SUCH_FIELD) {
      if (ready.get(ready_only)) {
        res.error(400, "ready: expected a boolean");
        return;
      }
    }
  }
  res.body += '[';
  bool first = true;
  for (const auto& entry : repo.endpoints()) {
    if (!ModelRepository::visible(*entry, req.tenant)) continue;
    const ModelState state = entry->state();
    if (ready_only && state != ModelState::ready) continue;
    if (!first) res.body += ',';
    first = false;
    res.body += "{\"name\":";
    json_append_string(res.body, entry->metadata().name);
    res.body += ",\"version\":";
    json_append_string(res.body, entry->metadata().version);
    res.body += ",\"state\":";
    json_append_string(res.body, to_string(state));
    res.body += '}';
  }
  for (const auto& g : repo.language_models()) {  // language models are ready once served
    GenerationEndpoint* visible = nullptr;
    if (!repo.find_generation(g->name(), req.tenant, visible).ok()) continue;
    if (!first) res.body += ',';
    first = false;
    res.body += "{\"name\":";
    json_append_string(res.body, g->name());
    res.body += R"(,"version":)";
    json_append_string(res.body, g->version());
    res.body += R"(,"state":"READY"})";
  }
  res.body += ']';
}

// Triton's statistics extension: {"model_stats": [...]} for every visible model, or the one
// (and version) of the path. Counts are requests (a batch counts each of its requests, each
// with the batch's compute time), durations cumulative ns, as Triton reports them.
void model_stats(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  const std::string_view name = req.param("model");
  const std::string_view version = req.param("version");
  const bool language_model = !name.empty() && is_generator(repo, name);
  if (!name.empty() && !language_model) {
    Endpoint* endpoint = nullptr;
    if (auto status = repo.find(name, version, req.tenant, endpoint); !status.ok()) {
      fail(res, status);
      return;
    }
  }
  if (language_model) {
    GenerationEndpoint* visible = nullptr;
    if (auto status = repo.find_generation(name, req.tenant, visible); !status.ok()) {
      fail(res, status);
      return;
    }
  }
  auto duration = [&](std::string_view key, std::uint64_t count, std::uint64_t ns) {
    // std::to_string: GCC 12 at -O3 misjudges the bound of to_chars' span when inlined here.
    json_append_string(res.body, key);
    res.body.append(R"(:{"count":)");
    res.body.append(std::to_string(count));
    res.body.append(R"(,"ns":)");
    res.body.append(std::to_string(ns));
    res.body.push_back('}');
  };
  auto s_to_ns = [](double s) { return static_cast<std::uint64_t>(s * 1e9); };
  // Opens a model's entry ({"name":..,"version":..) when the path asks for it (or for all).
  bool first = true;
  auto begin_entry = [&](std::string_view model, std::string_view model_version) {
    if (!name.empty() && (model != name || (!version.empty() && model_version != version))) return false;
    if (!first) res.body += ',';
    first = false;
    res.body += "{\"name\":";
    json_append_string(res.body, model);
    res.body += ",\"version\":";
    json_append_string(res.body, model_version);
    return true;
  };
  res.body += "{\"model_stats\":[";
  for (const auto& e : repo.endpoints()) {
    const ModelMetadata& md = e->metadata();
    if (!ModelRepository::visible(*e, req.tenant) || !begin_entry(md.name, md.version)) continue;
    const ModelMetrics& m = e->metrics();
    res.body += ",\"last_inference\":";
    json_append_number(res.body, m.last_inference_ms.load(std::memory_order_relaxed));
    res.body += ",\"inference_count\":";
    json_append_number(res.body, m.inference_count.value());
    res.body += ",\"execution_count\":";
    json_append_number(res.body, m.exec_count.value());
    res.body += ",\"inference_stats\":{";
    duration("success", m.request_success.value(), s_to_ns(m.request_duration.sum()));
    res.body += ',';
    duration("fail", m.request_failure.value(), m.failure_ns.value());
    res.body += ',';
    duration("queue", m.queue_duration.count(), s_to_ns(m.queue_duration.sum()));
    // The decoder writes inputs into the batch's rows and outputs are read from it: no copy
    // stage of its own, so compute_input and compute_output are zero-time, counted as Triton
    // counts them (once per computed request).
    res.body += ',';
    duration("compute_input", m.compute_requests.value(), 0);
    res.body += ',';
    duration("compute_infer", m.compute_requests.value(), m.compute_request_ns.value());
    res.body += ',';
    duration("compute_output", m.compute_requests.value(), 0);
    res.body += "},\"batch_stats\":[";
    bool first_size = true;
    for (int size = 1; size <= ModelMetrics::kMaxStatsBatch; ++size) {
      const auto& s = m.by_batch_size[static_cast<std::size_t>(size)];
      const std::uint64_t count = s.count.value();
      if (count == 0) continue;
      if (!first_size) res.body += ',';
      first_size = false;
      res.body += "{\"batch_size\":";
      json_append_number(res.body, size);
      res.body += ',';
      duration("compute_input", count, 0);
      res.body += ',';
      duration("compute_infer", count, s.compute_ns.value());
      res.body += ',';
      duration("compute_output", count, 0);
      res.body += '}';
    }
    res.body += "]}";
  }
  // Language models: requests by outcome and their end-to-end time (the engine schedules per
  // step, not per batch, so there are no batch statistics).
  for (const auto& g : repo.language_models()) {
    GenerationEndpoint* visible = nullptr;
    if (!repo.find_generation(g->name(), req.tenant, visible).ok() ||
        !begin_entry(g->name(), g->version()))
      continue;
    const auto& m = g->generator().metrics();
    res.body += ",\"inference_count\":";
    json_append_number(res.body, m.request_success.value());
    res.body += ",\"inference_stats\":{";
    duration("success", m.request_success.value(),
             static_cast<std::uint64_t>(m.e2e_request_latency_s.sum() * 1e9));
    res.body += ',';
    duration("fail", m.request_failure.value(), 0);
    res.body += "},\"batch_stats\":[]}";
  }
  res.body += "]}";
}

}  // namespace

std::span<const std::string_view> oip_extensions() noexcept { return kExtensions; }

void add_oip_routes(net::Router& router, const ModelRepository& repository, ServerInfo info) {
  const ModelRepository* repo = &repository;
  router.add(Method::get, "/v2/health/live",
             [](const HttpRequest&, HttpResponse& res) { res.body += "{\"live\":true}"; });
  router.add(Method::get, "/v2/health/ready", [repo](const HttpRequest&, HttpResponse& res) {
    const bool ready = repo->all_ready();
    res.status = ready ? 200 : 503;
    res.body += ready ? "{\"ready\":true}" : "{\"ready\":false}";
  });
  router.add(Method::get, "/v2", [info](const HttpRequest&, HttpResponse& res) {
    encode_server_metadata(info.name, info.version, kExtensions, res.body);
  });
  // Before /v2/models/{model}, which "stats" would otherwise match.
  router.add(Method::get, "/v2/models/stats",
             [repo](const HttpRequest& req, HttpResponse& res) { model_stats(*repo, req, res); });
  for (std::string_view base : {"/v2/models/{model}", "/v2/models/{model}/versions/{version}"}) {
    const std::string prefix(base);
    router.add(Method::get, prefix + "/stats",
               [repo](const HttpRequest& req, HttpResponse& res) { model_stats(*repo, req, res); });
    router.add(Method::get, prefix, [repo](const HttpRequest& req, HttpResponse& res) {
      model_metadata(*repo, req, res);
    });
    router.add(Method::get, prefix + "/ready",
               [repo](const HttpRequest& req, HttpResponse& res) { model_ready(*repo, req, res); });
    router.add(Method::post, prefix + "/infer",
               net::AsyncHandler([repo](const HttpRequest& req, HttpResponse& res) {
                 return infer(*repo, req, res);
               }));
  }
  add_generate_routes(router, repository);
  router.add(Method::get, "/metrics", [repo](const HttpRequest&, HttpResponse& res) {
    std::vector<NamedModelMetrics> models;
    for (const auto& e : repo->endpoints()) {
      models.push_back({e->metadata().name, e->metadata().version, &e->metrics()});
    }
    res.content_type = "text/plain; version=0.0.4";
    render_prometheus(models, res.body);
    std::vector<generation::NamedGenerationMetrics> generators;
    for (const auto& g : repo->language_models())
      generators.push_back({g->name(), &g->generator().metrics()});
    generation::render_prometheus(generators, res.body);
    if (CacheStage* stage = repo->cache()) cache::render_prometheus(stage->cache(), res.body);
  });
  add_stats_routes(router, repository);
  router.add_websocket("/v2/ws",
                       [repo](std::string_view message, std::size_t capacity,
                              const Tenant* tenant, net::WebSocketStream* stream,
                              std::string& reply) {
                         return infer_message(*repo, message, capacity, tenant, stream, reply);
                       });
  router.add(
      Method::post, "/v2/repository/index",
      [repo](const HttpRequest& req, HttpResponse& res) { repository_index(*repo, req, res); });
}

}  // namespace coinfer
