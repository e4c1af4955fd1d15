// Internal to net/: one accepted socket, shared by the HTTP session and, after an upgrade,
// the WebSocket session.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <list>
#include <memory>
#include <memory_resource>

#include "coinfer/core/config.hpp"
#include "coinfer/net/router.hpp"

namespace coinfer::net {

// Every member is touched only on the connection's executor (its strand, or the one thread).
struct Connection {
  explicit Connection(boost::asio::ip::tcp::socket socket) : stream(std::move(socket)) {}
  boost::beast::tcp_stream stream;
  // Bound to the session coroutine: emitted (terminal) when the peer leaves while a handler
  // runs, it cancels what the handler awaits.
  boost::asio::cancellation_signal cancel;
  bool idle = true;       // waiting for the first byte of a request: safe to close on stop
  bool stopping = false;  // finish the current request, then close
  // Set while a session has its own way to wind down on stop (WebSocket: answer what is in
  // flight, then close with 1001); called on the connection's executor instead of the idle
  // cancel.
  std::function<void()> on_stop;
  std::list<std::shared_ptr<Connection>>::iterator self;
};

// A request's header fields and target: Beast allocates a node per field, so a session gives
// them a per-connection arena, emptied before each request (http_server.cpp).
using RequestFields = boost::beast::http::basic_fields<std::pmr::polymorphic_allocator<char>>;
using ParsedRequest = boost::beast::http::request<boost::beast::http::string_body, RequestFields>;

// TLS over a connection's TCP stream (https://, wss://).
using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream&>;

// Runs a WebSocket connection after the upgrade request `request` read from `stream` (the
// connection's TCP stream, or TLS over it); see websocket_session.cpp. The request's fields
// live in the session's arena, which outlives this call.
boost::asio::awaitable<void> run_websocket(
    Connection& connection, boost::beast::tcp_stream& stream,
    ParsedRequest request,
    const WebSocketHandler& handler, const ServerConfig& config, const Tenant* tenant);
boost::asio::awaitable<void> run_websocket(
    Connection& connection, TlsStream& stream,
    ParsedRequest request,
    const WebSocketHandler& handler, const ServerConfig& config, const Tenant* tenant);

}  // namespace coinfer::net
