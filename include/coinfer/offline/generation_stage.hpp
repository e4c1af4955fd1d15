#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer {
class GenerationEndpoint;
struct GenerationCall;
}  // namespace coinfer

namespace coinfer::offline {

// A batch job's language-model settings (coinfer-batch on a model of kind llm).
struct GenerationOptions {
  std::int32_t max_tokens = 64;  // per row
  bool chat = false;  // each row's text is a user message in the chat template, else a prompt
  int concurrency = 64;  // generations submitted at once (the engine batches them per step)
  std::string json_schema;  // not empty: every row's output follows this JSON schema
};

struct GeneratedText {
  Status error;            // not ok: the row is a dead letter with this reason
  std::string text;        // the completion
  std::string finish;      // "stop" or "length"
  std::int64_t completion_tokens = 0;
};

// A row's text into `out` (a default-constructed call) as a prepared greedy generation (GenerationEndpoint::prepare: the chat template
// when options.chat, tokenized, checked against the context). Thread-safe.
Status prepare_row(const GenerationEndpoint& endpoint, std::string_view text,
                   const GenerationOptions& options, GenerationCall& out);

// Runs the prepared calls through `endpoint`, `concurrency` at a time: the engine's continuous
// batching runs them together, step by step. Blocks until every one has finished; `out` gets
// one result per call, in order. Runs its own event loop on the calling thread (the engine's
// streams deliver to it).
void generate_all(GenerationEndpoint& endpoint, std::span<const GenerationCall> calls,
                  const GenerationOptions& options, std::vector<GeneratedText>& out);

}  // namespace coinfer::offline
