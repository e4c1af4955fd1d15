#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <span>
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
  // X-Request-Id as the client sent it (a visible-ASCII token of up to 128 bytes) or as the
  // server made it (32 hex digits); echoed in the response and in every log line about it.
  std::string_view request_id;
  // Whose API key the request carries ([auth]); null when auth is off or the path is public.
  const Tenant* tenant = nullptr;

  // Case-insensitive header lookup; empty if absent.
  std::string_view header(std::string_view name) const noexcept;
  // Value of a {name} segment of the matched route; empty if the route has none.
  std::string_view param(std::string_view name) const noexcept;
};

struct HttpResponse;

// W3C Server-Timing: the durations a handler measured (queue, compute, ...). The server adds
// `total` (from the request's first byte to the response's head) and writes them as the
// Server-Timing header and into the access log. No allocation: names must outlive the
// response (string literals); entries beyond kMax are dropped.
class ServerTiming {
 public:
  static constexpr std::size_t kMax = 8;
  struct Entry {
    std::string_view name;
    double ms = 0;
  };
  void add(std::string_view name, std::chrono::nanoseconds duration) noexcept {
    if (size_ < kMax) entries_[size_++] = {name, static_cast<double>(duration.count()) / 1e6};
  }
  std::span<const Entry> entries() const noexcept { return {entries_.data(), size_}; }
  void clear() noexcept { size_ = 0; }

 private:
  std::array<Entry, kMax> entries_{};
  std::size_t size_ = 0;
};

// A response written in parts: Server-Sent Events, or any body sent as it is produced
// (chunked transfer encoding on HTTP/1.1; on HTTP/1.0 the body ends when the connection
// closes). The server offers one to every handler through HttpResponse::stream.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Sends the status line and headers of `head` (status, content_type, headers; its body is
  // ignored). Once, before any write(); false when the connection failed.
  virtual boost::asio::awaitable<bool> begin(const HttpResponse& head) = 0;
  // Sends `data` as the next part of the body and returns once it is written: a client that
  // reads slowly holds the handler here (backpressure), up to the server's write_timeout_ms
  // per part. false when the connection failed or timed out; the handler should stop.
  virtual boost::asio::awaitable<bool> write(std::string_view data) = 0;
  virtual bool begun() const noexcept = 0;
  // True once the server is stopping (stop()): a response that would go on indefinitely (an
  // event stream) should end, so the drain does not wait for it.
  virtual bool closing() const noexcept = 0;
};

// A response a handler fills. `body` is a buffer the connection reuses across requests:
// handlers append to it and never shrink it.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. Retry-After
  ServerTiming timing;  // written by the server as Server-Timing (with `total`)
  // For a response sent in parts; set by the server (null where a handler runs without a
  // connection). Once a handler has begun a stream, status, headers and body above are unused.
  ResponseStream* stream = nullptr;

  void reset() {
    status = 200;
    content_type = "application/json";
    body.clear();
    headers.clear();
    timing.clear();
  }
  // Sets status and a body {"error": "<message>"}.
  void error(int http_status, std::string_view message);
};

std::string_view to_string(Method method) noexcept;

}  // namespace coinfer::net
