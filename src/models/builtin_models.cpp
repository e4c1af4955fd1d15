#include "coinfer/models/builtin_models.hpp"

#include "coinfer/models/identity_model.hpp"

namespace coinfer {

Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out) {
  if (config.kind == "identity") {
    out = std::make_shared<IdentityModel>(config.name, config.version, config.max_batch_size);
    return {};
  }
  return Status::invalid("models." + config.name + ".kind: unknown model kind '" + config.kind +
                         "' (known: identity)");
}

}  // namespace coinfer
