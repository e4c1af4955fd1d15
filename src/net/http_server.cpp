#include "coinfer/net/http_server.hpp"

#include "coinfer/core/access.hpp"
#include "coinfer/core/log.hpp"
#include "coinfer/net/read_watchdog.hpp"
#include "connection.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <chrono>
#include <list>
#include <memory_resource>
#include <mutex>
#include <random>

namespace coinfer::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
// How long an idle keep-alive connection still reads after stop(): a request already on its
// way is answered instead of meeting a closed socket (as the WebSocket reader does).
constexpr auto kIdleLinger = 100ms;
// Bytes kept readable after every request body, for parsers (simdjson) that read past the end.
constexpr std::size_t kBodyPadding = 64;

using Clock = std::chrono::steady_clock;

// What the server knows of a request beyond HttpRequest: when its first byte came, and the
// id it answers with.
struct RequestTrace {
  Clock::time_point received;
  std::string_view id;
};

bool valid_request_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
}

// A request id of 32 hex digits (128 random bits, as nginx's $request_id), written into `out`.
std::string_view make_request_id(std::array<char, 32>& out) noexcept {
  thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t half = 0; half < 2; ++half) {
    std::uint64_t bits = random();
    for (std::size_t i = 0; i < 16; ++i, bits >>= 4) out[half * 16 + i] = kHex[bits & 0xf];
  }
  return {out.data(), out.size()};
}

void append_ms(std::string& out, double ms) {
  char number[32];
  out.append(number,
             std::to_chars(number, number + sizeof number, ms, std::chars_format::fixed, 3).ptr);
}

// The Server-Timing header's value: the handler's entries, then `total`.
void append_server_timing(std::string& out, const ServerTiming& timing, double total_ms) {
  for (const auto& entry : timing.entries()) {
    out += entry.name;
    out += ";dur=";
    append_ms(out, entry.ms);
    out += ", ";
  }
  out += "total;dur=";
  append_ms(out, total_ms);
}

