#include "coinfer/client/http_client.hpp"

#include <array>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <optional>
#include <vector>

namespace coinfer::client {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// One keep-alive connection. `head` (request line and headers) and `buffer` (bytes read) keep
// their capacity across requests, so a request on a pooled connection allocates nothing.
struct Connection {
  explicit Connection(const asio::any_io_executor& executor) : stream(executor) {}
  beast::tcp_stream stream;
  std::optional<asio::ssl::stream<beast::tcp_stream&>> tls;  // over `stream`, for https
  beast::flat_buffer buffer;
  std::string head;
};

// Parses a response straight into an HttpResult: no header container, the body appended to
// the caller's (reused) string.
class ResponseParser final : public http::basic_parser<false> {
 public:
  explicit ResponseParser(HttpResult& out) : out_(out) {}

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int,
                       beast::error_code& ec) override {
    ec = http::error::bad_version;  // unreachable: this parser reads responses only
  }
  void on_response_impl(int code, beast::string_view, int, beast::error_code& ec) override {
    // Three digits, but below 100 no status at all (status 0 means "no response" here).
    if (code < 100) {
      ec = http::error::bad_status;
      return;
    }
    out_.status = code;
  }
  void on_field_impl(http::field name, beast::string_view, beast::string_view value,
                     beast::error_code&) override {
    if (name == http::field::content_type) {
      out_.content_type.assign(value.data(), value.size());
    } else if (name == http::field::etag) {
      out_.etag.assign(value.data(), value.size());
    } else if (name == http::field::content_length) {
      std::int64_t n = -1;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      out_.content_length = (ec == std::errc{} && end == value.data() + value.size()) ? n : -1;
    } else if (name == http::field::retry_after) {
      int seconds = -1;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      out_.retry_after_s = (ec == std::errc{} && end == value.data() + value.size()) ? seconds : -1;
    }
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                         beast::error_code&) override {
    if (length) out_.body.reserve(static_cast<std::size_t>(*length));
  }
  std::size_t on_body_impl(beast::string_view bytes, beast::error_code&) override {
    out_.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view bytes,
                                 beast::error_code&) override {
    out_.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_finish_impl(beast::error_code&) override {}

  HttpResult& out_;
};

// The connection was closed by the peer (or never usable) before anything of the response
// arrived: on a pooled connection this is the stale keep-alive case, worth one retry.
bool connection_gone(const beast::error_code& ec) noexcept {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == asio::error::not_connected;
}

struct Attempt {
  beast::error_code ec;
  bool response_started = false;  // some bytes of a response were parsed
};

Status expect_2xx(Status transport, const HttpResult& out) {
  if (!transport.ok()) return transport;
  if (out.status >= 200 && out.status < 300) return {};
  return Status(errc_from_http_status(out.status), "HTTP " + std::to_string(out.status) + ": " + out.body);
}

}  // namespace

struct HttpClient::State {
  State(asio::any_io_executor ex, std::string h, std::uint16_t p, HttpClientConfig cfg)
      : executor(std::move(ex)),
        host(std::move(h)),
        port(p),
        host_header(port == (cfg.tls ? 443 : 80) ? host : host + ":" + std::to_string(port)),
        config(std::move(cfg)) {
    if (config.tls) tls_status = make_tls_context();
  }

