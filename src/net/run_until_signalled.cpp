#include "coinfer/net/run_until_signalled.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

namespace coinfer::net {

void run_until_signalled(boost::asio::io_context& io, HttpServer& server,
                         const ServerConfig& config, std::span<const Listener> others) {
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: draining (up to {} ms)", signal, config.drain_timeout_ms);
    server.stop();
    for (const Listener& other : others) other.stop();
  });

  std::printf("listening on %s://%s:%u\n", config.tls_cert_file.empty() ? "http" : "https",
              config.host.c_str(), server.port());
  for (const Listener& other : others) std::printf("listening on %s\n", other.url.c_str());
  std::fflush(stdout);

  std::vector<std::jthread> workers;
  for (int i = 1; i < config.io_threads; ++i) workers.emplace_back([&io] { io.run(); });
  io.run();
  workers.clear();  // joins
  spdlog::info("stopped");
}

}  // namespace coinfer::net
