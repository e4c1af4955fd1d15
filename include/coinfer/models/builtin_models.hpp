#pragma once

#include <memory>
#include <span>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/models/model_kind.hpp"

namespace coinfer {

// The kinds coinfer ships, each defined next to its model; adding one is a loader in its own
// file and a line in builtin_model_kinds() (src/models/builtin_models.cpp).
//   identity            IdentityModel: the protocol test model
//   mlp                 Mlp from `weights` (safetensors); device "cuda:N" builds a CudaMlp
//   sentence_embedding  BertEncoder + WordPiece: text in, L2-normalized embeddings out
//   cross_encoder       BertEncoder with a pair adapter: two texts in, a score out
extern const ModelKind identity_kind;
extern const ModelKind mlp_kind;
extern const ModelKind sentence_embedding_kind;
extern const ModelKind cross_encoder_kind;
std::span<const ModelKind* const> builtin_model_kinds() noexcept;

// Builds the model a [models.NAME] config section names by its `kind`, from `kinds`. Unknown
// kinds, unknown keys of the kind and bad values are errors naming the key. A device other
// than "cpu" fails at startup when the kind or the build cannot honour it: "models.NAME.device:
// cuda:0 requested but this build has no CUDA", or "... but no CUDA device found (...)".
Status make_model(const ModelConfig& config, LoadedModel& out,
                  std::span<const ModelKind* const> kinds = builtin_model_kinds());

// The same for callers that run every model on one CpuExecutor (device "cpu" only) and need
// no text front.
Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out);

}  // namespace coinfer