  Status make_tls_context() {
    namespace ssl = asio::ssl;
    tls_context.emplace(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(tls_context->native_handle(), TLS1_2_VERSION);
    tls_context->set_verify_mode(ssl::verify_peer);
    beast::error_code ec;
    if (config.tls_ca_file.empty()) {
      tls_context->set_default_verify_paths(ec);
    } else {
      tls_context->load_verify_file(config.tls_ca_file, ec);
    }
    if (ec) {
      return Status::invalid("tls_ca_file: cannot load '" + config.tls_ca_file +
                             "': " + ec.message());
    }
    return {};
  }

  asio::any_io_executor executor;
  const std::string host;
  const std::uint16_t port;
  const std::string host_header;  // "host:port" ("host" for the scheme's default port)
  const HttpClientConfig config;
  std::optional<asio::ssl::context> tls_context;  // when config.tls
  Status tls_status;                              // whether tls_context could be made
  std::vector<tcp::endpoint> endpoints;  // resolved once, on the first connect
  // Most recently used last: a request takes the back, the connection least likely to have
  // hit the server's idle timeout.
  std::vector<std::unique_ptr<Connection>> idle;
  std::uint64_t connects = 0;

  // The request coroutine; holds `self` so that the client may be destroyed meanwhile.
  static asio::awaitable<Status> run(std::shared_ptr<State> self, net::Method method,
                                     std::string_view target, std::string_view body,
                                     std::string_view content_type,
                                     std::span<const std::string> headers, HttpResult& out);
  asio::awaitable<Status> connect(Connection& c);
  asio::awaitable<Attempt> exchange(Connection& c, net::Method method, std::string_view target,
                                    std::string_view body, std::string_view content_type,
                                    std::span<const std::string> headers, HttpResult& out);
  template <class Stream>
  asio::awaitable<Attempt> exchange_over(Stream& io, Connection& c, net::Method method,
                                         std::string_view body, HttpResult& out);
  Status failure(net::Method method, std::string_view target, const beast::error_code& ec,
                 HttpResult& out) const;
};

asio::awaitable<Status> HttpClient::State::connect(Connection& c) {
  if (!tls_status.ok()) co_return tls_status;
  if (endpoints.empty()) {
    tcp::resolver resolver(executor);
    auto [ec, results] = co_await resolver.async_resolve(host, std::to_string(port), use_tuple);
    if (ec) {
      co_return Status(Errc::unavailable, "cannot resolve " + host + ": " + ec.message());
    }
    // Concurrent first requests may each have resolved: keep the first answer.
    if (endpoints.empty()) {
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    }
  }
  c.stream.expires_after(std::chrono::milliseconds(config.connect_timeout_ms));
  auto [ec, endpoint] = co_await c.stream.async_connect(endpoints, use_tuple);
  if (ec) {
    const std::string why = ec == beast::error::timeout
                                ? "timed out after " + std::to_string(config.connect_timeout_ms) +
                                      " ms (connect_timeout_ms)"
                                : ec.message();
    co_return Status(Errc::unavailable, "cannot connect to " + host_header + ": " + why);
  }
  c.stream.socket().set_option(tcp::no_delay(true), ec);
  if (tls_context) {
    auto& tls = c.tls.emplace(c.stream, *tls_context);
    // SNI (for names only, RFC 6066) and the name the certificate must carry (an IP address
    // is checked against the certificate's IP entries).
    beast::error_code not_ip;
    asio::ip::make_address(host, not_ip);
    if (not_ip) SSL_set_tlsext_host_name(tls.native_handle(), host.c_str());
    tls.set_verify_callback(asio::ssl::host_name_verification(host));
    auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::client, use_tuple);
    if (hec) {
      co_return Status(Errc::unavailable,
                       "TLS handshake with " + host_header + " failed: " + hec.message());
    }
  }
  ++connects;
  co_return Status{};
}

asio::awaitable<Attempt> HttpClient::State::exchange(Connection& c, net::Method method,
                                                     std::string_view target, std::string_view body,
                                                     std::string_view content_type,
                                                     std::span<const std::string> headers,
                                                     HttpResult& out) {
  c.head.clear();
  c.head.append(net::to_string(method)).append(" ").append(target).append(" HTTP/1.1\r\nHost: ");
  c.head.append(host_header).append("\r\n");
  if (!content_type.empty()) c.head.append("Content-Type: ").append(content_type).append("\r\n");
  if (!config.authorization.empty()) {
    c.head.append("Authorization: ").append(config.authorization).append("\r\n");
  }
  for (const std::string& header : config.headers) c.head.append(header).append("\r\n");
  for (const std::string& header : headers) c.head.append(header).append("\r\n");
  if (!body.empty() || method == net::Method::post || method == net::Method::put ||
      method == net::Method::patch) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, body.size()).ptr;
    c.head.append("Content-Length: ").append(digits, end).append("\r\n");
  }
  c.head.append("\r\n");
  if (c.tls) co_return co_await exchange_over(*c.tls, c, method, body, out);
  co_return co_await exchange_over(c.stream, c, method, body, out);
}

template <class Stream>
asio::awaitable<Attempt> HttpClient::State::exchange_over(Stream& io, Connection& c,
                                                          net::Method method,
                                                          std::string_view body,
                                                          HttpResult& out) {
  if (config.request_timeout_ms > 0) {
    c.stream.expires_after(std::chrono::milliseconds(config.request_timeout_ms));
  } else {
    c.stream.expires_never();
  }
  const std::array<asio::const_buffer, 2> request{asio::buffer(c.head),
                                                  asio::buffer(body.data(), body.size())};
  auto [wec, written] = co_await asio::async_write(io, request, use_tuple);
  if (wec) co_return Attempt{wec, false};

  ResponseParser parser(out);
  parser.header_limit(static_cast<std::uint32_t>(config.max_response_header_bytes));
  parser.body_limit(config.max_response_body_bytes);
  if (method == net::Method::head) parser.skip(true);
  auto [rec, read] = co_await http::async_read(io, c.buffer, parser, use_tuple);
  out.keep_alive = !rec && parser.keep_alive();
  co_return Attempt{rec, parser.got_some()};
}

