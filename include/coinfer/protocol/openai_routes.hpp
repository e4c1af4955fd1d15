#pragma once

#include "coinfer/net/router.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {

// Registers OpenAI-compatible routes and vLLM's tokenizer routes on `router`:
//   POST /v1/embeddings   {"model", "input": string | [string] | [int] | [[int]],
//                          "encoding_format"?: "float" | "base64", "user"?, "truncate"?}
//                         -> {"object": "list", "data": [{"object": "embedding", "index",
//                             "embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}
//   GET  /v1/models       every served model, OpenAI's list shape
//   POST /tokenize        {"model", "prompt"} -> {"tokens", "count", "max_model_len"}
//   POST /detokenize      {"model", "tokens"} -> {"prompt"}
// Embedding requests run through the model's endpoint pipeline (Endpoint::infer): the same
// limits, batching and metrics as OIP. Options OpenAI defines that coinfer does not support
// (e.g. "dimensions") are refused with 400 naming them. Errors come in OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}, which its clients read. `repository` must
// outlive the router.
void add_openai_routes(net::Router& router, const ModelRepository& repository);

}  // namespace coinfer
