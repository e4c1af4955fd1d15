#pragma once

#include <memory>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"

namespace coinfer {

// Builds the model a [models.NAME] config section names by its `kind`.
// Kinds: "identity" (IdentityModel), "mlp" (Mlp, loaded from `weights`). Unknown kinds are an
// error naming the section.
Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out);

}  // namespace coinfer