Status HttpClient::State::failure(net::Method method, std::string_view target,
                                  const beast::error_code& ec, HttpResult& out) const {
  out.broken_status = out.status;
  out.status = 0;
  out.keep_alive = false;
  std::string what =
      std::string(net::to_string(method)) + " " + std::string(target) + " to " + host_header + ": ";
  if (ec == beast::error::timeout) {
    out.failure = Failure::timeout;
    return Status(Errc::deadline_exceeded, what + "no response within " +
                                               std::to_string(config.request_timeout_ms) +
                                               " ms (request_timeout_ms)");
  }
  const bool closed = connection_gone(ec) || ec == http::error::partial_message ||
                      ec.category() != http::make_error_code(http::error::end_of_stream).category();
  out.failure = closed ? Failure::closed : Failure::protocol;
  return Status(Errc::unavailable,
                what + (closed ? "connection failed: " : "bad response: ") + ec.message());
}

HttpClient::HttpClient(asio::any_io_executor executor, std::string host, std::uint16_t port,
                       std::size_t max_idle_connections)
    : HttpClient(std::move(executor), std::move(host), port,
                 HttpClientConfig{.max_idle_connections = max_idle_connections}) {}

HttpClient::HttpClient(asio::any_io_executor executor, std::string host, std::uint16_t port,
                       HttpClientConfig config)
    : state_(std::make_shared<State>(std::move(executor), std::move(host), port, config)) {}

HttpClient::~HttpClient() = default;

asio::awaitable<Status> HttpClient::request(net::Method method, std::string_view target,
                                            std::string_view body, std::string_view content_type,
                                            HttpResult& out) {
  return State::run(state_, method, target, body, content_type, {}, out);
}

asio::awaitable<Status> HttpClient::request(net::Method method, std::string_view target,
                                            std::string_view body, std::string_view content_type,
                                            std::span<const std::string> headers,
                                            HttpResult& out) {
  return State::run(state_, method, target, body, content_type, headers, out);
}

asio::awaitable<Status> HttpClient::State::run(std::shared_ptr<State> s, net::Method method,
                                               std::string_view target, std::string_view body,
                                               std::string_view content_type,
                                               std::span<const std::string> headers,
                                               HttpResult& out) {
  out.status = 0;
  out.etag.clear();
  out.content_length = -1;
  out.broken_status = 0;
  out.body.clear();
  out.content_type.clear();
  out.retry_after_s = -1;
  out.keep_alive = false;
  out.failure = Failure::none;
  if (method == net::Method::other) {
    co_return Status::invalid("HttpClient::request: Method::other has no name to send");
  }

  std::unique_ptr<Connection> c;
  bool pooled = false;
  if (!s->idle.empty()) {
    c = std::move(s->idle.back());
    s->idle.pop_back();
    pooled = true;
  }
  for (;;) {
    if (!c) {
      c = std::make_unique<Connection>(s->executor);
      if (auto status = co_await s->connect(*c); !status.ok()) {
        out.failure = Failure::connect;
        co_return status;
      }
    }
    const Attempt attempt =
        co_await s->exchange(*c, method, target, body, content_type, headers, out);
    if (!attempt.ec) break;
    if (pooled && !attempt.response_started && connection_gone(attempt.ec)) {
      c.reset();  // stale keep-alive connection: once more on a fresh one
      pooled = false;
      out.body.clear();
      out.content_type.clear();
      continue;
    }
    co_return s->failure(method, target, attempt.ec, out);
  }
  // Leftover bytes would be a response nobody asked for: such a connection is not reused.
  if (out.keep_alive && c->buffer.size() == 0 && s->idle.size() < s->config.max_idle_connections) {
    s->idle.push_back(std::move(c));
  }
  co_return Status{};
}

const std::string& HttpClient::host() const noexcept {
  return state_->host;
}
const std::string& HttpClient::host_header() const noexcept {
  return state_->host_header;
}
std::uint16_t HttpClient::port() const noexcept {
  return state_->port;
}
std::size_t HttpClient::idle_connections() const noexcept {
  return state_->idle.size();
}
std::uint64_t HttpClient::connections_opened() const noexcept {
  return state_->connects;
}
void HttpClient::close_idle() noexcept {
  state_->idle.clear();
}

asio::awaitable<Status> health_live(HttpClient& client, HttpResult& out) {
  auto status = co_await client.request(net::Method::get, "/v2/health/live", {}, {}, out);
  co_return expect_2xx(std::move(status), out);
}

asio::awaitable<Status> health_ready(HttpClient& client, HttpResult& out) {
  auto status = co_await client.request(net::Method::get, "/v2/health/ready", {}, {}, out);
  co_return expect_2xx(std::move(status), out);
}

asio::awaitable<Status> model_metadata(HttpClient& client, std::string_view model,
                                       HttpResult& out) {
  const std::string target = "/v2/models/" + std::string(model);
  auto status = co_await client.request(net::Method::get, target, {}, {}, out);
  co_return expect_2xx(std::move(status), out);
}

asio::awaitable<Status> infer(HttpClient& client, std::string_view model,
                              std::string_view request_json, HttpResult& out) {
  const std::string target = "/v2/models/" + std::string(model) + "/infer";
  auto status =
      co_await client.request(net::Method::post, target, request_json, "application/json", out);
  co_return expect_2xx(std::move(status), out);
}

}  // namespace coinfer::client
