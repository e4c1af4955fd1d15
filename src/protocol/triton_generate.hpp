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
class ModelRepository;
namespace generation {
class Generator;
}

void add_generate_routes(net::Router& router, const ModelRepository& repository);

// One /v2/ws message for `engine` (`model` its name, `id` the message's): with
// "stream": true each new piece of text goes out through `stream` as
// {"id", "model_name", "text_output"}, and `reply` is the last message, {"id", "model_name",
// "text_output", "finish_reason", "usage", "final": true} (all the text when not streaming);
// an error is {"id", "error", "status"}, as for infer messages.
boost::asio::awaitable<void> generate_message(generation::Generator& engine,
                                              std::string_view model, std::string_view id,
                                              std::string_view message, std::size_t capacity,
                                              net::WebSocketStream* stream, std::string& reply);

}  // namespace coinfer
