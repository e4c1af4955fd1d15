#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <span>
#include <string>

#include "coinfer/core/config.hpp"
#include "coinfer/net/http_server.hpp"

namespace coinfer::net {

// What a service's main() does once its server listens: prints the one stdout line
// "listening on http://HOST:PORT" (scripts and tests wait for it), runs `io` on
// config.io_threads threads, and on SIGINT or SIGTERM stops the server gracefully
// (HttpServer::stop). Returns when every connection has drained and `io` ran out of work.
//
// `others`: more listeners of the same service (a gRPC server): each one's "listening on URL"
// line follows the HTTP one, and the signal calls each one's stop beside the server's.
struct Listener {
  std::string url;
  std::function<void()> stop;
};
void run_until_signalled(boost::asio::io_context& io, HttpServer& server,
                         const ServerConfig& config, std::span<const Listener> others = {});

}  // namespace coinfer::net
