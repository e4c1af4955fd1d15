// chat_service: a language model as a microservice. The template to copy for an LLM of your
// own: load a llama-architecture GGUF model by kind from a config, put its generation engine
// (continuous batching over a paged KV cache, on its own thread) behind OpenAI's routes,
// stream tokens as Server-Sent Events, drain on SIGTERM.
//
//   POST /v1/chat/completions      OpenAI (the `openai` package, curl -N, ...), "stream": true
//   POST /v1/completions
//   GET  /v1/models
//   POST /tokenize, /detokenize    vLLM's shape
//   GET  /metrics                  Prometheus (vLLM's metric names, coinfer_ prefix)
//   GET  /v2/health/live, /v2/health/ready
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>

#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/net/run_until_signalled.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/protocol/cache_routes.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/model_loader.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace asio = boost::asio;
using namespace coinfer;

int main(int argc, char** argv) {
  // The language model's decode steps are hundreds of short parallel regions: the compute
  // team spins briefly between them rather than sleeping (ops/compute_threads.hpp).
  ensure_compute_wait_policy(argv, ComputeWait::short_spin);
  CLI::App cli{"chat_service: an LLM with continuous batching and token streaming"};
  std::string config_path = "configs/chat_service.toml";
  std::optional<std::uint16_t> port;
  cli.add_option("--config", config_path, "TOML config file")->capture_default_str();
  cli.add_option("--port", port, "port to listen on, 0 = any free port");
  CLI11_PARSE(cli, argc, argv);

  // stdout carries only the "listening on" line; logs go to stderr.
  coinfer::log::configure("chat", {});

  Config config;
  if (auto status = load_config(config_path, config); !status.ok()) {
    std::fprintf(stderr, "chat_service: %s\n", status.message().c_str());
    return 2;
  }
  if (port) config.server.port = *port;
  coinfer::log::configure("chat", config.log);  // level, text or JSON, access log
  coinfer::log::effective_config(config_path, config);

  // The repository (and with it each engine's thread) goes before the io_context it posts to.
  asio::io_context io(config.server.io_threads);
  ModelRepository repository;
  for (const ModelConfig& model_config : config.models) {
    // Weights requantized to INT8, the tokenizer and the KV cache allocated once, here.
    LoadedServable loaded;
    Status status = load_servable(model_config, config.compute.threads, loaded);
    if (status.ok() && !loaded.generator) {
      status = loaded.empty()
                   ? Status::invalid("models." + model_config.name + ": weights not installed")
                   : Status::invalid("models." + model_config.name + ": kind '" +
                                     model_config.kind + "' is not a language model (\"llm\")");
    }
    if (status.ok())
      status = repository.add(model_config.name, std::move(loaded.generator), model_config.cache,
                              model_config.version);
    if (!status.ok()) {
      std::fprintf(stderr, "chat_service: %s\n", status.message().c_str());
      return 2;
    }
  }

  // The response cache of the models with cache = "exact" | "semantic" ([cache]); destroyed
  // before the endpoints it embeds with, after the last request (its last snapshot).
  std::unique_ptr<CacheStage> cache_stage;
  if (auto status = CacheStage::create(config, repository, cache_stage); !status.ok()) {
    std::fprintf(stderr, "%s: %s\n", "chat_service", status.message().c_str());
    return 2;
  }

  AccessControl access;  // API keys from [auth]; with none configured no key is asked for
  if (auto status = access.configure(config.auth); !status.ok()) {
    std::fprintf(stderr, "chat_service: %s\n", status.message().c_str());
    return 2;
  }
  net::Router router;
  router.set_access_control(&access);
  add_openai_routes(router, repository);  // completions, chat, models, tokenize, detokenize
  add_oip_routes(router, repository);     // health, /metrics
  add_cache_routes(router, repository);   // /v2/cache: stats and invalidation

  net::HttpServer server(io.get_executor(), config.server, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "chat_service: %s\n", status.message().c_str());
    return 1;
  }
  server.start();
  net::run_until_signalled(io, server, config.server);
  return 0;
}
