// coinfer-serve: the default inference service. Loads a TOML config, serves its models over
// the Open Inference Protocol v2 (HTTP/1.1, WebSocket and gRPC) and OpenAI's API, and drains
// in-flight requests on SIGINT/SIGTERM.
//
// Copy this file to start your own service: everything it does is a few library calls.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/net/run_until_signalled.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/protocol/cache_routes.hpp"
#include "coinfer/protocol/grpc_server.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/model_loader.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace asio = boost::asio;
using namespace coinfer;

int main(int argc, char** argv) {
  // The language model's decode steps are hundreds of short parallel regions: the compute
  // team spins briefly between them rather than sleeping (ops/compute_threads.hpp).
  ensure_compute_wait_policy(argv, ComputeWait::short_spin);
  CLI::App cli{"coinfer-serve: serve models over the Open Inference Protocol v2"};
  std::string config_path = "configs/default.toml";
  std::optional<std::string> host;
  std::optional<std::uint16_t> port;
  std::optional<int> grpc_port;
  std::optional<int> threads;
  std::vector<std::string> only_models;
  cli.add_option("--config", config_path, "TOML config file")->capture_default_str();
  cli.add_option("--host", host, "address to listen on (overrides server.host)");
  cli.add_option("--port", port, "port to listen on, 0 = any free port (overrides server.port)");
  cli.add_option("--grpc-port", grpc_port,
                 "gRPC port, 0 = any free port, -1 = off (overrides server.grpc_port)")
      ->check(CLI::Range(-1, 65535));
  cli.add_option("--threads", threads, "I/O threads (overrides server.io_threads)")
      ->check(CLI::Range(1, 256));
  cli.add_option("--model", only_models,
                 "load only this model of the config (repeatable; default: every model)");
  CLI11_PARSE(cli, argc, argv);

  // stdout carries only the "listening on" line; logs go to stderr.
  coinfer::log::configure("coinfer", {});

  Config config;
  if (auto status = load_config(config_path, config); !status.ok()) {
    std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
    return 2;
  }
  if (host) config.server.host = *host;
  if (port) config.server.port = *port;
  if (grpc_port) config.server.grpc_port = *grpc_port;
  if (threads) config.server.io_threads = *threads;
  if (auto status = keep_only_models(only_models, config); !status.ok()) {
    std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
    return 2;
  }
  coinfer::log::configure("coinfer", config.log);  // level, text or JSON, access log
  coinfer::log::effective_config(config_path, config);

  // Destroyed in reverse: the executor joins its threads before the endpoints it runs go.
  asio::io_context io(config.server.io_threads);
  ModelRepository repository;
  CpuExecutor executor(config.compute.threads);  // compute pool, apart from the I/O threads
  std::vector<std::unique_ptr<Executor>> device_executors;  // e.g. a CudaExecutor per GPU model
  if (auto status = load_models(config, io.get_executor(), executor, repository, device_executors);
      !status.ok()) {
    std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
    return 2;
  }

  // The response cache of the models with cache = "exact" | "semantic" ([cache]); destroyed
  // before the endpoints it embeds with, after the last request (its last snapshot).
  std::unique_ptr<CacheStage> cache_stage;
  if (auto status = CacheStage::create(config, repository, cache_stage); !status.ok()) {
    std::fprintf(stderr, "%s: %s\n", "coinfer-serve", status.message().c_str());
    return 2;
  }

  AccessControl access;  // API keys from [auth]; with none configured no key is asked for
  if (auto status = access.configure(config.auth); !status.ok()) {
    std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
    return 2;
  }
  net::Router router;
  router.set_access_control(&access);
  add_oip_routes(router, repository);
  add_openai_routes(router, repository);  // /v1/embeddings, completions, chat, models, tokenize
  add_cache_routes(router, repository);   // /v2/cache: stats and invalidation
  net::HttpServer server(io.get_executor(), config.server, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
    return 1;
  }
  // The same models over gRPC (Triton's GRPCInferenceService), unless grpc_port = -1.
  std::unique_ptr<GrpcServer> grpc;
  std::vector<net::Listener> listeners;
  if (config.server.grpc_port >= 0) {
    grpc = std::make_unique<GrpcServer>(io.get_executor(), config.server, repository, &access);
    if (auto status = grpc->start(); !status.ok()) {
      std::fprintf(stderr, "coinfer-serve: %s\n", status.message().c_str());
      return 1;
    }
    listeners.push_back({std::string(config.server.tls_cert_file.empty() ? "grpc" : "grpcs") +
                             "://" + config.server.host + ":" + std::to_string(grpc->port()),
                         [&grpc] { grpc->stop(); }});
  }
  server.start();

  net::run_until_signalled(io, server, config.server, listeners);
  return 0;
}
