#pragma once
// Shared by the OpenAI adapters (openai_routes.cpp, openai_completions.cpp): OpenAI's error
// shape, {"error": {"message", "type", "param", "code"}}, which its clients read.
#include <string>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/net/http_message.hpp"

namespace coinfer::openai {

inline void append_error(std::string& out, const Status& status) {
  const int code = http_status(status.code());
  const std::string_view type = code == 404   ? "not_found_error"
                                : code == 503 ? "service_unavailable"
                                : code < 500  ? "invalid_request_error"
                                              : "server_error";
  out += R"({"error":{"message":)";
  json_append_string(out, status.message());
  out += R"(,"type":)";
  json_append_string(out, type);
  out += R"(,"param":null,"code":)";
  json_append_number(out, code);
  out += "}}";
}

// The response for a failed request: its status, the error body, Retry-After on 503.
inline void fail(net::HttpResponse& res, const Status& status) {
  res.status = http_status(status.code());
  res.body.clear();
  append_error(res.body, status);
  if (status.code() == Errc::unavailable) res.headers.emplace_back("Retry-After", "1");
}

}  // namespace coinfer::openai
