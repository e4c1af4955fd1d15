// The HTTP request reader: the real HttpServer (src/net/http_server.cpp: Beast's parser with
// the server's header and body limits, the session loop, routing, the OIP and OpenAI handlers,
// WebSocket upgrades) over a loopback connection, all on the fuzzer's thread.
//
// Input: the bytes a client sends on one connection (one request, several pipelined, an
// upgrade followed by masked WebSocket frames, or garbage). They are written, the server runs
// until it has nothing left to do with them, then the client half-closes and reads until the
// server closes. The server must close every connection once its peer has gone, answer only with
// HTTP responses, and send JSON where it says application/json.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>

#include "coinfer/net/http_server.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;
namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

struct Harness {
  Harness() {
    ServerConfig config;  // the server's limits, as coinfer-serve runs with no [server] section,
    config.port = 0;
    // except the body limit: 16 MiB cannot be reached by inputs of libFuzzer's sizes, and the
    // code that enforces it is the same for any limit.
    config.max_body_bytes = 8192;
    server = std::make_unique<net::HttpServer>(service.io.get_executor(), config, service.router);
    if (auto status = server->listen(); !status) fuzz::fail(status.message());
    server->start();
    endpoint = {asio::ip::make_address("127.0.0.1"), server->port()};
  }

  fuzz::Service service;
  std::unique_ptr<net::HttpServer> server;
  tcp::endpoint endpoint;
};

// The first response must be a whole HTTP response; its body JSON when it says so.
void check_first_response(std::string_view answer, bool head_request) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.header_limit(1 << 20);
  parser.body_limit(1 << 26);
  parser.skip(head_request);
  boost::beast::error_code ec;
  parser.put(asio::buffer(answer.data(), answer.size()), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec) fuzz::fail("the server's answer is not an HTTP response: " + ec.message());
  const auto& response = parser.get();
  if (response.result() == http::status::switching_protocols || head_request) return;
  if (response[http::field::content_type] == "application/json") {
    check(fuzz::is_json(response.body()), "an application/json body is JSON");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness* harness = new Harness;  // reachable: not a leak
  asio::io_context& io = harness->service.io;
  io.restart();

  // Connected on the io_context: a blocking connect() can fail with EINTR when libFuzzer's
  // timeout alarm (SIGALRM, every second) lands in it.
  tcp::socket client(io);
  bool connected = false;
  boost::system::error_code connect_error;
  client.async_connect(harness->endpoint, [&](boost::system::error_code ec) {
    connected = true;
    connect_error = ec;
  });
  while (!connected && io.run_one() > 0) {
  }
  if (connect_error) fuzz::fail("cannot connect to the server: " + connect_error.message());
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

  // Sent in two writes: up to the end of the first request's header, then the rest. A client
  // upgrading to WebSocket waits for the 101 before it sends frames (RFC 6455, 4.1); other
  // requests just arrive in two parts. After each write the server runs until it has done all
  // it can with the bytes: nothing left ready to run.
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t header_end = input.find("\r\n\r\n");
  const std::size_t first = header_end == std::string_view::npos ? size : header_end + 4;
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
  while (harness->server->open_connections() > 0 && io.run_one() > 0) {
  }
  check(harness->server->open_connections() == 0, "the server releases the connection");
  client.set_option(asio::socket_base::linger(true, 0), ignored);  // no TIME_WAIT left behind
  client.close(ignored);

  fuzz::print_answer("answer", answer);
  if (!answer.empty()) {
    check(answer.starts_with("HTTP/1.1 ") || answer.starts_with("HTTP/1.0 "),
          "the server answers with HTTP responses");
    check_first_response(answer, input.starts_with("HEAD "));
  }
  return 0;
}
