#include "coinfer/models/builtin_models.hpp"

#include "coinfer/models/identity_model.hpp"
#include "coinfer/models/mlp.hpp"

namespace coinfer {

Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out) {
  if (config.kind == "identity") {
    out = std::make_shared<IdentityModel>(config.name, config.version, config.max_batch_size);
    return {};
  }
  if (config.kind == "mlp") {
    if (config.weights.empty()) {
      return Status::invalid("models." + config.name +
                             ".weights: required for kind 'mlp' (a safetensors file)");
    }
    std::unique_ptr<Mlp> mlp;
    if (auto status =
            Mlp::load(config.weights, config.name, config.version, config.max_batch_size, mlp);
        !status) {
      return Status(status.code(), "models." + config.name + ".weights: " + status.message());
    }
    out = std::move(mlp);
    return {};
  }
  return Status::invalid("models." + config.name + ".kind: unknown model kind '" + config.kind +
                         "' (known: identity, mlp)");
}

}  // namespace coinfer
