#include "coinfer/client/ws_client.hpp"

#include <simdjson.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <charconv>
#include <chrono>
#include <deque>
#include <unordered_map>
#include <vector>

#include "coinfer/core/json_writer.hpp"

namespace coinfer::client {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
// Received messages get this much spare capacity, so that simdjson can parse them in place.
constexpr std::size_t kMessagePadding = simdjson::SIMDJSON_PADDING;

// A coroutine waiting for its turn to write: woken (its timer cancelled) by the writer before
// it, or cancelled by its caller; `granted` tells which.
struct WriteTurn {
  explicit WriteTurn(const asio::any_io_executor& executor) : wake(executor) {}
  asio::steady_timer wake;
  bool granted = false;
};

}  // namespace

// ---- WsClient ---------------------------------------------------------------------------

struct WsClient::State {
  State(asio::any_io_executor ex, WsClientConfig cfg)
      : executor(std::move(ex)), config(cfg), ws(executor) {}

  enum class Phase { idle, connecting, open, closing, closed };

  asio::any_io_executor executor;
  const WsClientConfig config;
  websocket::stream<beast::tcp_stream> ws;
  beast::flat_buffer read_buffer;
  std::string where;  // "host:port/target", for messages
  Phase phase = Phase::idle;
  // Beast allows one write (or close) at a time beside the read: the one holding the turn
  // writes, the others wait in call order.
  bool writing = false;
  std::deque<WriteTurn*> write_queue;

  static asio::awaitable<Status> connect(std::shared_ptr<State> s, std::string host,
                                         std::uint16_t port, std::string target);
  static asio::awaitable<Status> send(std::shared_ptr<State> s, std::string_view text);
  static asio::awaitable<Status> receive(std::shared_ptr<State> s, std::string& message);
  static asio::awaitable<Status> close(std::shared_ptr<State> s);

  asio::awaitable<bool> take_write_turn();
  void pass_write_turn();
  Status failure(std::string_view what, const beast::error_code& ec);
};

asio::awaitable<bool> WsClient::State::take_write_turn() {
  if (!writing) {
    writing = true;
    co_return true;
  }
  WriteTurn turn(executor);
  turn.wake.expires_at(asio::steady_timer::time_point::max());
  write_queue.push_back(&turn);
  co_await turn.wake.async_wait(use_tuple);
  if (!turn.granted) {  // the caller was cancelled while waiting
    std::erase(write_queue, &turn);
    co_return false;
  }
  co_return true;
}

void WsClient::State::pass_write_turn() {
  if (write_queue.empty()) {
    writing = false;
    return;
  }
  WriteTurn* next = write_queue.front();
  write_queue.pop_front();
  next->granted = true;
  next->wake.cancel();
}

Status WsClient::State::failure(std::string_view what, const beast::error_code& ec) {
  phase = Phase::closed;
  std::string why;
  if (ec == websocket::error::closed) {
    why = "connection closed (code " + std::to_string(ws.reason().code);
    if (!ws.reason().reason.empty()) why += ", " + std::string(ws.reason().reason.c_str());
    why += ')';
  } else if (ec == beast::error::timeout) {
    why = "timed out";
  } else {
    why = ec.message();
  }
  return Status(Errc::unavailable, std::string(what) + " " + where + ": " + why);
}

