// The Open Inference Protocol over gRPC: gRPC's callback (reactor) API on gRPC's threads, each
// call handed to the I/O executor as a coroutine into the same pipelines as HTTP.
#include "coinfer/protocol/grpc_server.hpp"

#include <grpcpp/grpcpp.h>
#include <simdjson.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <deque>
#include <fstream>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "../cache_fields.hpp"
#include "../triton_generate.hpp"
#include "coinfer/core/access.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/serving/generation_endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"
#include "grpc_service.grpc.pb.h"
#include "infer_codec.hpp"
#include "rpc_status.pb.h"

namespace coinfer {
namespace {

namespace asio = boost::asio;
using inference::ModelInferRequest;
using inference::ModelInferResponse;
using inference::ModelStreamInferResponse;
using Strand = asio::strand<asio::any_io_executor>;

// Responses of one stream waiting to be written: a generation that outruns its reader waits
// for room (backpressure) rather than growing the queue.
constexpr std::size_t kMaxQueuedWrites = 64;

// A Status as gRPC's: the same message, the code gRPC clients expect for it. A full queue or
// a key over its limit carries google.rpc.RetryInfo (retry after `retry_after_s`) in the
// status details, as gRPC's retry-aware clients read it.
grpc::Status to_grpc(const Status& s, int retry_after_s = 1) {
  using grpc::StatusCode;
  StatusCode code = StatusCode::UNKNOWN;
  bool retry = false;
  switch (s.code()) {
    case Errc::ok: return grpc::Status::OK;
    case Errc::invalid_argument: code = StatusCode::INVALID_ARGUMENT; break;
    case Errc::unauthenticated: code = StatusCode::UNAUTHENTICATED; break;
    case Errc::forbidden: code = StatusCode::PERMISSION_DENIED; break;
    case Errc::not_found: code = StatusCode::NOT_FOUND; break;
    case Errc::method_not_allowed: code = StatusCode::UNIMPLEMENTED; break;
    case Errc::payload_too_large:
    case Errc::headers_too_large: code = StatusCode::RESOURCE_EXHAUSTED; break;
    case Errc::too_many_requests:
      code = StatusCode::RESOURCE_EXHAUSTED;
      retry = true;
      break;
    case Errc::unavailable:
      code = StatusCode::UNAVAILABLE;
      retry = true;
      break;
    case Errc::deadline_exceeded: code = StatusCode::DEADLINE_EXCEEDED; break;
    case Errc::cancelled: code = StatusCode::CANCELLED; break;
    case Errc::internal: code = StatusCode::INTERNAL; break;
  }
  if (!retry) return {code, s.message()};
  google::rpc::Status details;
  details.set_code(static_cast<int>(code));
  details.set_message(s.message());
  google::rpc::RetryInfo info;
  info.mutable_retry_delay()->set_seconds(retry_after_s);
  details.add_details()->PackFrom(info);
  return {code, s.message(), details.SerializeAsString()};
}

std::string_view metadata(const grpc::CallbackServerContext* ctx, std::string_view key) {
  const auto& md = ctx->client_metadata();
  const auto it = md.find(grpc::string_ref(key.data(), key.size()));
  return it == md.end() ? std::string_view() : std::string_view(it->second.data(), it->second.size());
}

// What is left of the call's deadline; 0 when it has none.
std::chrono::microseconds deadline_left(const grpc::CallbackServerContext* ctx) {
  const auto deadline = ctx->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return {};
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
      deadline - std::chrono::system_clock::now());
  return std::max(left, std::chrono::microseconds(1));
}

// The access log's line for one gRPC request ([log] access): the HTTP lines' fields, with
// method GRPC, the RPC as target, the model, and the outcome as the HTTP status the same
// outcome gets (200 for OK) beside the gRPC code.
void log_access(std::string_view rpc, std::string_view model, std::string_view id,
                const Tenant* tenant, const Status& status,
                std::chrono::steady_clock::time_point started) {
  if (!log::access_enabled()) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              started).count();
  const std::string http = std::to_string(status.ok() ? 200 : http_status(status.code()));
  const std::string code = std::to_string(static_cast<int>(to_grpc(status).error_code()));
  char ms_text[32];
  const auto ms_end = std::to_chars(ms_text, ms_text + sizeof ms_text, ms,
                                    std::chars_format::fixed, 3).ptr;
  std::string target = "/inference.GRPCInferenceService/";
  target += rpc;
  log::event(log::Level::info, "access",
             {{"request_id", id.empty() ? std::string_view("-") : id},
              {"method", "GRPC"},
              {"target", target},
              {"model", model.empty() ? std::string_view("-") : model},
              {"status", http, true},
              {"grpc_status", code, true},
              {"duration_ms", {ms_text, static_cast<std::size_t>(ms_end - ms_text)}, true},
              {"tenant", tenant ? std::string_view(tenant->name()) : std::string_view("-")}});
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One unary call run as a coroutine: finished with the coroutine's status; a cancellation
// from the client (gone, deadline) cancels the coroutine on its strand.
class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  template <class Body>
  static UnaryCall* spawn(const asio::any_io_executor& io, Body body) {
    auto* call = new UnaryCall(io);
    auto cancel = call->cancel_;
    asio::co_spawn(cancel->strand, std::move(body),
                   asio::bind_cancellation_slot(
                       cancel->signal.slot(), [call, cancel](std::exception_ptr e, grpc::Status s) {
                         cancel->done = true;
                         call->Finish(e ? grpc::Status(grpc::StatusCode::INTERNAL, "internal error")
                                        : std::move(s));
                       }));
    return call;
  }
  void OnCancel() override {
    asio::post(cancel_->strand, [cancel = cancel_] {
      if (!cancel->done) cancel->signal.emit(asio::cancellation_type::terminal);
    });
  }
  void OnDone() override { delete this; }

