#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer::generation {

class Generator;

// A kind of [models.NAME] section served by a generation engine rather than an Endpoint, and
// how to build it (the language-model side of the model-kind registry, models/model_kind.hpp).
// `compute_threads` is the [compute] pool size the engine's thread uses. `out` stays null,
// with ok, when the section says `optional = true` and its weights are absent.
struct GeneratorKind {
  std::string_view name;
  Status (*load)(const ModelConfig& config, int compute_threads, std::unique_ptr<Generator>& out);
};

// The built-in generator kinds: "llm" (llm_kind.hpp).
std::span<const GeneratorKind> generator_kinds() noexcept;

}  // namespace coinfer::generation
