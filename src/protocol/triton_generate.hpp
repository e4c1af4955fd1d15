#pragma once
// Triton's generate extension over the generation engine (docs/LLM.md, "Triton's generate"):
//   POST /v2/models/{model}/generate         {"text_input", "parameters"?: {...}} -> one JSON
//   POST /v2/models/{model}/generate_stream  the same, answered as Server-Sent Events
// and the same request as a /v2/ws message naming a language model (oip_routes.cpp).
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "coinfer/generation/generator.hpp"
#include "coinfer/net/router.hpp"
#include "coinfer/serving/cache_directives.hpp"

namespace coinfer {
class GenerationEndpoint;
class ModelRepository;
class Tenant;

void add_generate_routes(net::Router& router, const ModelRepository& repository);

// One /v2/ws message for `endpoint` (`id` the message's, `tenant` its connection's caller):
// with "stream": true each new piece of text goes out through `stream` as
// {"id", "model_name", "text_output"}, and `reply` is the last message, {"id", "model_name",
// "text_output", "finish_reason", "usage", "cache"?, "final": true} (all the text when not
// streaming; "cache" when the model has a response cache: "hit-exact", "hit-semantic" or
// "miss"; the message's "cache_namespace" and "cache_control" are X-Cache-Namespace's and
// Cache-Control's); an error is {"id", "error", "status"}, as for infer messages.
boost::asio::awaitable<void> generate_message(GenerationEndpoint& endpoint, const Tenant* tenant,
                                              std::string_view id, std::string_view message,
                                              std::size_t capacity, net::WebSocketStream* stream,
                                              std::string& reply);

// What a generate message came to: its status, its text (all of it; when streamed, the final
// update's), the final update (finish reason, usage) and what the response cache did.
struct GenerateResult {
  Status status;
  std::string text;
  generation::GenerationUpdate last;
  CacheOutcome cache;
  bool caching = false;  // the request went through the model's response cache
};
// Takes each new piece of text of a streamed generation; false stops it (the client left).
using GeneratePiece = std::function<boost::asio::awaitable<bool>(std::string_view)>;

// A generate request as a message (/v2/ws, a gRPC stream): the JSON object of the HTTP body
// ("text_input", the fields at the top level or in "parameters"; "id", "model_name" and
// "model_version" skipped, "cache_namespace" and "cache_control" for the response cache) run
// through `endpoint`. With "stream": true and a `piece`, each new piece of text goes to it as
// the engine produces it. `deadline_s` (> 0): the transport's deadline, in seconds from now,
// which a longer or missing "timeout" gives way to.
boost::asio::awaitable<void> run_generate_message(GenerationEndpoint& endpoint,
                                                  const Tenant* tenant, std::string_view message,
                                                  std::size_t capacity, double deadline_s,
                                                  const GeneratePiece* piece, GenerateResult& out);

}  // namespace coinfer