 private:
  struct Cancel {
    explicit Cancel(const asio::any_io_executor& io) : strand(asio::make_strand(io)) {}
    Strand strand;
    asio::cancellation_signal signal;
    bool done = false;
  };
  explicit UnaryCall(const asio::any_io_executor& io) : cancel_(std::make_shared<Cancel>(io)) {}
  std::shared_ptr<Cancel> cancel_;
};

class Service;

// A ModelStreamInfer call: many requests on one stream, each handled as its own coroutine on
// the stream's strand (at most ws_max_in_flight at once: the stream is not read further until
// one finishes), responses written in completion order, one at a time. Every member is used on
// the strand only; gRPC's reactions post there.
class StreamCall final
    : public grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse>,
      public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(Service& service, grpc::CallbackServerContext* ctx, const Tenant* tenant);
  void hold() { self_ = shared_from_this(); }
  void start();  // on the gRPC thread that received the call
  void drain();  // the server stops: finish once idle, refuse further requests

  void OnReadDone(bool ok) override {
    asio::post(strand_, [self = shared_from_this(), ok] { self->read_done(ok); });
  }
  void OnWriteDone(bool ok) override {
    asio::post(strand_, [self = shared_from_this(), ok] { self->write_done(ok); });
  }
  void OnCancel() override {
    asio::post(strand_, [self = shared_from_this()] { self->cancel(); });
  }
  void OnDone() override;

  // Queues a response (waiting while kMaxQueuedWrites are queued); false once the stream is
  // cancelled or finished.
  asio::awaitable<bool> send(ModelStreamInferResponse response);
  const Tenant* tenant() const noexcept { return tenant_; }
  grpc::CallbackServerContext* context() const noexcept { return ctx_; }

 private:
  void read_next();
  void read_done(bool ok);
  void write_done(bool ok);
  void start_write();
  void cancel();
  void maybe_finish();
  asio::awaitable<void> handle(std::unique_ptr<ModelInferRequest> request);

  Service& service_;
  Strand strand_;
  grpc::CallbackServerContext* ctx_;
  const Tenant* tenant_;
  std::shared_ptr<StreamCall> self_;  // gRPC holds the reactor until OnDone
  std::unique_ptr<ModelInferRequest> reading_;
  bool read_pending_ = false, reads_done_ = false;
  std::size_t in_flight_ = 0;
  std::list<asio::cancellation_signal> cancels_;  // one per request in flight
  std::deque<ModelStreamInferResponse> writes_;   // front: being written while writing_
  bool writing_ = false;
  asio::steady_timer room_;  // woken (cancelled) when a write completes
  bool cancelled_ = false, finished_ = false, draining_ = false;
};

