#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "coinfer/net/http_message.hpp"

namespace coinfer {
class AccessControl;
}

namespace coinfer::net {

// A handler either answers at once or suspends (e.g. to await a batch).
using SyncHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
using AsyncHandler =
    std::function<boost::asio::awaitable<void>(const HttpRequest&, HttpResponse&)>;
using Handler = std::variant<SyncHandler, AsyncHandler>;

// The messages a WebSocket handler sends before its final reply: a streamed answer (tokens as
// they are generated). One per connection, shared by its handlers; each handler's messages
// keep their order and come before its reply.
class WebSocketStream {
 public:
  virtual ~WebSocketStream() = default;
  // Queues `message` and returns once the connection holds fewer than
  // server.ws_max_in_flight unsent messages: a client that reads slowly holds the handler
  // here (backpressure). false once the connection is broken or the client gone: stop.
  virtual boost::asio::awaitable<bool> send(std::string message) = 0;
};

// One WebSocket text message in; `reply` is the last message sent for it, after any the
// handler sent through `stream` (null where a handler runs without a connection). `message`
// is followed by at least `capacity - message.size()` readable bytes (padding for in-place
// JSON parsing). `tenant` is the one whose key opened the connection (null when auth is off);
// the handler applies its per-request limits to each message. Handlers of one connection run
// concurrently; each may suspend (e.g. to await a batch). A client that goes away cancels
// them (terminal cancellation of the handler's coroutine).
using WebSocketHandler = std::function<boost::asio::awaitable<void>(
    std::string_view message, std::size_t capacity, const Tenant* tenant,
    WebSocketStream* stream, std::string& reply)>;

// Maps (method, path) to a handler. Patterns are '/'-separated segments, each literal or a
// parameter "{name}" matching one non-empty segment: "/v2/models/{model}/ready".
class Router {
 public:
  enum class Outcome { found, not_found, method_not_allowed };

  void add(Method method, std::string_view pattern, Handler handler);

  // On `found`, `handler` points at the route's handler and `request.path_params` is filled.
  // On `method_not_allowed`, `allowed` lists the methods the path does accept ("GET, HEAD").
  Outcome match(HttpRequest& request, const Handler*& handler, std::string& allowed) const;

  // A WebSocket endpoint: an upgrade request (GET) for exactly `path` becomes a WebSocket
  // connection whose text messages go to `handler`.
  void add_websocket(std::string_view path, WebSocketHandler handler);
  const WebSocketHandler* websocket(std::string_view path) const noexcept;

  // API keys for every route and WebSocket but the access control's public paths: the server
  // answers 401 without a valid key and 429 past the key's limits before any handler runs,
  // and hands handlers the request's tenant. Null (the default): no keys asked for.
  void set_access_control(const AccessControl* access) noexcept { access_ = access; }
  const AccessControl* access_control() const noexcept { return access_; }

 private:
  struct Route {
    Method method;
    std::vector<std::string> segments;  // "{name}" for parameters
    Handler handler;
  };
  std::vector<Route> routes_;
  std::vector<std::pair<std::string, WebSocketHandler>> websockets_;
  const AccessControl* access_ = nullptr;
};

}  // namespace coinfer::net
