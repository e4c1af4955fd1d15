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
  LoadedModel loaded;
  const Status s = make_model(digits_on("cuda:0"), loaded);
  if (s.ok()) {
    // A GPU machine with the full build: the model and its executor came up.
    CHECK(loaded.model != nullptr);
    CHECK(loaded.device_executor != nullptr);
    return;
  }
  MESSAGE(s.message());
  CHECK(s.code() == Errc::unavailable);
  CHECK(s.message().rfind("models.digits.device: cuda:0 requested but ", 0) == 0);
  const bool explained = s.message().find("this build has no CUDA") != std::string::npos ||
                         s.message().find("no CUDA device found") != std::string::npos;
  CHECK(explained);
  CHECK(loaded.model == nullptr);
  CHECK(loaded.device_executor == nullptr);
}

TEST_CASE("sentence embeddings on cuda:0 without a usable GPU fail at startup by key") {
  ModelConfig config;
  config.name = "minilm";
  config.kind = "sentence_embedding";
  config.weights = COINFER_SOURCE_DIR "/assets/all-MiniLM-L6-v2/model.safetensors";
  config.max_batch_size = 64;
  config.device = "cuda:0";
  LoadedModel loaded;
  const Status s = make_model(config, loaded);
  if (s.ok()) {  // a GPU machine with the full build
    CHECK(loaded.model->metadata().platform == "coinfer_bert_encoder_cuda");
    CHECK(loaded.device_executor != nullptr);
    CHECK(loaded.text.has_value());
    return;
  }
  MESSAGE(s.message());
  CHECK(s.code() == Errc::unavailable);
  CHECK(s.message().rfind("models.minilm.device: cuda:0 requested but ", 0) == 0);
  CHECK(loaded.model == nullptr);
  CHECK(loaded.device_executor == nullptr);
}

TEST_CASE("device cpu builds the CPU model and no executor of its own") {
  LoadedModel loaded;
  REQUIRE(make_model(digits_on("cpu"), loaded).ok());
  CHECK(loaded.model->metadata().platform == "coinfer_mlp");
  CHECK(loaded.device_executor == nullptr);
  CHECK(!loaded.text);
}

TEST_CASE("an unknown device or a GPU identity model is refused by key") {
  LoadedModel loaded;
  CHECK(make_model(digits_on("tpu:0"), loaded).message() ==
        "models.digits.device: unknown device 'tpu:0' (known: cpu, cuda, cuda:N)");
  ModelConfig identity = digits_on("cuda:0");
  identity.kind = "identity";
  CHECK(make_model(identity, loaded).message() ==
        "models.digits.device: cuda:0 is supported for kind 'mlp', 'sentence_embedding' only");
}

TEST_CASE("a kind rejects a key it does not know, by its full name") {
  ModelConfig config = digits_on("cpu");
  config.options.emplace_back("colour", std::string("blue"));
  LoadedModel loaded;
  CHECK(make_model(config, loaded).message() == "models.digits.colour: unknown key for kind 'mlp'");
  CHECK(loaded.model == nullptr);
}
