#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "coinfer/core/parameters.hpp"
#include "coinfer/core/tensor.hpp"
#include "coinfer/serving/cache_directives.hpp"

namespace coinfer {

// Where a request's time went in the pipeline (Endpoint::infer); zero for a stage it skipped.
// Adapters report it as Server-Timing (protocol/server_timing.hpp).
struct RequestTiming {
  using duration = std::chrono::steady_clock::duration;
  duration decode{};      // the wire request decoded (inputs written into the batch's rows)
  duration cache{};       // the response cache looked up
  duration preprocess{};  // text tokenized
  duration queue{};       // waiting in the batcher
  duration compute{};     // the forward pass of the request's batch
};

// A protocol-neutral inference request, as decoded from the wire.
struct InferRequest {
  std::string id;          // echoed in the response; empty when the client sent none
  Parameters parameters;   // passed through to the model
  // One tensor per model input, in the model's metadata order (the decoder reorders).
  std::vector<Tensor> inputs;
  // Indices into the model's outputs that the client asked for; empty = all outputs.
  std::vector<std::size_t> requested_outputs;
  // By model output: 1 = send it as binary tensor data (the request parameter
  // "binary_data_output", or the output's own "parameters": {"binary_data": true}); empty
  // when every output goes as JSON.
  std::vector<std::uint8_t> binary_outputs;
  // Text endpoints: rows already tokenized by the client (OpenAI's token-id "input"), used
  // instead of the text input when not empty.
  std::vector<std::vector<std::int32_t>> token_ids;
  // Set by the pipeline: the token ids the model received for this request (text endpoints).
  std::int64_t token_count = 0;
  // The response cache, at endpoints with one: the request's namespace and Cache-Control
  // (null: its adapter reads no headers; the cache is not used), and what it did.
  const CacheDirectives* cache = nullptr;
  CacheOutcome cache_outcome;
  RequestTiming timing;  // set by the pipeline
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  Parameters parameters;
  // One tensor per model output, in the model's metadata order.
  std::vector<Tensor> outputs;
};

}  // namespace coinfer