double ms_since(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Status line and the headers every response has: Server, Content-Type, the handler's,
// X-Request-Id and Server-Timing.
void append_status_and_headers(std::string& head, unsigned version, const HttpResponse& response,
                               const RequestTrace& trace, double total_ms) {
  char number[24];
  head += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  head.append(number, std::to_chars(number, number + sizeof number, response.status).ptr);
  head += ' ';
  head += http::obsolete_reason(static_cast<http::status>(response.status));
  head += "\r\nServer: coinfer\r\nContent-Type: ";
  head += response.content_type;
  for (const auto& [name, value] : response.headers) {
    head += "\r\n";
    head += name;
    head += ": ";
    head += value;
  }
  head += "\r\nX-Request-Id: ";
  head += trace.id;
  head += "\r\nServer-Timing: ";
  append_server_timing(head, response.timing, total_ms);
}

// Status line and headers, serialized by hand into a reused buffer: Beast's fields container
// allocates per header, and this runs once per response.
void write_head(std::string& head, unsigned version, const HttpResponse& response,
                bool keep_alive, const RequestTrace& trace, double total_ms) {
  char number[24];
  head.clear();
  append_status_and_headers(head, version, response, trace, total_ms);
  head += "\r\nContent-Length: ";
  head.append(number, std::to_chars(number, number + sizeof number, response.body.size()).ptr);
  if (!keep_alive) {
    head += "\r\nConnection: close";
  } else if (version == 10) {
    head += "\r\nConnection: keep-alive";
  }
  head += "\r\n\r\n";
}

// A response sent in parts on the connection's stream (ResponseStream). HTTP/1.1 frames each
// part as a chunk; HTTP/1.0 has no chunks, so the connection closes after the body.
template <class Stream>
class ChunkedWriter final : public ResponseStream {
 public:
  ChunkedWriter(Connection& c, Stream& io, std::chrono::milliseconds write_timeout, unsigned version,
                bool keep_alive, const RequestTrace& trace)
      : c_(c), io_(io), write_timeout_(write_timeout), version_(version), keep_alive_(keep_alive && version != 10), trace_(trace) {}

  // Server-Timing goes with the head: `total` is the time to the first byte of the response.
  asio::awaitable<bool> begin(const HttpResponse& head) override {
    if (begun_) co_return !failed_;
    begun_ = true;
    status_ = head.status;
    buffer_.clear();
    append_status_and_headers(buffer_, version_, head, trace_, ms_since(trace_.received));
    buffer_ += version_ == 10 ? "\r\nConnection: close" : "\r\nTransfer-Encoding: chunked";
    if (version_ != 10 && !keep_alive_) buffer_ += "\r\nConnection: close";
    buffer_ += "\r\n\r\n";
    co_return co_await send(asio::buffer(buffer_));
  }

  asio::awaitable<bool> write(std::string_view data) override {
    if (!begun_ || failed_) co_return false;
    if (data.empty()) co_return true;  // an empty chunk would end the body
    body_bytes_ += data.size();
    if (version_ == 10) co_return co_await send(asio::buffer(data.data(), data.size()));
    char size[20];
    const auto end = std::to_chars(size, size + sizeof size - 2, data.size(), 16).ptr;
    const std::size_t size_len = static_cast<std::size_t>(end - size);
    size[size_len] = '\r';
    size[size_len + 1] = '\n';
    const std::array<asio::const_buffer, 3> parts{asio::buffer(size, size_len + 2),
                                                  asio::buffer(data.data(), data.size()),
                                                  asio::buffer("\r\n", 2)};
    co_return co_await send(parts);
  }

  bool begun() const noexcept override { return begun_; }
  bool closing() const noexcept override { return c_.stopping; }
  bool failed() const noexcept { return failed_; }
  int status() const noexcept { return status_; }
  std::size_t body_bytes() const noexcept { return body_bytes_; }
  bool keep_alive() const noexcept { return keep_alive_ && !failed_; }

  // The body's end: the last chunk (HTTP/1.1).
  asio::awaitable<bool> end() {
    if (!begun_ || failed_) co_return false;
    if (version_ == 10) co_return true;
    co_return co_await send(asio::buffer("0\r\n\r\n", 5));
  }

 private:
  template <class Buffers>
  asio::awaitable<bool> send(const Buffers& buffers) {
    // A read may be pending beside this (the disconnect watch): expires_after then sets only
    // the write's timer.
    c_.stream.expires_after(write_timeout_);
    auto [ec, n] = co_await asio::async_write(io_, buffers, use_tuple);
    if (ec) failed_ = true;
    co_return !failed_;
  }

  Connection& c_;
  Stream& io_;
  std::chrono::milliseconds write_timeout_;
  unsigned version_;
  bool keep_alive_;
  const RequestTrace& trace_;
  bool begun_ = false;
  bool failed_ = false;
  int status_ = 0;
  std::size_t body_bytes_ = 0;
  std::string buffer_;
};

// The access log's line for one request ([log] access).
void log_access(const HttpRequest& request, int status, std::size_t body_bytes,
                const ServerTiming& timing, double total_ms) {
  std::string server_timing;
  append_server_timing(server_timing, timing, total_ms);
  char status_text[8], bytes_text[24], ms_text[32];
  const auto status_end = std::to_chars(status_text, status_text + sizeof status_text, status).ptr;
  const auto bytes_end = std::to_chars(bytes_text, bytes_text + sizeof bytes_text, body_bytes).ptr;
  const auto ms_end = std::to_chars(ms_text, ms_text + sizeof ms_text, total_ms,
                                    std::chars_format::fixed, 3).ptr;
  log::event(log::Level::info, "access",
             {{"request_id", request.request_id},
              {"method", to_string(request.method)},
              {"target", request.target},
              {"status", {status_text, static_cast<std::size_t>(status_end - status_text)}, true},
              {"bytes", {bytes_text, static_cast<std::size_t>(bytes_end - bytes_text)}, true},
              {"duration_ms", {ms_text, static_cast<std::size_t>(ms_end - ms_text)}, true},
              {"server_timing", server_timing},
              {"tenant", request.tenant ? std::string_view(request.tenant->name()) : std::string_view("-")}});
}

Method to_method(http::verb verb) noexcept {
  switch (verb) {
    case http::verb::get:
      return Method::get;
    case http::verb::head:
      return Method::head;
    case http::verb::post:
      return Method::post;
    case http::verb::put:
      return Method::put;
    case http::verb::delete_:
      return Method::delete_;
    case http::verb::options:
      return Method::options;
    case http::verb::patch:
      return Method::patch;
    default:
      return Method::other;
  }
}

// TLS 1.2 and 1.3 with the configured certificate chain and key (PEM); errors name the file.
Status make_tls_context(const ServerConfig& config, std::optional<asio::ssl::context>& out) {
  namespace ssl = asio::ssl;
  ssl::context context(ssl::context::tls_server);
  context.set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);  // no SSL, TLS 1.0/1.1
  beast::error_code ec;
  context.use_certificate_chain_file(config.tls_cert_file, ec);
  if (ec) {
    return Status::invalid("server.tls_cert_file: cannot load '" + config.tls_cert_file +
                           "': " + ec.message());
  }
  context.use_private_key_file(config.tls_key_file, ssl::context::pem, ec);  // must match
  if (ec) {
    return Status::invalid("server.tls_key_file: cannot load '" + config.tls_key_file +
                           "': " + ec.message());
  }
  out.emplace(std::move(context));
  return {};
}

}  // namespace

