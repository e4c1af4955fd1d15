#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coinfer {
class Tenant;
}

namespace coinfer::net {

enum class Method { get, head, post, put, delete_, options, patch, other };

// A request as a handler sees it: views into the connection's buffers, valid for the
// duration of the handler call. `body` is followed by at least `body_capacity - body.size()`
// readable bytes, so JSON parsers that need padding can read it in place.
struct HttpRequest {
  Method method = Method::other;
  std::string_view target;  // path and query, as sent
  std::string_view path;    // without the query
  std::string_view query;   // after '?', may be empty
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  std::vector<std::pair<std::string_view, std::string_view>> path_params;  // from the route
  std::string_view body;
  std::size_t body_capacity = 0;
  // Whose API key the request carries ([auth]); null when auth is off or the path is public.
  const Tenant* tenant = nullptr;

  // Case-insensitive header lookup; empty if absent.
  std::string_view header(std::string_view name) const noexcept;
  // Value of a {name} segment of the matched route; empty if the route has none.
  std::string_view param(std::string_view name) const noexcept;
};

// A response a handler fills. `body` is a buffer the connection reuses across requests:
// handlers append to it and never shrink it.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. Retry-After

  void reset() {
    status = 200;
    content_type = "application/json";
    body.clear();
    headers.clear();
  }
  // Sets status and a body {"error": "<message>"}.
  void error(int http_status, std::string_view message);
};

std::string_view to_string(Method method) noexcept;

}  // namespace coinfer::net
