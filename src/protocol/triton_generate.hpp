#pragma once
// Triton's generate extension over the generation engine (docs/LLM.md, "Triton's generate"):
//   POST /v2/models/{model}/generate         {"text_input", "parameters"?: {...}} -> one JSON
//   POST /v2/models/{model}/generate_stream  the same, answered as Server-Sent Events
// and the same request as a /v2/ws message naming a language model (oip_routes.cpp).
#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "coinfer/net/router.hpp"

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

}  // namespace coinfer