struct HttpServer::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor ex, ServerConfig cfg, const Router& r)
      : executor(std::move(ex)),
        config(std::move(cfg)),
        router(r),
        acceptor(asio::make_strand(executor)),
        drain_timer(acceptor.get_executor()) {}

  asio::any_io_executor executor;
  const ServerConfig config;
  const Router& router;
  tcp::acceptor acceptor;
  asio::steady_timer drain_timer;  // on the acceptor's strand
  std::optional<asio::ssl::context> tls;  // set by listen() when TLS is configured
  std::atomic<std::uint16_t> port{0};

  mutable std::mutex mutex;  // guards connections and stopping
  std::list<std::shared_ptr<Connection>> connections;
  bool stopping = false;

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> session(std::shared_ptr<Connection> connection);
  // The request loop over `io`: the connection's TCP stream, or TLS over it.
  template <class Stream>
  asio::awaitable<void> serve(Connection& c, Stream& io);
  asio::awaitable<void> reject(tcp::socket socket);
  template <class Stream>
  asio::awaitable<void> write_error(Connection& c, Stream& io, http::status status,
                                    std::string_view message, unsigned version);
  bool admit(std::string_view authorization, HttpRequest& request, TenantPermit& permit,
             HttpResponse& response) const;
  void dispatch(HttpRequest& request, HttpResponse& response, const Handler*& async_handler);
  void remove(const std::shared_ptr<Connection>& connection);
};

asio::awaitable<void> HttpServer::State::accept_loop() {
  auto self = shared_from_this();
  for (;;) {
    // With one I/O thread (config.io_threads == 1, a promise the caller makes) connections
    // need no strand: every handler already runs on that one thread.
    const auto connection_executor =
        config.io_threads == 1 ? executor : asio::any_io_executor(asio::make_strand(executor));
    auto [ec, socket] = co_await acceptor.async_accept(connection_executor, use_tuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of file descriptors and the like: back off briefly instead of spinning.
      spdlog::warn("accept failed: {}", ec.message());
      asio::steady_timer pause(acceptor.get_executor(), 50ms);
      co_await pause.async_wait(use_tuple);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex);
      if (stopping) co_return;
      if (connections.size() < config.max_connections) {
        connection = std::make_shared<Connection>(std::move(socket));
        connections.push_front(connection);
        connection->self = connections.begin();
      }
    }
    if (connection) {
      auto ex = connection->stream.get_executor();
      // The connection's signal cancels what the session awaits: its disconnect watch emits
      // it when the peer leaves while a handler runs.
      auto slot = connection->cancel.slot();
      asio::co_spawn(ex, session(std::move(connection)),
                     asio::bind_cancellation_slot(slot, asio::detached));
    } else {
      auto ex = socket.get_executor();
      asio::co_spawn(ex, reject(std::move(socket)), asio::detached);
    }
  }
}

// A read beside a suspended async handler. If the peer closes the connection, the session's
// cancellation signal cancels the handler (a queued request is then dropped before compute);
// bytes of a pipelined next request are kept in the session's buffer. A completion handler,
// not a coroutine: it costs one recycled Asio operation and no frames.
struct DisconnectWatch {
  bool pending = false;    // the read has not completed yet
  bool peer_gone = false;  // it ended with the connection closed (or broken)
};