class Service final : public inference::GRPCInferenceService::CallbackService {
 public:
  Service(asio::any_io_executor io, const ServerConfig& config, const ModelRepository& repo,
          const AccessControl* access, ServerInfo info)
      : io_(std::move(io)), config_(config), repo_(repo), access_(access), info_(std::move(info)) {}

  const asio::any_io_executor& io() const noexcept { return io_; }
  const ServerConfig& config() const noexcept { return config_; }
  const ModelRepository& repo() const noexcept { return repo_; }

  // The caller's tenant from the `authorization` metadata ("Bearer <key>"), as HTTP's
  // Authorization header; `path`: the HTTP path of the same call, public when [auth] says so.
  Status authenticate(grpc::CallbackServerContext* ctx, std::string_view path,
                      const Tenant*& tenant) const {
    tenant = nullptr;
    if (!access_ || !access_->enabled() || (!path.empty() && access_->is_public(path))) return {};
    return access_->authenticate(metadata(ctx, "authorization"), tenant);
  }

  // A call answered at once, on gRPC's thread (nothing to wait for).
  template <class Fill>
  grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* ctx, std::string_view rpc,
                                   std::string_view model, std::string_view path, Fill fill) {
    const auto started = std::chrono::steady_clock::now();
    auto* reactor = ctx->DefaultReactor();
    const Tenant* tenant = nullptr;
    Status s = authenticate(ctx, path, tenant);
    if (s.ok()) s = fill(tenant);
    reactor->Finish(to_grpc(s, tenant ? tenant->retry_after_s() : 1));
    log_access(rpc, model, {}, tenant, s, started);
    return reactor;
  }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx,
                                       const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* res) override {
    return answer(ctx, "ServerLive", {}, "/v2/health/live", [&](const Tenant*) {
      res->set_live(true);
      return Status();
    });
  }
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* ctx,
                                        const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* res) override {
    return answer(ctx, "ServerReady", {}, "/v2/health/ready", [&](const Tenant*) {
      res->set_ready(repo_.all_ready() && !draining());
      return Status();
    });
  }
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx,
                                           const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* res) override {
    return answer(ctx, "ServerMetadata", {}, "/v2", [&](const Tenant*) {
      res->set_name(info_.name);
      res->set_version(info_.version);
      for (std::string_view e : oip_extensions()) res->add_extensions(std::string(e));
      return Status();
    });
  }
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* ctx,
                                       const inference::ModelReadyRequest* req,
                                       inference::ModelReadyResponse* res) override {
    return answer(ctx, "ModelReady", req->name(), {}, [&](const Tenant* tenant) {
      GenerationEndpoint* generator = nullptr;
      Endpoint* endpoint = nullptr;
      Status s = find(req->name(), req->version(), tenant, endpoint, generator);
      if (s.ok()) res->set_ready(generator || endpoint->state() == ModelState::ready);
      return s;
    });
  }
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx,
                                          const inference::ModelMetadataRequest* req,
                                          inference::ModelMetadataResponse* res) override {
    return answer(ctx, "ModelMetadata", req->name(), {}, [&](const Tenant* tenant) {
      GenerationEndpoint* generator = nullptr;
      Endpoint* endpoint = nullptr;
      Status s = find(req->name(), req->version(), tenant, endpoint, generator);
      if (s.ok()) grpc_codec::encode_metadata(endpoint ? endpoint->metadata() : generator_metadata(*generator), *res);
      return s;
    });
  }
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* ctx,
                                        const inference::ModelConfigRequest* req,
                                        inference::ModelConfigResponse* res) override {
    return answer(ctx, "ModelConfig", req->name(), {}, [&](const Tenant* tenant) {
      GenerationEndpoint* generator = nullptr;
      Endpoint* endpoint = nullptr;
      Status s = find(req->name(), req->version(), tenant, endpoint, generator);
      if (!s.ok()) return s;
      auto* config = res->mutable_config();
      if (endpoint) {
        grpc_codec::encode_config(endpoint->metadata(), endpoint->batcher().policy(), *config);
      } else {
        grpc_codec::encode_config(generator_metadata(*generator), BatchPolicy{}, *config);
        config->mutable_model_transaction_policy()->set_decoupled(true);
      }
      return s;
    });
  }
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* ctx,
                                            const inference::RepositoryIndexRequest* req,
                                            inference::RepositoryIndexResponse* res) override {
    return answer(ctx, "RepositoryIndex", {}, "/v2/repository/index", [&](const Tenant* tenant) {
      for (const auto& e : repo_.endpoints()) {
        if (!ModelRepository::visible(*e, tenant)) continue;
        if (req->ready() && e->state() != ModelState::ready) continue;
        auto* m = res->add_models();
        m->set_name(e->metadata().name);
        m->set_version(e->metadata().version);
        m->set_state(std::string(to_string(e->state())));
      }
      for (const auto& g : repo_.language_models()) {
        GenerationEndpoint* visible = nullptr;
        if (!repo_.find_generation(g->name(), tenant, visible).ok()) continue;
        auto* m = res->add_models();
        m->set_name(g->name());
        m->set_version(g->version());
        m->set_state("READY");
      }
      return Status();
    });
  }
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* ctx,
                                            const inference::ModelStatisticsRequest* req,
                                            inference::ModelStatisticsResponse* res) override {
    return answer(ctx, "ModelStatistics", req->name(), {}, [&](const Tenant* tenant) {
      return statistics(*req, tenant, *res);
    });
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx,
                                       const ModelInferRequest* req,
                                       ModelInferResponse* res) override {
    return UnaryCall::spawn(io_, [this, ctx, req, res]() -> asio::awaitable<grpc::Status> {
      const auto started = std::chrono::steady_clock::now();
      const Tenant* tenant = nullptr;
      Status s = authenticate(ctx, {}, tenant);
      TenantPermit permit;
      if (s.ok() && tenant) s = tenant->admit(permit);
      if (s.ok() && draining()) s = Status(Errc::unavailable, "the server is shutting down");
      if (s.ok()) s = co_await infer(*req, ctx, tenant, *res, nullptr);
      log_access("ModelInfer", req->model_name(), req->id(), tenant, s, started);
      co_return to_grpc(s, tenant ? tenant->retry_after_s() : 1);
    });
  }

  grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse>* ModelStreamInfer(
      grpc::CallbackServerContext* ctx) override {
    const Tenant* tenant = nullptr;
    Status s = authenticate(ctx, {}, tenant);
    if (s.ok() && draining()) s = Status(Errc::unavailable, "the server is shutting down");
    auto call = std::make_shared<StreamCall>(*this, ctx, tenant);
    call->hold();  // until OnDone
    if (!s.ok()) {
      log_access("ModelStreamInfer", {}, {}, tenant, s, std::chrono::steady_clock::now());
      call->Finish(to_grpc(s));
      return call.get();
    }
    {
      std::lock_guard lock(streams_mutex_);
      streams_.remove_if([](const auto& w) { return w.expired(); });
      streams_.push_back(call);
    }
    call->start();
    return call.get();
  }

  // One infer request (or a generate request to a language model) through its pipeline into
  // `res`. `stream`: the ModelStreamInfer call it came on, whose generations stream their
  // pieces as separate responses (null: a unary call, answered once).
  asio::awaitable<Status> infer(const ModelInferRequest& req, grpc::CallbackServerContext* ctx,
                                const Tenant* tenant, ModelInferResponse& res, StreamCall* stream) {
    GenerationEndpoint* generator = nullptr;
    Endpoint* endpoint = nullptr;
    Status s = find(req.model_name(), req.model_version(), tenant, endpoint, generator);
    if (!s.ok()) co_return s;
    if (generator) co_return co_await generate(*generator, req, ctx, tenant, res, stream);
    CacheDirectives directives;
    if (endpoint->cached()) {
      s = read_cache_metadata(ctx, tenant, directives);
      if (!s.ok()) co_return s;
    }
    grpc_codec::InferDecoder decoder(req, deadline_left(ctx));
    InferRequest request;
    if (endpoint->cached()) request.cache = &directives;
    BatchTicket ticket;
    s = co_await endpoint->infer(decoder, request, ticket);
    if (!s.ok()) co_return s;
    grpc_codec::encode_infer(endpoint->metadata(), request, ticket.outputs(), res);
    // On a stream every response says whether it is its request's last, as Triton's do (a
    // client waiting for the flag, e.g. with enable_empty_final_response, finds it).
    if (stream) (*res.mutable_parameters())["triton_final_response"].set_bool_param(true);
    if (request.cache_outcome.looked) {
      (*res.mutable_parameters())["cache"].set_string_param(
          std::string(cache_fields::outcome_name(request.cache_outcome)));
    }
    co_return s;
  }

  void drain() {
    draining_.store(true, std::memory_order_relaxed);
    std::lock_guard lock(streams_mutex_);
    for (auto& weak : streams_) {
      if (auto call = weak.lock()) call->drain();
    }
  }
  bool draining() const noexcept { return draining_.load(std::memory_order_relaxed); }

 private:
  Status find(std::string_view name, std::string_view version, const Tenant* tenant,
              Endpoint*& endpoint, GenerationEndpoint*& generator) const {
    if (name.empty()) return Status::invalid("model name: missing");
    if (repo_.language_model(name)) {
      Status s = repo_.find_generation(name, tenant, generator);
      if (s.ok() && !version.empty() && version != generator->version()) {
        s = Status(Errc::not_found, "model '" + std::string(name) + "' has no version '" +
                                        std::string(version) + "'");
      }
      return s;
    }
    return repo_.find(name, version, tenant, endpoint);
  }

  // Triton's generate models: text in, text out.
  static coinfer::ModelMetadata generator_metadata(const GenerationEndpoint& g) {
    coinfer::ModelMetadata m;
    m.name = g.name();
    m.version = g.version();
    m.platform = "coinfer_llm";
    m.inputs = {{"text_input", DType::Bytes, {1}}};
    m.outputs = {{"text_output", DType::Bytes, {1}}};
    return m;
  }

  // x-cache-namespace and cache-control metadata, as HTTP's X-Cache-Namespace and
  // Cache-Control headers.
  static Status read_cache_metadata(grpc::CallbackServerContext* ctx, const Tenant* tenant,
                                    CacheDirectives& out) {
    const std::string_view ns = metadata(ctx, "x-cache-namespace");
    if (Status s = cache_fields::namespace_for(tenant, "x-cache-namespace",
                                               ns.empty() ? "default" : ns, out.ns);
        !s.ok()) {
      return s;
    }
    cache_fields::apply_cache_control(metadata(ctx, "cache-control"), out);
    return {};
  }

  asio::awaitable<Status> generate(GenerationEndpoint& generator, const ModelInferRequest& req,
                                   grpc::CallbackServerContext* ctx, const Tenant* tenant,
                                   ModelInferResponse& res, StreamCall* stream) {
    std::string message;
    Status s = grpc_codec::generate_message(req, message);
    if (!s.ok()) co_return s;
    // The cache metadata as the message's fields (the /v2/ws message's keys).
    for (auto [key, field] : {std::pair{"x-cache-namespace", "cache_namespace"},
                              std::pair{"cache-control", "cache_control"}}) {
      const std::string_view value = metadata(ctx, key);
      if (value.empty()) continue;
      message.back() = ',';
      json_append_string(message, field);
      message += ':';
      json_append_string(message, value);
      message += '}';
    }
    message.reserve(message.size() + simdjson::SIMDJSON_PADDING);
    const GeneratePiece piece = [&](std::string_view text) -> asio::awaitable<bool> {
      ModelStreamInferResponse part;
      grpc_codec::encode_generate(req, generator.version(), text, nullptr,
                                  *part.mutable_infer_response());
      co_return co_await stream->send(std::move(part));
    };
    const double deadline_s = static_cast<double>(deadline_left(ctx).count()) / 1e6;
    GenerateResult result;
    co_await run_generate_message(generator, tenant, message, message.capacity(), deadline_s,
                                  stream ? &piece : nullptr, result);
    if (!result.status.ok()) co_return result.status;
    grpc_codec::encode_generate(req, generator.version(), result.text, &result.last, res);
    if (result.cache.looked || result.caching) {
      (*res.mutable_parameters())["cache"].set_string_param(
          std::string(cache_fields::outcome_name(result.cache)));
    }
    co_return Status();
  }

  // Triton's statistics, as GET /v2/models[/{model}[/versions/{v}]]/stats reports them.
  Status statistics(const inference::ModelStatisticsRequest& req, const Tenant* tenant,
                    inference::ModelStatisticsResponse& res) const {
    const std::string& name = req.name();
    const std::string& version = req.version();
    if (!name.empty()) {
      GenerationEndpoint* generator = nullptr;
      Endpoint* endpoint = nullptr;
      if (Status s = find(name, version, tenant, endpoint, generator); !s.ok()) return s;
    }
    auto wanted = [&](std::string_view model, std::string_view model_version) {
      return name.empty() || (model == name && (version.empty() || model_version == version));
    };
    auto duration = [](inference::StatisticDuration* d, std::uint64_t count, std::uint64_t ns) {
      d->set_count(count);
      d->set_ns(ns);
    };
    auto s_to_ns = [](double s) { return static_cast<std::uint64_t>(s * 1e9); };
    for (const auto& e : repo_.endpoints()) {
      const auto& md = e->metadata();
      if (!ModelRepository::visible(*e, tenant) || !wanted(md.name, md.version)) continue;
      const ModelMetrics& m = e->metrics();
      auto* stats = res.add_model_stats();
      stats->set_name(md.name);
      stats->set_version(md.version);
      stats->set_last_inference(static_cast<std::uint64_t>(m.last_inference_ms.load(std::memory_order_relaxed)));
      stats->set_inference_count(m.inference_count.value());
      stats->set_execution_count(m.exec_count.value());
      auto* infer = stats->mutable_inference_stats();
      duration(infer->mutable_success(), m.request_success.value(), s_to_ns(m.request_duration.sum()));
      duration(infer->mutable_fail(), m.request_failure.value(), m.failure_ns.value());
      duration(infer->mutable_queue(), m.queue_duration.count(), s_to_ns(m.queue_duration.sum()));
      duration(infer->mutable_compute_input(), m.compute_requests.value(), 0);
      duration(infer->mutable_compute_infer(), m.compute_requests.value(), m.compute_request_ns.value());
      duration(infer->mutable_compute_output(), m.compute_requests.value(), 0);
      for (int size = 1; size <= ModelMetrics::kMaxStatsBatch; ++size) {
        const auto& b = m.by_batch_size[static_cast<std::size_t>(size)];
        if (b.count.value() == 0) continue;
        auto* batch = stats->add_batch_stats();
        batch->set_batch_size(static_cast<std::uint64_t>(size));
        duration(batch->mutable_compute_input(), b.count.value(), 0);
        duration(batch->mutable_compute_infer(), b.count.value(), b.compute_ns.value());
        duration(batch->mutable_compute_output(), b.count.value(), 0);
      }
    }
    for (const auto& g : repo_.language_models()) {
      GenerationEndpoint* visible = nullptr;
      if (!repo_.find_generation(g->name(), tenant, visible).ok() || !wanted(g->name(), g->version())) {
        continue;
      }
      const auto& m = g->generator().metrics();
      auto* stats = res.add_model_stats();
      stats->set_name(g->name());
      stats->set_version(g->version());
      stats->set_inference_count(m.request_success.value());
      auto* infer = stats->mutable_inference_stats();
      duration(infer->mutable_success(), m.request_success.value(),
               static_cast<std::uint64_t>(m.e2e_request_latency_s.sum() * 1e9));
      duration(infer->mutable_fail(), m.request_failure.value(), 0);
    }
    return {};
  }

  asio::any_io_executor io_;
  const ServerConfig& config_;
  const ModelRepository& repo_;
  const AccessControl* access_;
  ServerInfo info_;
  std::atomic<bool> draining_{false};
  std::mutex streams_mutex_;
  std::list<std::weak_ptr<StreamCall>> streams_;
};

