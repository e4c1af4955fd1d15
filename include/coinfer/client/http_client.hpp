#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/net/http_message.hpp"

namespace coinfer::client {

// Why a request got no HTTP response (HttpResult::failure).
enum class Failure : std::uint8_t {
  none,      // a response arrived; see HttpResult::status
  connect,   // resolve or connect failed or timed out
  timeout,   // no whole response within request_timeout_ms
  closed,    // the connection failed mid-request (reset, closed before the response ended)
  protocol,  // the response was not valid HTTP/1.1 or exceeded a limit
};

// One response. Callers that send many requests reuse one HttpResult: assigning the body keeps
// its capacity, so a steady stream of requests does not allocate for it.
struct HttpResult {
  int status = 0;  // HTTP status; 0 when no response arrived
  std::string body;
  std::string content_type;
  int retry_after_s = -1;  // Retry-After in seconds; -1 when absent or not a number
  std::string etag;              // the ETag header, as sent (quotes included); empty: none
  std::int64_t content_length = -1;  // the Content-Length header (also of a HEAD); -1: none
  bool keep_alive = false;
  Failure failure = Failure::none;
  // A response that broke off after its head (failure closed or timeout): its status, with
  // what arrived of its body in `body`. 0 otherwise.
  int broken_status = 0;
};

struct HttpClientConfig {
  std::size_t max_idle_connections = 64;  // idle keep-alive connections kept; more are closed
  std::uint32_t connect_timeout_ms = 5'000;
  std::uint32_t request_timeout_ms = 30'000;  // to write a request and read its response; 0: none
  std::size_t max_response_body_bytes = 64 * 1024 * 1024;
  std::size_t max_response_header_bytes = 64 * 1024;
  // Sent as the Authorization header of every request ("Bearer <API key>"); empty: none.
  std::string authorization{};
  // More header lines sent with every request ("Inference-Header-Content-Length: 115"), as
  // given: the caller keeps them free of CR and LF.
  std::vector<std::string> headers{};
  // HTTPS: TLS 1.2+, the server's certificate verified against `tls_ca_file` (PEM; empty: the
  // system's trusted CAs) and the host name (or IP address) connected to.
  bool tls = false;
  std::string tls_ca_file{};
};

// HTTP/1.1 client on C++20 coroutines with a pool of keep-alive connections to one host:port.
//
// Each request takes the most recently used idle connection (or opens one), and gives it back
// when the response allows keep-alive. Concurrent requests use separate connections, so the
// number of requests in flight bounds the number open. A pooled connection that the server has
// closed meanwhile (idle timeout, restart) is found out when the request fails before any
// response byte arrives; the request is then sent once more on a fresh connection. That retry
// is safe for any method, because the server cannot have seen the first attempt's response
// begin -- the same rule browsers and curl apply to stale keep-alive connections.
//
// Not thread-safe: call it from one thread or strand (the executor given). Runs on any
// executor, so it lives beside the caller's own coroutines; requests in flight keep the
// client's state alive, so it may be destroyed while they finish.
class HttpClient {
 public:
  HttpClient(boost::asio::any_io_executor executor, std::string host, std::uint16_t port,
             std::size_t max_idle_connections = 64);
  HttpClient(boost::asio::any_io_executor executor, std::string host, std::uint16_t port,
             HttpClientConfig config);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request and reads its response into `out`. The returned Status is ok whenever an
  // HTTP response arrived, whatever its status code; otherwise it is Errc::unavailable
  // (connect or connection failure, malformed response) or Errc::deadline_exceeded (timeout)
  // with a message naming the request and the cause, and out.failure says which.
  // Content-Type is sent when `content_type` is not empty. `target`, `body` and
  // `content_type` must stay valid until the request completes.
  boost::asio::awaitable<Status> request(net::Method method, std::string_view target,
                                         std::string_view body, std::string_view content_type,
                                         HttpResult& out);
  // The same with more header lines for this request only ("Range: bytes=0-99", as given:
  // free of CR and LF); they must stay valid until the request completes.
  boost::asio::awaitable<Status> request(net::Method method, std::string_view target,
                                         std::string_view body, std::string_view content_type,
                                         std::span<const std::string> headers, HttpResult& out);
  // The Host header this client sends: "host", or "host:port" unless the port is the scheme's
  // default (80, or 443 with TLS), as browsers and curl send it (request signatures cover it).
  const std::string& host_header() const noexcept;

  const std::string& host() const noexcept;
  std::uint16_t port() const noexcept;
  std::size_t idle_connections() const noexcept;
  std::uint64_t connections_opened() const noexcept;  // successful connects, ever
  // Closes every idle connection; connections in use are closed when their request ends.
  void close_idle() noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// KServe Open Inference Protocol v2 over an HttpClient, JSON in and out as text. Each returns
// ok only for a 2xx response; any other status becomes a Status with the matching Errc and
// the server's message ("HTTP 404: {"error":"unknown model 'x'"}"). `out` holds the response
// either way.
boost::asio::awaitable<Status> health_live(HttpClient& client, HttpResult& out);
boost::asio::awaitable<Status> health_ready(HttpClient& client, HttpResult& out);
boost::asio::awaitable<Status> model_metadata(HttpClient& client, std::string_view model,
                                              HttpResult& out);
// POST /v2/models/{model}/infer with `request_json` as the body.
boost::asio::awaitable<Status> infer(HttpClient& client, std::string_view model,
                                     std::string_view request_json, HttpResult& out);

}  // namespace coinfer::client