template <class Stream>
void start_watch(Connection& c, Stream& io, beast::flat_buffer& buffer, DisconnectWatch& watch) {
  watch.pending = true;
  watch.peer_gone = false;
  c.stream.expires_never();
  io.async_read_some(buffer.prepare(4096),
                     [&c, &buffer, &watch](beast::error_code ec, std::size_t n) {
                       watch.pending = false;
                       if (!ec) {
                         buffer.commit(n);
                       } else if (ec != asio::error::operation_aborted) {
                         watch.peer_gone = true;
                         c.cancel.emit(asio::cancellation_type::terminal);
                       }
                     });
}

// Over max_connections: answer 503 at once and close, without reading anything. With TLS the
// connection is closed without an answer: a handshake would spend what the limit protects.
asio::awaitable<void> HttpServer::State::reject(tcp::socket socket) {
  if (tls) {
    beast::error_code ignored;
    socket.close(ignored);
    co_return;
  }
  static constexpr std::string_view kBody =
      R"({"error":"too many connections: the server's max_connections limit is reached"})";
  std::string response =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(kBody.size()) + "\r\n\r\n" + std::string(kBody);
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::milliseconds(config.write_timeout_ms));
  co_await asio::async_write(stream, asio::buffer(response), use_tuple);
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

template <class Stream>
asio::awaitable<void> HttpServer::State::write_error(Connection& c, Stream& io,
                                                     http::status status,
                                                     std::string_view message, unsigned version) {
  HttpResponse body;
  body.error(static_cast<int>(status), message);
  http::response<http::string_body> res{status, version};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::connection, "close");
  res.keep_alive(false);
  res.body() = std::move(body.body);
  res.prepare_payload();
  c.stream.expires_after(std::chrono::milliseconds(config.write_timeout_ms));
  co_await http::async_write(io, res, use_tuple);
}

// API keys: true when the request may go on (auth off, a public path, or a valid key within
// its tenant's limits), with request.tenant set; otherwise `response` holds the 401 or 429.
bool HttpServer::State::admit(std::string_view authorization, HttpRequest& request,
                              TenantPermit& permit, HttpResponse& response) const {
  request.tenant = nullptr;
  const AccessControl* access = router.access_control();
  if (!access || !access->enabled() || access->is_public(request.path)) return true;
  const Tenant* tenant = nullptr;
  Status status = access->authenticate(authorization, tenant);
  if (status.ok()) status = tenant->admit(permit);
  if (status.ok()) {
    request.tenant = tenant;
    return true;
  }
  response.error(http_status(status.code()), status.message());
  if (status.code() == Errc::unauthenticated) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
  } else {
    response.headers.emplace_back("Retry-After", std::to_string(tenant->retry_after_s()));
  }
  return false;
}

void HttpServer::State::dispatch(HttpRequest& request, HttpResponse& response,
                                 const Handler*& async_handler) {
  const Handler* handler = nullptr;
  std::string allowed;
  switch (router.match(request, handler, allowed)) {
    case Router::Outcome::not_found:
      response.error(404, "no route for " + std::string(request.path));
      return;
    case Router::Outcome::method_not_allowed:
      response.error(405, std::string(to_string(request.method)) + " is not allowed on " +
                              std::string(request.path) + "; allowed: " + allowed);
      response.headers.emplace_back("Allow", allowed);
      return;
    case Router::Outcome::found:
      break;
  }
  if (const auto* sync = std::get_if<SyncHandler>(handler)) {
    (*sync)(request, response);
  } else {
    async_handler = handler;
  }
}