StreamCall::StreamCall(Service& service, grpc::CallbackServerContext* ctx, const Tenant* tenant)
    : service_(service),
      strand_(asio::make_strand(service.io())),
      ctx_(ctx),
      tenant_(tenant),
      room_(strand_) {}

void StreamCall::start() {
  asio::post(strand_, [self = shared_from_this()] { self->read_next(); });
}

void StreamCall::drain() {
  asio::post(strand_, [self = shared_from_this()] {
    self->draining_ = true;
    self->maybe_finish();
  });
}

void StreamCall::OnDone() {
  asio::post(strand_, [self = shared_from_this()] {
    self->finished_ = true;
    self->self_.reset();  // the handlers still running hold their own references
  });
}

void StreamCall::read_next() {
  if (read_pending_ || reads_done_ || cancelled_ || finished_ || draining_) return;
  if (in_flight_ >= service_.config().ws_max_in_flight) return;  // read again when one finishes
  reading_ = std::make_unique<ModelInferRequest>();
  read_pending_ = true;
  StartRead(reading_.get());
}

void StreamCall::read_done(bool ok) {
  read_pending_ = false;
  if (finished_) return;
  if (!ok) {  // the client closed its side (or the call ended)
    reads_done_ = true;
    maybe_finish();
    return;
  }
  auto request = std::move(reading_);
  auto& signal = cancels_.emplace_back();
  const auto slot = std::prev(cancels_.end());
  ++in_flight_;
  asio::co_spawn(strand_, handle(std::move(request)),
                 asio::bind_cancellation_slot(signal.slot(), [self = shared_from_this(), slot](std::exception_ptr) {
                   self->cancels_.erase(slot);
                   --self->in_flight_;
                   self->read_next();
                   self->maybe_finish();
                 }));
  read_next();
}

