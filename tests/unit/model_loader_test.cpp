#include "coinfer/serving/model_loader.hpp"

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include "coinfer/generation/generator.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/model_repository.hpp"

using namespace coinfer;

namespace {
Config parsed(const std::string& toml) {
  Config config;
  const Status status = parse_config(toml, config);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return config;
}
}  // namespace

TEST_CASE("model loader: an unknown kind is refused naming every kind, the language model's too") {
  const Config config = parsed("[models.m]\nkind = \"gpt\"\n");
  LoadedServable loaded;
  CHECK(load_servable(config.models[0], 1, loaded).message() ==
        "models.m.kind: unknown model kind 'gpt' (known: llm, identity, mlp, sentence_embedding, cross_encoder)");
  CHECK(loaded.empty());
}

TEST_CASE("model loader: a kind's own errors come through with its section's name") {
  const Config config = parsed("[models.m]\nkind = \"llm\"\nweights = \"/nonexistent.gguf\"\n");
  LoadedServable loaded;
  CHECK(load_servable(config.models[0], 1, loaded).message().find("models.m.weights: ") == 0);
  const Config gpu = parsed(
      "[models.m]\nkind = \"llm\"\ndevice = \"cuda:0\"\nprecision = \"int4\"\n"
      "weights = \"/nonexistent.gguf\"\n");
#ifdef COINFER_HAVE_CUDA
  CHECK(load_servable(gpu.models[0], 1, loaded).message() ==
        "models.m.precision: \"int4\" runs on the CPU only; on CUDA the model is INT8 (\"auto\" "
        "or \"int8\")");
#else
  CHECK(load_servable(gpu.models[0], 1, loaded).message() ==
        "models.m.device: cuda:0 requested but this build has no CUDA");
#endif
  const Config gpu_activations = parsed(
      "[models.m]\nkind = \"llm\"\ndevice = \"cuda:0\"\nactivations = \"int16\"\n"
      "weights = \"/nonexistent.gguf\"\n");
#ifdef COINFER_HAVE_CUDA
  CHECK(load_servable(gpu_activations.models[0], 1, loaded).message() ==
        "models.m.activations: \"int16\" runs on the CPU only; on CUDA the activations are INT8");
#else
  CHECK(load_servable(gpu_activations.models[0], 1, loaded).message() ==
        "models.m.device: cuda:0 requested but this build has no CUDA");
#endif
  const Config device_key = parsed(
      "[models.m]\nkind = \"llm\"\ngpu_memory_utilization = 0.5\nweights = \"w.gguf\"\n");
  CHECK(load_servable(device_key.models[0], 1, loaded).message() ==
        "models.m.gpu_memory_utilization: unknown key for kind 'llm'");
  const Config pairs = parsed("[models.v]\nkind = \"cross_encoder\"\nweights = \"w\"\n");
  CHECK(load_servable(pairs.models[0], 1, loaded).message() ==
        "models.v.adapter: required for kind 'cross_encoder' (a safetensors file)");
  const Config missing = parsed(
      "[models.v]\nkind = \"cross_encoder\"\nweights = \"/nonexistent.safetensors\"\n"
      "adapter = \"/nonexistent-adapter.safetensors\"\n");
  // The vocabulary (by default next to the weights) is read first.
  CHECK(load_servable(missing.models[0], 1, loaded).message() ==
        "models.v.vocab: /vocab.txt: cannot open the vocabulary");
}

TEST_CASE(
    "model loader: load_models serves endpoints and skips an optional language model that is not "
    "installed") {
  const Config config = parsed(
      "[models.id]\nkind = \"identity\"\n"
      "[models.lm]\nkind = \"llm\"\nweights = \"/nonexistent.gguf\"\noptional = true\n");
  boost::asio::io_context io;
  ModelRepository repository;
  CpuExecutor cpu(1);
  std::vector<std::unique_ptr<Executor>> device_executors;
  REQUIRE(load_models(config, io.get_executor(), cpu, repository, device_executors).ok());
  CHECK(repository.endpoints().size() == 1);
  CHECK(repository.language_models().empty());
  CHECK(device_executors.empty());
  Endpoint* endpoint = nullptr;
  CHECK(repository.find("id", "", nullptr, endpoint).ok());
}

TEST_CASE("model loader: load_models stops at the first section that fails, naming it") {
  const Config config =
      parsed("[models.a]\nkind = \"identity\"\n[models.b]\nkind = \"identity\"\ncolour = 1\n");
  boost::asio::io_context io;
  ModelRepository repository;
  CpuExecutor cpu(1);
  std::vector<std::unique_ptr<Executor>> device_executors;
  CHECK(load_models(config, io.get_executor(), cpu, repository, device_executors).message() ==
        "models.b.colour: unknown key for kind 'identity'");
}