asio::awaitable<void> HttpServer::State::session(std::shared_ptr<Connection> connection) {
  auto self = shared_from_this();
  Connection& c = *connection;
  if (!tls) {
    co_await serve(c, c.stream);
  } else {
    TlsStream io(c.stream, *tls);
    // The handshake is part of reading the first request: bounded by read_timeout_ms.
    c.stream.expires_after(std::chrono::milliseconds(config.read_timeout_ms));
    auto [ec] = co_await io.async_handshake(asio::ssl::stream_base::server, use_tuple);
    if (!ec) {
      co_await serve(c, io);
      // close_notify, without waiting long for the peer's: the response framing already
      // tells a client where the data ends.
      c.stream.expires_after(std::min(std::chrono::milliseconds(config.write_timeout_ms),
                                      std::chrono::milliseconds(1000)));
      co_await io.async_shutdown(use_tuple);
    }
  }
  beast::error_code ignored;
  c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  c.stream.close();
  remove(connection);
}

template <class Stream>
asio::awaitable<void> HttpServer::State::serve(Connection& c, Stream& io) {
  beast::flat_buffer buffer;
  std::string body_storage;  // reused request body buffer, capacity kept across requests
  HttpResponse response;     // reused response buffer
  std::string head;          // reused status line and headers
  HttpRequest request;
  request.headers.reserve(16);
  std::array<char, 32> id_storage;  // a request id the server makes
  RequestTrace trace;
  const auto read_timeout = std::chrono::milliseconds(config.read_timeout_ms);
  ReadWatchdog read_watchdog(c.stream.get_executor());
  // The parsed request's fields and target, in this frame: a usual request's headers fit, and
  // larger ones (up to max_header_bytes) take heap blocks that the next request gives back.
  std::array<std::byte, 2048> header_storage;
  std::pmr::monotonic_buffer_resource header_arena(header_storage.data(), header_storage.size());

  for (;;) {
    // Idle: wait for the first bytes of the next request. Only here may stop() close us.
    if (buffer.size() == 0) {
      c.idle = true;
      if (c.stopping) break;
      c.stream.expires_after(std::chrono::milliseconds(config.idle_timeout_ms));
      auto [ec, n] = co_await io.async_read_some(buffer.prepare(4096), use_tuple);
      if (ec) break;  // closed by the peer, idle timeout, or stop()
      buffer.commit(n);
    }
    c.idle = false;
    trace.received = Clock::now();

    header_arena.release();  // the last request's parser is gone
    http::request_parser<http::string_body, RequestFields::allocator_type> parser(
        std::piecewise_construct, std::make_tuple(),
        std::make_tuple(RequestFields::allocator_type(&header_arena)));
    parser.header_limit(static_cast<std::uint32_t>(config.max_header_bytes));
    parser.body_limit(config.max_body_bytes);
    // The whole request must arrive within read_timeout_ms. A watchdog cancels the read
    // rather than closing the socket (as tcp_stream's own timeout would), so 408 can be sent.
    c.stream.expires_never();
    read_watchdog.arm(read_timeout, c.stream.socket());
    auto [hec, hn] = co_await http::async_read_header(io, buffer, parser, use_tuple);
    if (read_watchdog.expired()) {
      co_await write_error(c, io, http::status::request_timeout,
                           "request not received within read_timeout_ms", 11);
      break;
    }
    if (hec == http::error::header_limit) {
      read_watchdog.disarm();
      co_await write_error(c, io, http::status::request_header_fields_too_large,
                           "request headers exceed max_header_bytes (" +
                               std::to_string(config.max_header_bytes) + ")",
                           11);
      break;
    }
    if (hec == http::error::body_limit) {  // Content-Length already over the limit
      read_watchdog.disarm();
      // Beast stops before the header is done, so parser.content_length() may not be asked
      // (its precondition, an assert: found by fuzz/http_request_fuzzer). The field is read.
      co_await write_error(c, io, http::status::payload_too_large,
                           "request body of " +
                               std::string(parser.get()[http::field::content_length]) +
                               " bytes exceeds max_body_bytes (" +
                               std::to_string(config.max_body_bytes) + ")",
                           11);
      break;
    }
    if (hec == http::error::end_of_stream || hec == asio::error::eof ||
        hec == asio::error::operation_aborted || hec == asio::error::connection_reset) {
      break;
    }
    if (hec) {
      read_watchdog.disarm();
      co_await write_error(c, io, http::status::bad_request, "malformed request: " + hec.message(),
                           11);
      break;
    }
    const unsigned version = parser.get().version();
    body_storage.clear();
    body_storage.reserve(parser.content_length().value_or(0) + kBodyPadding);
    parser.get().body().swap(body_storage);
    auto [bec, bn] = co_await http::async_read(io, buffer, parser, use_tuple);
    read_watchdog.disarm();
    if (read_watchdog.expired()) {
      co_await write_error(c, io, http::status::request_timeout,
                           "request body not received within read_timeout_ms", version);
      break;
    }
    if (bec == http::error::body_limit) {
      co_await write_error(c, io, http::status::payload_too_large,
                           "request body exceeds max_body_bytes (" +
                               std::to_string(config.max_body_bytes) + ")",
                           version);
      break;
    }
    if (bec == http::error::partial_message || bec == http::error::end_of_stream) {
      co_await write_error(c, io, http::status::bad_request,
                           "truncated request: the connection closed before the body ended",
                           version);
      break;
    }
    if (bec) {
      if (bec != asio::error::operation_aborted && bec != asio::error::connection_reset) {
        co_await write_error(c, io, http::status::bad_request, "malformed request: " + bec.message(),
                             version);
      }
      break;
    }

    auto& req = parser.get();
    request.method = to_method(req.method());
    request.target = req.target();
    const auto query_at = request.target.find('?');
    request.path = request.target.substr(0, query_at);
    request.query = query_at == std::string_view::npos ? std::string_view{}
                                                       : request.target.substr(query_at + 1);
    response.reset();
    TenantPermit permit;  // the tenant's concurrency slot, held until the handler is done
    const bool admitted = admit(req[http::field::authorization], request, permit, response);
    if (admitted && boost::beast::websocket::is_upgrade(req)) {
      if (const auto* ws = router.websocket(request.path)) {
        // The connection now speaks WebSocket until it closes; stop() lets it answer what is
        // in flight and close (Connection::on_stop). Its messages are admitted one by one.
        permit.release();
        co_await run_websocket(c, io, parser.release(), *ws, config, request.tenant);
        break;
      }
    }
    std::string& body = req.body();
    if (body.capacity() < body.size() + kBodyPadding) body.reserve(body.size() + kBodyPadding);
    request.headers.clear();
    for (const auto& field : req) request.headers.emplace_back(field.name_string(), field.value());
    request.request_id = request.header("X-Request-Id");
    if (!valid_request_id(request.request_id)) request.request_id = make_request_id(id_storage);
    trace.id = request.request_id;
    request.path_params.clear();
    request.body = body;
    request.body_capacity = body.capacity();

    const Handler* async_handler = nullptr;
    DisconnectWatch watch;
    ChunkedWriter<Stream> writer(c, io, std::chrono::milliseconds(config.write_timeout_ms), version,
                                 req.keep_alive() && !c.stopping, trace);
    response.stream = &writer;
    bool threw = false;  // the handler threw (`what`): a 500, unless its answer is half out
    std::string what;
    try {
      if (admitted) dispatch(request, response, async_handler);
      if (async_handler) {
        start_watch(c, io, buffer, watch);
        co_await std::get<AsyncHandler>(*async_handler)(request, response);
      }
    } catch (const std::exception& e) {
      threw = true;
      what = e.what();
    }
    if (watch.pending) {
      // The handler is done first: stop the read, and let its completion run (it owns the
      // buffer until then). A cancelled read completes in order, before this yield resumes.
      beast::error_code ignored;
      c.stream.socket().cancel(ignored);
      while (watch.pending) co_await asio::post(c.stream.get_executor(), asio::use_awaitable);
    }
    if (watch.peer_gone) {
      // The handler was cancelled (and may have thrown for it): nobody is there to answer.
      // The session's cancellation is reset so that closing (a TLS shutdown) may still await.
      co_await asio::this_coro::reset_cancellation_state();
      break;
    }
    if (threw) {
      log::event(log::Level::error, "handler threw",
                 {{"request_id", request.request_id},
                  {"method", to_string(request.method)},
                  {"path", request.path},
                  {"error", what}});
      if (writer.begun()) break;  // part of the body is out: only closing tells the client
      response.reset();
      response.error(500, "internal error: " + what);
    }
    response.stream = nullptr;

    permit.release();  // the request is done: its tenant's slot is free before the reply leaves
    if (writer.begun()) {
      // The handler sent its response in parts: end the body; the connection carries on
      // only if every part went out and the framing allows it.
      const bool ended = co_await writer.end();
      if (log::access_enabled()) {
        log_access(request, writer.status(), writer.body_bytes(), response.timing,
                   ms_since(trace.received));
      }
      body.swap(body_storage);
      if (!ended || !writer.keep_alive() || c.stopping) break;
      continue;
    }
    const bool keep_alive = req.keep_alive() && !c.stopping;
    body.swap(body_storage);  // keep the request buffer's capacity for the next request
    const double total_ms = ms_since(trace.received);
    write_head(head, version, response, keep_alive, trace, total_ms);
    const std::array<asio::const_buffer, 2> message{
        asio::buffer(head),
        asio::buffer(response.body.data(),
                     request.method == Method::head ? 0 : response.body.size())};
    c.stream.expires_after(std::chrono::milliseconds(config.write_timeout_ms));
    auto [wec, wn] = co_await asio::async_write(io, message, use_tuple);
    if (log::access_enabled()) {
      log_access(request, response.status, response.body.size(), response.timing, total_ms);
    }
    if (wec || !keep_alive) break;
  }
}

