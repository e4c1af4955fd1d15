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
// Language models (ModelRepository::generators()) also get, through
// add_openai_completion_routes:
//   POST /v1/completions       {"model", "prompt": string | [int], "max_tokens"?, "stream"?, ...}
//   POST /v1/chat/completions  {"model", "messages": [{"role", "content"}], ...}
// OpenAI's fields (temperature, top_p, seed, stop, presence/frequency penalties, logprobs,
// stream_options.include_usage, n = 1) and vLLM's (top_k, min_p, repetition_penalty,
// min_tokens, ignore_eos, stop_token_ids, skip_special_tokens, priority), plus "timeout" in
// seconds; any other field is a 400 naming it. With "stream": true the answer is Server-Sent
// Events (`data: {chunk}` ... `data: [DONE]`), one event per engine step.
void add_openai_routes(net::Router& router, const ModelRepository& repository);
void add_openai_completion_routes(net::Router& router, const ModelRepository& repository);

}  // namespace coinfer
