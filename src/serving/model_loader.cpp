#include "coinfer/serving/model_loader.hpp"

#include <spdlog/spdlog.h>

#include "coinfer/generation/generator.hpp"
#include "coinfer/generation/generator_kind.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {

Status load_servable(const ModelConfig& config, int compute_threads, LoadedServable& out) {
  out = LoadedServable{};
  std::string known;
  for (const auto& kind : generation::generator_kinds()) {
    if (kind.name == config.kind) return kind.load(config, compute_threads, out.generator);
    known += (known.empty() ? "" : ", ") + std::string(kind.name);
  }
  bool model_kind = false;
  for (const ModelKind* kind : builtin_model_kinds()) {
    model_kind = model_kind || kind->name == config.kind;
    known += ", " + std::string(kind->name);
  }
  if (!model_kind) {
    return Status::invalid("models." + config.name + ".kind: unknown model kind '" + config.kind +
                           "' (known: " + known + ")");
  }
  return make_model(config, out.model);
}

Status load_models(const Config& config, boost::asio::any_io_executor io, Executor& cpu,
                   ModelRepository& repository,
                   std::vector<std::unique_ptr<Executor>>& device_executors) {
  for (const ModelConfig& model_config : config.models) {
    LoadedServable loaded;
    if (auto s = load_servable(model_config, config.compute.threads, loaded); !s.ok()) return s;
    Status status;
    if (loaded.generator) {
      status = repository.add(model_config.name, std::move(loaded.generator), model_config.cache,
                              model_config.version);
    } else if (loaded.model.model) {
      Executor& runs_on = loaded.model.device_executor ? *loaded.model.device_executor : cpu;
      status = repository.add(std::make_unique<Endpoint>(std::move(loaded.model.model), io, runs_on,
                                                         batch_policy(model_config),
                                                         std::move(loaded.model.text)));
      if (loaded.model.device_executor)
        device_executors.push_back(std::move(loaded.model.device_executor));
    } else {
      continue;  // optional and not installed: the kind's loader said so
    }
    if (!status.ok()) return status;
    spdlog::info("model '{}' version {} ready", model_config.name, model_config.version);
  }
  return {};
}

}  // namespace coinfer