void HttpServer::State::remove(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mutex);
  connections.erase(connection->self);
  if (stopping && connections.empty()) {
    asio::post(acceptor.get_executor(), [self = shared_from_this()] { self->drain_timer.cancel(); });
  }
}

HttpServer::HttpServer(asio::any_io_executor executor, ServerConfig config, const Router& router)
    : state_(std::make_shared<State>(std::move(executor), std::move(config), router)) {}

HttpServer::~HttpServer() = default;

Status HttpServer::listen() {
  auto& s = *state_;
  if (!s.config.tls_cert_file.empty()) {
    if (auto status = make_tls_context(s.config, s.tls); !status.ok()) return status;
  }
  beast::error_code ec;
  const auto address = asio::ip::make_address(s.config.host, ec);
  if (ec) return Status::invalid("server.host: '" + s.config.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, s.config.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(Errc::unavailable, "cannot listen on " + s.config.host + ":" +
                                         std::to_string(s.config.port) + ": " + ec.message());
  }
  s.port = s.acceptor.local_endpoint().port();
  return {};
}

std::uint16_t HttpServer::port() const noexcept { return state_->port; }

void HttpServer::start() {
  asio::co_spawn(state_->acceptor.get_executor(), state_->accept_loop(), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
}

void HttpServer::stop() {
  auto s = state_;
  asio::post(s->acceptor.get_executor(), [s] {
    std::vector<std::shared_ptr<Connection>> open;
    {
      std::lock_guard lock(s->mutex);
      if (s->stopping) return;
      s->stopping = true;
      open.assign(s->connections.begin(), s->connections.end());
    }
    beast::error_code ignored;
    s->acceptor.close(ignored);
    for (auto& c : open) {
      asio::post(c->stream.get_executor(), [c] {
        c->stopping = true;
        if (c->on_stop) {
          c->on_stop();
        } else if (c->idle) {
          // A client may have sent its next request on this keep-alive connection just as the
          // server began to stop: read for a short while longer and answer such a request
          // (with Connection: close) rather than close under it; an idle connection closes
          // once the linger is over.
          auto linger = std::make_shared<asio::steady_timer>(c->stream.get_executor(), kIdleLinger);
          linger->async_wait([c, linger](beast::error_code ec) {
            if (!ec && c->idle) c->stream.cancel();
          });
        }
      });
    }
    if (open.empty()) return;
    s->drain_timer.expires_after(std::chrono::milliseconds(s->config.drain_timeout_ms));
    s->drain_timer.async_wait([s](beast::error_code ec) {
      if (ec) return;  // everything drained in time
      std::lock_guard lock(s->mutex);
      spdlog::warn("drain timeout: closing {} connection(s) still open", s->connections.size());
      for (auto& c : s->connections) {
        asio::post(c->stream.get_executor(), [c] { c->stream.socket().close(); });
      }
    });
  });
}

std::size_t HttpServer::open_connections() const noexcept {
  std::lock_guard lock(state_->mutex);
  return state_->connections.size();
}

}  // namespace coinfer::net
