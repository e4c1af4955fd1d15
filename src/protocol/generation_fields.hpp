#pragma once
// What the text-generation protocols share (OpenAI's completions in openai_completions.cpp,
// Triton's generate extension in triton_generate.cpp): reading the generation fields of a
// request into a GenerationCall (serving/generation_call.hpp), and how a generation finished.
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/net/http_message.hpp"
#include "coinfer/serving/generation_endpoint.hpp"

namespace coinfer::generation_fields {

Status read_string(simdjson::ondemand::value& value, std::string_view key, std::string& out);
Status read_bool(simdjson::ondemand::value& value, std::string_view key, bool& out);
// A finite number in [min, max]; an integer when T is one.
template <class T>
Status read_number(simdjson::ondemand::value& value, std::string_view key, T& out, double min,
                   double max);

// An array of token ids (0..INT32_MAX) appended to `out`; `what` names the error.
Status read_token_ids(simdjson::ondemand::value& value, std::string_view what,
                      std::vector<std::int32_t>& out);

// Reads `key` into `out` when it is one of the fields every generation protocol takes
// (max_tokens, min_tokens, the sampling parameters, seed, stop, stop_token_ids, ignore_eos,
// skip_special_tokens, priority, timeout, and a structured output: response_format,
// structured_outputs, guided_json/regex/choice/grammar) and sets `known`; errors name the key.
Status read_field(std::string_view key, simdjson::ondemand::value& value, GenerationCall& out,
                  bool& known);

// ok for stop and length; the error a timeout, a shutdown or a failure reports.
Status finish_status(const generation::GenerationUpdate& update);

// The head of a Server-Sent Events response: text/event-stream, not cached, not buffered by
// a proxy (nginx's X-Accel-Buffering).
net::HttpResponse event_stream_head();

// OpenAI's usage object, "usage":{"prompt_tokens",...}, appended to `out`.
void append_usage(std::string& out, const generation::GenerationUpdate& update);

}  // namespace coinfer::generation_fields