asio::awaitable<Status> WsClient::State::connect(std::shared_ptr<State> s, std::string host,
                                                 std::uint16_t port, std::string target) {
  if (s->phase != Phase::idle) {
    co_return Status::invalid("WsClient::connect: a client connects once; make a new one");
  }
  s->phase = Phase::connecting;
  const std::string host_port = host + ":" + std::to_string(port);
  s->where = host_port + target;
  tcp::resolver resolver(s->executor);
  auto [rec, results] = co_await resolver.async_resolve(host, std::to_string(port), use_tuple);
  if (rec) {
    s->phase = Phase::closed;
    co_return Status(Errc::unavailable, "cannot resolve " + host + ": " + rec.message());
  }
  const auto timeout = std::chrono::milliseconds(s->config.connect_timeout_ms);
  auto& stream = beast::get_lowest_layer(s->ws);
  stream.expires_after(timeout);
  if (auto [ec, endpoint] = co_await stream.async_connect(results, use_tuple); ec) {
    co_return s->failure("cannot connect to", ec);
  }
  beast::error_code ignored;
  stream.socket().set_option(tcp::no_delay(true), ignored);
  stream.expires_never();  // from here the websocket stream keeps its own timers

  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = timeout;  // the upgrade, and later the closing handshake
  timeouts.idle_timeout = s->config.idle_timeout_ms > 0
                              ? std::chrono::milliseconds(s->config.idle_timeout_ms)
                              : websocket::stream_base::none();
  timeouts.keep_alive_pings = s->config.idle_timeout_ms > 0;
  s->ws.set_option(timeouts);
  s->ws.set_option(websocket::stream_base::decorator(
      [authorization = s->config.authorization](websocket::request_type& req) {
        req.set(beast::http::field::user_agent, "coinfer");
        if (!authorization.empty()) req.set(beast::http::field::authorization, authorization);
      }));
  s->ws.read_message_max(s->config.max_message_bytes);
  websocket::response_type response;
  if (auto [ec] = co_await s->ws.async_handshake(response, host_port, target, use_tuple); ec) {
    if (ec == websocket::error::upgrade_declined) {
      s->phase = Phase::closed;
      co_return Status(Errc::unavailable, "websocket upgrade of " + s->where + " declined: HTTP " +
                                              std::to_string(response.result_int()) + " " +
                                              response.body());
    }
    co_return s->failure("websocket upgrade failed for", ec);
  }
  s->phase = Phase::open;
  co_return Status{};
}

asio::awaitable<Status> WsClient::State::send(std::shared_ptr<State> s, std::string_view text) {
  if (s->phase != Phase::open) co_return Status(Errc::unavailable, "send: not connected");
  if (!co_await s->take_write_turn()) co_return Status(Errc::cancelled, "send: cancelled");
  Status status;
  if (s->phase != Phase::open) {  // closed while this send waited for its turn
    status = Status(Errc::unavailable, "send: connection closed");
  } else {
    s->ws.text(true);
    auto [ec, n] = co_await s->ws.async_write(asio::buffer(text.data(), text.size()), use_tuple);
    if (ec) status = s->failure("send to", ec);
  }
  s->pass_write_turn();
  co_return status;
}

asio::awaitable<Status> WsClient::State::receive(std::shared_ptr<State> s, std::string& message) {
  message.clear();
  if (s->phase != Phase::open && s->phase != Phase::closing) {
    co_return Status(Errc::unavailable, "receive: not connected");
  }
  auto [ec, n] = co_await s->ws.async_read(s->read_buffer, use_tuple);
  if (ec) co_return s->failure("receive from", ec);
  message.reserve(n + kMessagePadding);
  message.assign(static_cast<const char*>(s->read_buffer.data().data()), n);
  s->read_buffer.consume(n);
  co_return Status{};
}

asio::awaitable<Status> WsClient::State::close(std::shared_ptr<State> s) {
  if (s->phase != Phase::open) co_return Status{};
  s->phase = Phase::closing;  // new sends fail; a pending receive sees the close
  if (!co_await s->take_write_turn()) co_return Status(Errc::cancelled, "close: cancelled");
  auto [ec] = co_await s->ws.async_close(websocket::close_code::normal, use_tuple);
  s->phase = Phase::closed;
  s->pass_write_turn();
  if (ec && ec != websocket::error::closed) co_return s->failure("close of", ec);
  co_return Status{};
}

WsClient::WsClient(asio::any_io_executor executor, WsClientConfig config)
    : state_(std::make_shared<State>(std::move(executor), config)) {}

WsClient::~WsClient() {
  // Operations in flight hold the state: closing the socket ends them.
  beast::error_code ignored;
  beast::get_lowest_layer(state_->ws).socket().close(ignored);
}

asio::awaitable<Status> WsClient::connect(std::string host, std::uint16_t port,
                                          std::string target) {
  return State::connect(state_, std::move(host), port, std::move(target));
}
asio::awaitable<Status> WsClient::send(std::string_view text) {
  return State::send(state_, text);
}
asio::awaitable<Status> WsClient::receive(std::string& message) {
  return State::receive(state_, message);
}
asio::awaitable<Status> WsClient::close() {
  return State::close(state_);
}
bool WsClient::is_open() const noexcept {
  return state_->phase == State::Phase::open;
}

