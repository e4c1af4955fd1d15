// The real HttpServer (src/net/http_server.cpp: Beast's parser with the server's limits, the
// session loop, routing, the OIP and OpenAI handlers, WebSocket upgrades) on a loopback port,
// all on the fuzzer's thread, and one connection's exchange with it: what the http_request and
// websocket_frames targets share.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "coinfer/net/http_server.hpp"
#include "fuzz_support.hpp"

namespace coinfer::fuzz {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Harness {
  Harness() {
    ServerConfig config;  // the server's limits, as coinfer-serve runs with no [server] section,
    config.port = 0;
    // except the body limit: 16 MiB cannot be reached by inputs of libFuzzer's sizes, and the
    // code that enforces it is the same for any limit.
    config.max_body_bytes = 8192;
    server = std::make_unique<net::HttpServer>(service.io.get_executor(), config, service.router);
    if (auto status = server->listen(); !status) fail(status.message());
    server->start();
    endpoint = {asio::ip::make_address("127.0.0.1"), server->port()};
  }

  Service service;
  std::unique_ptr<net::HttpServer> server;
  tcp::endpoint endpoint;
};

// Sends `input` on a new connection to the harness's server and returns all the server
// answered, until it closed the connection. The input is written in two parts: up to the end of
// the first request's header, then the rest. A client upgrading to WebSocket waits for the 101
// before it sends frames (RFC 6455, 4.1); other requests just arrive in two parts. After each
// write the server runs until it has done all it can with the bytes: nothing left ready to run.
// Then the client half-closes: the server must see it, close the connection and release it.
inline std::string exchange(Harness& harness, std::string_view input) {
  asio::io_context& io = harness.service.io;
  io.restart();

  // Connected on the io_context: a blocking connect() can fail with EINTR when libFuzzer's
  // timeout alarm (SIGALRM, every second) lands in it.
  tcp::socket client(io);
  bool connected = false;
  boost::system::error_code connect_error;
  client.async_connect(harness.endpoint, [&](boost::system::error_code ec) {
    connected = true;
    connect_error = ec;
  });
  while (!connected && io.run_one() > 0) {
  }
  if (connect_error) fail("cannot connect to the server: " + connect_error.message());
  // Read all along: an answer larger than the socket buffers must not stall the server.
  std::string answer;
  char chunk[16384];
  bool closed = false;
  std::function<void()> read = [&] {
    client.async_read_some(asio::buffer(chunk), [&](boost::system::error_code ec, std::size_t n) {
      answer.append(chunk, n);
      if (ec) {
        closed = true;
      } else {
        read();
      }
    });
  };
  read();

  const std::size_t header_end = input.find("\r\n\r\n");
  const std::size_t first = header_end == std::string_view::npos ? input.size() : header_end + 4;
  for (std::string_view part : {input.substr(0, first), input.substr(first)}) {
    if (part.empty()) continue;
    bool written = false;
    asio::async_write(client, asio::buffer(part.data(), part.size()),
                      [&](boost::system::error_code, std::size_t) { written = true; });
    while (!written && io.run_one() > 0) {
    }
    while (io.poll() > 0) {
    }
  }
  // Then the client goes: the server must see it and close the connection.
  boost::system::error_code ignored;
  client.shutdown(tcp::socket::shutdown_send, ignored);
  while (!closed && io.run_one() > 0) {
  }
  check(closed, "the server closes the connection once the client has gone");
  while (harness.server->open_connections() > 0 && io.run_one() > 0) {
  }
  check(harness.server->open_connections() == 0, "the server releases the connection");
  client.set_option(asio::socket_base::linger(true, 0), ignored);  // no TIME_WAIT left behind
  client.close(ignored);

  return answer;
}

}  // namespace coinfer::fuzz
