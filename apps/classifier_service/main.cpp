// classifier_service: a digit classifier as a microservice. The template to copy for a
// service of your own: load a model, put a dynamic batcher in front of it, serve it over the
// Open Inference Protocol v2 and over a route of your own design, drain on SIGTERM.
//
//   POST /v2/models/digits/infer   OIP v2 (tritonclient, curl, ...)
//   POST /v1/classify              {"pixels": [64 numbers 0..16]} -> {"label": 3, "probability":
//   0.99} GET  /metrics                  Prometheus
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>

#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/models/mlp.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/net/run_until_signalled.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/protocol/server_timing.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace asio = boost::asio;
using namespace coinfer;

namespace {

constexpr std::int64_t kPixels = 64;

// The custom route's wire format, decoded in place: the pixels go straight into this
// request's row of the batcher's staging buffer (the sink), as the OIP decoder's elements do.
class ClassifyDecoder final : public RequestDecoder {
 public:
  explicit ClassifyDecoder(const net::HttpRequest& req) : req_(req) {}
  Status decode(const ModelMetadata&, InferRequest& request, InputSink* sink) override {
    thread_local simdjson::ondemand::parser parser;  // reused buffers, one per I/O thread
    simdjson::ondemand::document doc;
    simdjson::ondemand::array pixels;
    if (parser.iterate(req_.body.data(), req_.body.size(), req_.body_capacity).get(doc) ||
        doc["pixels"].get_array().get(pixels)) {
      return Status::invalid("body must be {\"pixels\": [64 numbers]}");
    }
    const Shape shape{1, kPixels};
    std::span<std::byte> destination;
    if (auto status = sink->allocate({&shape, 1}, request.parameters, {&destination, 1}); !status) {
      return status;  // e.g. a full queue
    }
    auto* row = reinterpret_cast<float*>(destination.data());
    std::int64_t count = 0;
    for (auto element : pixels) {
      double value = 0;
      if (count == kPixels || element.get_double().get(value)) {
        return Status::invalid("pixels: expected exactly 64 numbers");  // the row is given back
      }
      row[count++] = static_cast<float>(value);
    }
    if (count != kPixels) {
      return Status::invalid("pixels: expected 64 numbers, got " + std::to_string(count));
    }
    return {};
  }

 private:
  const net::HttpRequest& req_;
};

// The custom route: the endpoint's pipeline (limits, batching, metrics) with this route's
// decoder, then an answer with the top class.
asio::awaitable<void> classify(Endpoint& endpoint, const net::HttpRequest& req,
                               net::HttpResponse& res) {
  if (req.tenant && !req.tenant->may_use(endpoint.metadata().name)) {
    res.error(403, req.tenant->forbidden(endpoint.metadata().name).message());
    co_return;
  }
  ClassifyDecoder decoder(req);
  InferRequest request;
  BatchTicket ticket;
  const Status status = co_await endpoint.infer(decoder, request, ticket);
  if (!status.ok()) {
    res.error(http_status(status.code()), status.message());
    if (status.code() == Errc::unavailable) res.headers.emplace_back("Retry-After", "1");
    co_return;
  }
  const auto encode_started = std::chrono::steady_clock::now();
  const auto label = ticket.outputs()[1].values<std::int64_t>()[0];
  const auto probability = ticket.outputs()[0].values<float>()[static_cast<std::size_t>(label)];
  res.body += "{\"label\":";
  json_append_number(res.body, label);
  res.body += ",\"probability\":";
  json_append_number(res.body, probability);
  res.body += '}';
  add_server_timing(request.timing, std::chrono::steady_clock::now() - encode_started, res.timing);
}

}  // namespace

int main(int argc, char** argv) {
  // Idle compute threads sleep rather than spin: they share cores with the I/O threads.
  ensure_compute_wait_policy(argv, ComputeWait::passive);
  CLI::App cli{"classifier_service: digits classifier with dynamic batching"};
  std::string config_path = "configs/classifier_service.toml";
  std::optional<std::uint16_t> port;
  cli.add_option("--config", config_path, "TOML config file")->capture_default_str();
  cli.add_option("--port", port, "port to listen on, 0 = any free port");
  CLI11_PARSE(cli, argc, argv);

  // stdout carries only the "listening on" line; logs go to stderr.
  coinfer::log::configure("classifier", {});

  Config config;
  if (auto status = load_config(config_path, config); !status.ok()) {
    std::fprintf(stderr, "classifier_service: %s\n", status.message().c_str());
    return 2;
  }
  if (port) config.server.port = *port;
  const auto model_config = std::find_if(config.models.begin(), config.models.end(),
                                         [](const ModelConfig& m) { return m.name == "digits"; });
  if (model_config == config.models.end()) {
    std::fprintf(stderr, "classifier_service: %s has no [models.digits]\n", config_path.c_str());
    return 2;
  }
  coinfer::log::configure("classifier", config.log);  // level, text or JSON, access log
  coinfer::log::effective_config(config_path, config);

  // The model: weights quantized to INT8 once, here, before the first request.
  std::unique_ptr<Mlp> mlp;
  if (auto status = Mlp::load(model_config->weights, "digits", model_config->version,
                              model_config->max_batch_size, mlp);
      !status.ok()) {
    std::fprintf(stderr, "classifier_service: %s\n", status.message().c_str());
    return 2;
  }

  // Destroyed in reverse: the executor joins before the endpoint it runs goes.
  asio::io_context io(config.server.io_threads);
  ModelRepository repository;
  CpuExecutor executor(config.compute.threads);
  auto endpoint = std::make_unique<Endpoint>(std::move(mlp), io.get_executor(), executor,
                                             batch_policy(*model_config));
  Endpoint& digits = *endpoint;
  if (auto status = repository.add(std::move(endpoint)); !status.ok()) return 2;

  AccessControl access;  // API keys from [auth]; with none configured no key is asked for
  if (auto status = access.configure(config.auth); !status.ok()) {
    std::fprintf(stderr, "classifier_service: %s\n", status.message().c_str());
    return 2;
  }
  net::Router router;
  router.set_access_control(&access);
  add_oip_routes(router, repository);  // /v2/..., /metrics
  router.add(net::Method::post, "/v1/classify",
             net::AsyncHandler([&digits](const net::HttpRequest& req, net::HttpResponse& res) {
               return classify(digits, req, res);
             }));

  net::HttpServer server(io.get_executor(), config.server, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "classifier_service: %s\n", status.message().c_str());
    return 1;
  }
  server.start();
  net::run_until_signalled(io, server, config.server);
  return 0;
}
