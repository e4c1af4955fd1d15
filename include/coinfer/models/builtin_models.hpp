#pragma once

#include <memory>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/runtime/executor.hpp"

namespace coinfer {

// Builds the model a [models.NAME] config section names by its `kind`.
// Kinds: "identity" (IdentityModel), "mlp" (Mlp, loaded from `weights`). Unknown kinds are an
// error naming the section.
//
// `device` "cpu" builds a model for the caller's CpuExecutor and leaves `device_executor`
// null. "cuda:N" (kind "mlp" only) builds a CudaMlp and the CudaExecutor that must run it,
// returned in `device_executor`: the caller owns it, hands it to the model's endpoint, and
// destroys it before the endpoint (it joins its threads, which run the endpoint's batches).
// Without CUDA it fails at startup: "models.NAME.device: cuda:0 requested but this build has
// no CUDA" or "... but no CUDA device found (...)".
Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out,
                          std::unique_ptr<Executor>& device_executor);

// The same for callers that run every model on one CpuExecutor: device "cpu" only.
Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out);

}  // namespace coinfer