asio::awaitable<void> StreamCall::handle(std::unique_ptr<ModelInferRequest> request) {
  const auto started = std::chrono::steady_clock::now();
  ModelStreamInferResponse response;
  TenantPermit permit;  // each request counts against the key's limits, as an HTTP request
  Status s;
  if (draining_) s = Status(Errc::unavailable, "the server is shutting down");
  if (s.ok() && tenant_) s = tenant_->admit(permit);
  if (s.ok()) {
    s = co_await service_.infer(*request, ctx_, tenant_, *response.mutable_infer_response(), this);
  }
  log_access("ModelStreamInfer", request->model_name(), request->id(), tenant_, s, started);
  if (!s.ok()) {
    // Triton's stream errors: the message, the stream left open for the next request. The
    // request's id leads, so that a client with several in flight can tell which failed.
    response.clear_infer_response();
    std::string message;
    if (!request->id().empty()) message = "request '" + request->id() + "': ";
    message += s.message();
    response.set_error_message(std::move(message));
  }
  co_await send(std::move(response));
}

asio::awaitable<bool> StreamCall::send(ModelStreamInferResponse response) {
  while (writes_.size() >= kMaxQueuedWrites && !cancelled_ && !finished_) {
    room_.expires_at(asio::steady_timer::time_point::max());
    co_await room_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (cancelled_ || finished_) co_return false;
  writes_.push_back(std::move(response));
  if (!writing_) start_write();
  co_return true;
}

void StreamCall::start_write() {
  writing_ = true;
  StartWrite(&writes_.front());
}

void StreamCall::write_done(bool ok) {
  writing_ = false;
  writes_.pop_front();
  room_.cancel();
  if (!ok) {
    cancel();  // the client is gone
    return;
  }
  if (!writes_.empty() && !cancelled_) start_write();
  maybe_finish();
}

void StreamCall::cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  for (auto& signal : cancels_) signal.emit(asio::cancellation_type::terminal);
  room_.cancel();
  maybe_finish();
}

