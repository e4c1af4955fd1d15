// The client library's reading of what a server sends (src/client/http_client.cpp: Beast's
// response parser with the client's header and body limits, Retry-After, keep-alive, the OIP
// helpers' status mapping; src/client/ws_client.cpp: the upgrade response and the frames after
// it), against a fake server on a loopback port that answers every request with the input.
//
// Input: a control byte, then the bytes the server sends.
//   bit 0 clear, HTTP: the bytes are the response to `infer` (POST /v2/models/m/infer; bit 1:
//     to `health_ready`, a GET). The call ends either with a response (ok only for a 2xx
//     status; else an error naming the status) within the client's limits, or with a failure
//     that says what went wrong: never a crash, a hang or a body over the limit.
//   bit 0 set, WebSocket: bit 1 set: the server answers the upgrade properly (101 with the
//     right Sec-WebSocket-Accept), then sends the bytes as its frames; bit 1 clear: the bytes
//     are the whole answer to the upgrade. The client connects, sends one message and reads
//     messages until the connection ends: each message within max_message_bytes, every
//     failure a Status with a message.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/websocket/detail/hybi13.hpp>
#include <string>
#include <string_view>

#include "coinfer/client/http_client.hpp"
#include "coinfer/client/ws_client.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kLimit = 4096;  // the clients' body, header and message limits here

struct Harness {
  Harness() : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port = acceptor.local_endpoint().port();
  }
  asio::io_context io;
  tcp::acceptor acceptor;
  std::uint16_t port = 0;
};

// One input's exchange: what the server answers, and whether the client's call and the
// server have ended.
struct Exchange {
  std::string_view answer;
  bool upgrade = false;
  bool done = false;      // the client's call returned
  bool finished = false;  // the server's coroutine returned
};

asio::awaitable<void> accept_and_answer(Harness& h, Exchange& x);

// The fake server: for each connection until the client is done, reads the request's header
// and answers with the input (after a proper 101 when upgrading), then closes.
asio::awaitable<void> serve(Harness& h, Exchange& x) {
  co_await accept_and_answer(h, x);
  x.finished = true;
}

asio::awaitable<void> accept_and_answer(Harness& h, Exchange& x) {
  while (!x.done) {
    auto [ec, socket] = co_await h.acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    std::string request;
    auto [rec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(request, 1 << 16),
                                                    "\r\n\r\n", asio::as_tuple(asio::use_awaitable));
    if (rec) continue;
    std::string out;
    if (x.upgrade) {
      std::string_view header(request.data(), n);
      const auto at = header.find("Sec-WebSocket-Key: ");
      std::string_view key;
      if (at != std::string_view::npos) {
        key = header.substr(at + 19);
        key = key.substr(0, key.find("\r\n"));
      }
      boost::beast::websocket::detail::sec_ws_accept_type accept;
      boost::beast::websocket::detail::make_sec_ws_accept(accept, key);
      out = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: ";
      out.append(accept.data(), accept.size());
      out += "\r\n\r\n";
    }
    out += x.answer;
    co_await asio::async_write(socket, asio::buffer(out), asio::as_tuple(asio::use_awaitable));
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    socket.set_option(asio::socket_base::linger(true, 0), ignored);  // no TIME_WAIT left behind
    socket.close(ignored);
  }
}

asio::awaitable<void> http_call(Harness& h, bool health, Exchange& x) {
  client::HttpClientConfig config;
  config.max_response_body_bytes = kLimit;
  config.max_response_header_bytes = kLimit;
  config.connect_timeout_ms = 5'000;
  config.request_timeout_ms = 5'000;
  client::HttpClient http(co_await asio::this_coro::executor, "127.0.0.1", h.port, config);
  client::HttpResult out;
  const Status status = health ? co_await client::health_ready(http, out)
                               : co_await client::infer(http, "m", R"({"inputs":[]})", out);
  fuzz::print_answer("status", status.message());
  if (out.failure == client::Failure::none) {
    check(out.status >= 100 && out.status <= 999, "a response has a three-digit status");
    check(out.body.size() <= kLimit, "a body is within the client's limit");
    check(out.retry_after_s >= -1, "Retry-After is a number of seconds or absent");
    check(status.ok() == (out.status >= 200 && out.status < 300), "ok means a 2xx response");
  } else {
    check(!status.ok(), "a failure is an error");
    check(out.status == 0, "a failure has no status");
  }
  if (!status.ok()) check(!status.message().empty(), "an error says what went wrong");
  x.done = true;
}

asio::awaitable<void> ws_call(Harness& h, Exchange& x) {
  client::WsClientConfig config;
  config.max_message_bytes = kLimit;
  config.connect_timeout_ms = 5'000;
  client::WsClient ws(co_await asio::this_coro::executor, config);
  Status status = co_await ws.connect("127.0.0.1", h.port, "/v2/ws");
  if (status.ok()) {
    status = co_await ws.send(R"({"model_name":"m","inputs":[]})");
    std::string message;
    for (int i = 0; status.ok() && i < 1000; ++i) {
      status = co_await ws.receive(message);
      if (status.ok()) check(message.size() <= kLimit, "a message is within max_message_bytes");
    }
    check(!status.ok(), "the messages end with the connection");
  }
  check(!status.message().empty(), "an error says what went wrong");
  x.done = true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness* harness = new Harness;  // reachable: not a leak
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view answer(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool websocket = control & 1, bit1 = (control & 2) != 0;
  asio::io_context& io = harness->io;
  io.restart();
  Exchange x{answer, websocket && bit1};
  asio::co_spawn(io, serve(*harness, x), asio::detached);
  if (websocket) {
    asio::co_spawn(io, ws_call(*harness, x), asio::detached);
  } else {
    asio::co_spawn(io, http_call(*harness, bit1, x), asio::detached);
  }
  while (!x.done && io.run_one() > 0) {
  }
  check(x.done, "the call ends");
  harness->acceptor.cancel();  // the server's pending accept, if it waits in one
  while (!x.finished && io.run_one() > 0) {
  }
  check(x.finished, "the fake server ends");
  while (io.poll() > 0) {
  }
  return 0;
}