// ---- WsInferSession -----------------------------------------------------------------------

namespace {

struct Waiter;
using WaiterMap = std::unordered_map<std::uint64_t, Waiter*>;  // id -> the call awaiting it

// One infer call awaiting its reply. Lives in the calling coroutine's frame; the session's
// map points at it until it is done or gone (timed out, cancelled, its frame destroyed).
struct Waiter {
  Waiter(const asio::any_io_executor& executor, WaiterMap& map, std::uint64_t call_id,
         WsInferResult& result)
      : timer(executor), waiting(map), id(call_id), out(result) {
    waiting.emplace(id, this);
  }
  ~Waiter() {
    if (!done) waiting.erase(id);
  }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  asio::steady_timer timer;  // the call's deadline; cancelled when its reply (or failure) comes
  WaiterMap& waiting;
  const std::uint64_t id;
  WsInferResult& out;
  Status status;
  bool done = false;  // `status` and `out` are final, and the map no longer points here
};

// What the reader needs from a reply: its id, and for an error reply the status and message.
struct ReplyFields {
  std::uint64_t id = 0;
  bool has_id = false;
  std::int64_t status = 200;
  std::string_view error;  // points into the parser: valid until the next parse
  bool is_error = false;
};

bool parse_reply(simdjson::ondemand::parser& parser, const std::string& message, ReplyFields& out) {
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (parser.iterate(message.data(), message.size(), message.capacity()).get(doc) ||
      doc.get_object().get(object)) {
    return false;
  }
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "id") {
      std::string_view id;
      if (field.value().get_string().get(id)) return false;
      const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), out.id);
      out.has_id = ec == std::errc{} && end == id.data() + id.size();
    } else if (key == "error") {
      out.is_error = true;
      if (field.value().get_string().get(out.error)) out.error = "(no message)";
    } else if (key == "status") {
      if (field.value().get_int64().get(out.status)) out.status = 500;
    }
  }
  return true;
}

}  // namespace

struct WsInferSession::State {
  State(asio::any_io_executor ex, WsClientConfig cfg, std::uint32_t timeout_ms)
      : executor(std::move(ex)), client(executor, cfg), request_timeout_ms(timeout_ms) {}

  asio::any_io_executor executor;
  WsClient client;
  const std::uint32_t request_timeout_ms;
  std::uint64_t next_id = 0;
  WaiterMap waiting;
  std::uint64_t unmatched = 0;
  // Message buffers of finished calls, reused by the next ones: a steady stream of calls
  // does not allocate for its messages.
  std::vector<std::string> spare_messages;

  static asio::awaitable<Status> connect(std::shared_ptr<State> s, std::string host,
                                         std::uint16_t port, std::string target);
  static asio::awaitable<void> read_replies(std::shared_ptr<State> s);
  static asio::awaitable<Status> infer(std::shared_ptr<State> s, std::string_view model,
                                       std::string_view request_json, WsInferResult& out);
  void fail_all(const Status& why);
};

