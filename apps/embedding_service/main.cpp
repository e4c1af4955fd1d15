// embedding_service: text embeddings as a microservice. The template to copy for a text
// model of your own: load it by kind from a config (a BERT encoder behind its WordPiece
// tokenizer), put the endpoint's pipeline (tokenize -> ragged dynamic batching -> INT8
// compute) behind OpenAI's and the Open Inference Protocol's routes, drain on SIGTERM.
//
//   POST /v1/embeddings            OpenAI (the `openai` package, curl, ...)
//   GET  /v1/models
//   POST /tokenize, /detokenize    vLLM's shape
//   POST /v2/models/minilm/infer   OIP v2 with the BYTES input "text"
//   GET  /metrics                  Prometheus
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>

#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/net/run_until_signalled.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace asio = boost::asio;
using namespace coinfer;

int main(int argc, char** argv) {
  // Idle compute threads sleep rather than spin: they share cores with the I/O threads.
  ensure_compute_wait_policy(argv, ComputeWait::passive);
  CLI::App cli{"embedding_service: sentence embeddings with ragged dynamic batching"};
  std::string config_path = "configs/embedding_service.toml";
  std::optional<std::uint16_t> port;
  cli.add_option("--config", config_path, "TOML config file")->capture_default_str();
  cli.add_option("--port", port, "port to listen on, 0 = any free port");
  CLI11_PARSE(cli, argc, argv);

  // stdout carries only the "listening on" line; logs go to stderr.
  coinfer::log::configure("embedding", {});

  Config config;
  if (auto status = load_config(config_path, config); !status.ok()) {
    std::fprintf(stderr, "embedding_service: %s\n", status.message().c_str());
    return 2;
  }
  if (port) config.server.port = *port;
  coinfer::log::configure("embedding", config.log);  // level, text or JSON, access log
  coinfer::log::effective_config(config_path, config);

  // Destroyed in reverse: the executor joins before the endpoints it runs go.
  asio::io_context io(config.server.io_threads);
  ModelRepository repository;
  CpuExecutor executor(config.compute.threads);
  for (const ModelConfig& model_config : config.models) {
    // Weights quantized to INT8 and the vocabulary loaded once, here, before any request.
    LoadedModel loaded;
    Status status = make_model(model_config, loaded);
    if (status.ok() && !loaded.text) {
      status = Status::invalid("models." + model_config.name + ": kind '" + model_config.kind +
                               "' does not take text");
    }
    if (status.ok() && loaded.device_executor) {
      status =
          Status::invalid("models." + model_config.name + ".device: this service runs on the CPU");
    }
    if (status.ok()) {
      status = repository.add(std::make_unique<Endpoint>(std::move(loaded.model), io.get_executor(),
                                                         executor, batch_policy(model_config),
                                                         std::move(loaded.text)));
    }
    if (!status.ok()) {
      std::fprintf(stderr, "embedding_service: %s\n", status.message().c_str());
      return 2;
    }
  }

  AccessControl access;  // API keys from [auth]; with none configured no key is asked for
  if (auto status = access.configure(config.auth); !status.ok()) {
    std::fprintf(stderr, "embedding_service: %s\n", status.message().c_str());
    return 2;
  }
  net::Router router;
  router.set_access_control(&access);
  add_openai_routes(router, repository);  // /v1/embeddings, /v1/models, /tokenize, /detokenize
  add_oip_routes(router, repository);     // /v2/..., /metrics

  net::HttpServer server(io.get_executor(), config.server, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "embedding_service: %s\n", status.message().c_str());
    return 1;
  }
  server.start();
  net::run_until_signalled(io, server, config.server);
  return 0;
}
