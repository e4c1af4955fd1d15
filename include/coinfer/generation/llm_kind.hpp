#pragma once

#include <memory>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer::generation {

class Engine;

// Builds the generation engine of a [models.NAME] section of kind "llm": a llama-architecture
// GGUF file (`weights`), its BPE tokenizer and chat template, and the engine's settings (see
// docs/CONFIG.md). `compute_threads` is the [compute] pool size the engine's thread uses.
// `out` stays null, with ok, when the section says `optional = true` and the weights file is
// absent (a model package not installed).
Status make_generator(const ModelConfig& config, int compute_threads, std::unique_ptr<Engine>& out);

}  // namespace coinfer::generation
