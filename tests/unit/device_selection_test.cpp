#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "coinfer/core/config.hpp"
#include "coinfer/models/builtin_models.hpp"

using namespace coinfer;

namespace {

ModelConfig digits_on(std::string device) {
  ModelConfig config;
  config.name = "digits";
  config.kind = "mlp";
  config.weights = COINFER_SOURCE_DIR "/assets/digits_mlp/model.safetensors";
  config.max_batch_size = 64;
  config.device = std::move(device);
  return config;
}

}  // namespace

TEST_CASE("device cuda:0 without a usable GPU fails at startup with a clear message") {
  std::shared_ptr<Model> model;
  std::unique_ptr<Executor> executor;
  const Status s = make_builtin_model(digits_on("cuda:0"), model, executor);
  if (s.ok()) {
    // A GPU machine with the full build: the model and its executor came up.
    CHECK(model != nullptr);
    CHECK(executor != nullptr);
    return;
  }
  MESSAGE(s.message());
  CHECK(s.code() == Errc::unavailable);
  CHECK(s.message().rfind("models.digits.device: cuda:0 requested but ", 0) == 0);
  const bool explained = s.message().find("this build has no CUDA") != std::string::npos ||
                         s.message().find("no CUDA device found") != std::string::npos;
  CHECK(explained);
  CHECK(model == nullptr);
  CHECK(executor == nullptr);
}

TEST_CASE("device cpu builds the CPU model and no executor of its own") {
  std::shared_ptr<Model> model;
  std::unique_ptr<Executor> executor;
  REQUIRE(make_builtin_model(digits_on("cpu"), model, executor).ok());
  CHECK(model->metadata().platform == "coinfer_mlp");
  CHECK(executor == nullptr);
}

TEST_CASE("an unknown device or a GPU identity model is refused by key") {
  std::shared_ptr<Model> model;
  std::unique_ptr<Executor> executor;
  CHECK(make_builtin_model(digits_on("tpu:0"), model, executor).message() ==
        "models.digits.device: unknown device 'tpu:0' (known: cpu, cuda, cuda:N)");
  ModelConfig identity = digits_on("cuda:0");
  identity.kind = "identity";
  CHECK(make_builtin_model(identity, model, executor).message() ==
        "models.digits.device: cuda:0 is supported for kind 'mlp' only");
}