asio::awaitable<Status> WsInferSession::State::connect(std::shared_ptr<State> s, std::string host,
                                                       std::uint16_t port, std::string target) {
  Status status = co_await s->client.connect(std::move(host), port, std::move(target));
  if (status.ok()) {
    asio::co_spawn(s->executor, read_replies(s), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
  co_return status;
}

// The one reader: each reply goes to the call waiting for its id, in completion order.
asio::awaitable<void> WsInferSession::State::read_replies(std::shared_ptr<State> s) {
  simdjson::ondemand::parser parser;
  std::string message;
  for (;;) {
    if (Status status = co_await s->client.receive(message); !status.ok()) {
      s->fail_all(status);
      co_return;
    }
    ReplyFields reply;
    const auto it = parse_reply(parser, message, reply) && reply.has_id ? s->waiting.find(reply.id)
                                                                        : s->waiting.end();
    if (it == s->waiting.end()) {
      ++s->unmatched;
      continue;
    }
    Waiter& w = *it->second;
    s->waiting.erase(it);
    w.out.status = reply.is_error ? static_cast<int>(reply.status) : 200;
    if (reply.is_error) {
      w.status = Status(errc_from_http_status(static_cast<int>(reply.status)),
                        "status " + std::to_string(reply.status) + ": " + std::string(reply.error));
    }
    w.out.body.swap(message);  // the caller's old buffer serves the next read
    w.done = true;
    w.timer.cancel();
  }
}

void WsInferSession::State::fail_all(const Status& why) {
  for (auto& [id, w] : waiting) {
    w->status = why;
    w->out.failure = Failure::closed;
    w->done = true;
    w->timer.cancel();
  }
  waiting.clear();
}

asio::awaitable<Status> WsInferSession::State::infer(std::shared_ptr<State> s,
                                                     std::string_view model,
                                                     std::string_view request_json,
                                                     WsInferResult& out) {
  out.status = 0;
  out.body.clear();
  out.failure = Failure::none;
  const auto open = request_json.find_first_not_of(" \t\r\n");
  if (open == std::string_view::npos || request_json[open] != '{') {
    co_return Status::invalid("infer: the request must be a JSON object");
  }
  if (!s->client.is_open()) {
    out.failure = Failure::closed;
    co_return Status(Errc::unavailable, "infer: the session is not connected");
  }

  // {"id":"<id>","model_name":<model>, + the request's fields. The server reads the first
  // "id", and "model_name" from where "id" ends: these two, whatever the request holds.
  std::string message;
  if (!s->spare_messages.empty()) {
    message = std::move(s->spare_messages.back());
    s->spare_messages.pop_back();
  }
  const std::uint64_t id = ++s->next_id;
  message.assign("{\"id\":\"");
  char digits[24];
  message.append(digits, std::to_chars(digits, digits + sizeof digits, id).ptr);
  message.append("\",\"model_name\":");
  json_append_string(message, model);
  const auto rest = request_json.substr(open + 1);
  const auto first = rest.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || rest[first] != '}') message += ',';
  message.append(rest);

  Waiter w(s->executor, s->waiting, id, out);
  if (s->request_timeout_ms > 0) {
    w.timer.expires_after(std::chrono::milliseconds(s->request_timeout_ms));
  } else {
    w.timer.expires_at(asio::steady_timer::time_point::max());
  }
  Status sent = co_await s->client.send(message);
  s->spare_messages.push_back(std::move(message));
  if (!w.done && !sent.ok()) {
    out.failure = sent.code() == Errc::cancelled ? Failure::none : Failure::closed;
    co_return sent;
  }
  if (!w.done) {
    auto [ec] = co_await w.timer.async_wait(use_tuple);
    if (!w.done) {  // the deadline passed, or the caller was cancelled
      if (ec == asio::error::operation_aborted)
        co_return Status(Errc::cancelled, "infer: cancelled");
      out.failure = Failure::timeout;
      co_return Status(Errc::deadline_exceeded, "infer: no reply within " +
                                                    std::to_string(s->request_timeout_ms) +
                                                    " ms (request_timeout_ms)");
    }
  }
  co_return std::move(w.status);
}

WsInferSession::WsInferSession(asio::any_io_executor executor, WsClientConfig config,
                               std::uint32_t request_timeout_ms)
    : state_(std::make_shared<State>(std::move(executor), config, request_timeout_ms)) {}

WsInferSession::~WsInferSession() {
  // The reader loop holds the state: the closing handshake ends it (bounded by
  // connect_timeout_ms, which also limits the closing handshake).
  if (state_->client.is_open()) {
    asio::co_spawn(state_->executor, state_->client.close(), asio::detached);
  }
}

asio::awaitable<Status> WsInferSession::connect(std::string host, std::uint16_t port,
                                                std::string target) {
  return State::connect(state_, std::move(host), port, std::move(target));
}
asio::awaitable<Status> WsInferSession::infer(std::string_view model, std::string_view request_json,
                                              WsInferResult& out) {
  return State::infer(state_, model, request_json, out);
}
asio::awaitable<Status> WsInferSession::close() {
  return state_->client.close();
}
bool WsInferSession::is_open() const noexcept {
  return state_->client.is_open();
}
std::size_t WsInferSession::in_flight() const noexcept {
  return state_->waiting.size();
}
std::uint64_t WsInferSession::unmatched_replies() const noexcept {
  return state_->unmatched;
}

}  // namespace coinfer::client
