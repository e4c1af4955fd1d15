#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/net/router.hpp"

namespace coinfer::net {

// HTTP/1.1 server on C++20 coroutines: one coroutine per connection, each on its own strand
// of the caller's executor, so the caller chooses how many threads run it.
// Limits come from ServerConfig: max_header_bytes (431), max_body_bytes (413),
// read/idle/write timeouts, max_connections (extra connections get 503 and are closed).
class HttpServer {
 public:
  HttpServer(boost::asio::any_io_executor executor, ServerConfig config, const Router& router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens on config.host:config.port. Port 0 picks a free port.
  Status listen();
  std::uint16_t port() const noexcept;
  // Starts accepting on the executor; returns at once.
  void start();
  // Graceful stop, callable from any thread: stops accepting, closes idle keep-alive
  // connections, lets requests already being read or handled finish, and force-closes what
  // is left after drain_timeout_ms. Once everything is closed the server holds no work on
  // the executor, so io_context::run() returns.
  void stop();

  std::size_t open_connections() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace coinfer::net