void StreamCall::maybe_finish() {
  if (finished_ || writing_ || in_flight_ > 0) return;
  if (!(reads_done_ || cancelled_ || draining_)) return;
  if (!writes_.empty() && !cancelled_) return;
  finished_ = true;
  if (cancelled_) {
    Finish(grpc::Status::CANCELLED);
  } else if (!reads_done_) {
    // Ended by the drain while the client may still send: what it sent after the last answer
    // was not read, and it should take further requests elsewhere.
    Finish(to_grpc(Status(Errc::unavailable, "the server is shutting down")));
  } else {
    Finish(grpc::Status::OK);
  }
}

}  // namespace

struct GrpcServer::State {
  State(asio::any_io_executor io_executor, ServerConfig server_config,
        const ModelRepository& repository, const AccessControl* access, ServerInfo info)
      : io(std::move(io_executor)),
        config(std::move(server_config)),
        service(io, config, repository, access, std::move(info)) {}
  asio::any_io_executor io;
  ServerConfig config;
  Service service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::optional<asio::executor_work_guard<asio::any_io_executor>> work;
  std::jthread stopper;
  std::once_flag stopping;
};

GrpcServer::GrpcServer(asio::any_io_executor io, ServerConfig config,
                       const ModelRepository& repository, const AccessControl* access,
                       ServerInfo info)
    : state_(std::make_unique<State>(std::move(io), std::move(config), repository, access,
                                     std::move(info))) {}

GrpcServer::~GrpcServer() {
  if (state_->server) {
    stop();
    state_->stopper = {};  // joins
  }
}

Status GrpcServer::start() {
  const ServerConfig& c = state_->config;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (!c.tls_cert_file.empty()) {
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({read_file(c.tls_key_file), read_file(c.tls_cert_file)});
    credentials = grpc::SslServerCredentials(tls);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }
  const bool v6 = c.host.find(':') != std::string::npos;
  const std::string address = (v6 ? "[" + c.host + "]" : c.host) + ":" + std::to_string(c.grpc_port);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &state_->port);
  builder.RegisterService(&state_->service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<std::size_t>(c.max_body_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(-1);
  // gRPC sets SO_REUSEPORT by default, which lets a second server bind a port in use and take
  // part of its connections: refused instead, as the HTTP port is.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  state_->server = builder.BuildAndStart();
  if (!state_->server || state_->port == 0) {
    state_->server.reset();
    return Status(Errc::unavailable, "gRPC: cannot listen on " + address);
  }
  state_->work.emplace(state_->io);
  return {};
}

std::uint16_t GrpcServer::port() const noexcept { return static_cast<std::uint16_t>(state_->port); }

void GrpcServer::stop() {
  if (!state_->server) return;
  std::call_once(state_->stopping, [this] {
    state_->service.drain();
    // Shutdown blocks until the calls in flight are done (they need the I/O threads), so it
    // runs on a thread of its own; then the I/O executor is released.
    state_->stopper = std::jthread([state = state_.get()] {
      state->server->Shutdown(std::chrono::system_clock::now() +
                              std::chrono::milliseconds(state->config.drain_timeout_ms));
      asio::post(state->io, [state] { state->work.reset(); });
    });
  });
}

}  // namespace coinfer
