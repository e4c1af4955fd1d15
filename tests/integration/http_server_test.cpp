#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;

namespace {

// After any bad request, a fresh connection must still be served.
void check_still_serving(std::uint16_t port) {
  Client client(port);
  CHECK(client.get("/v2/health/live").status == 200);
}

}  // namespace

TEST_CASE("1000 sequential requests share one keep-alive connection") {
  TestServer server;
  Client client(server.port());
  for (int i = 0; i < 1000; ++i) {
    const auto reply = client.post("/v2/models/identity/infer", infer_body(4, std::to_string(i)));
    REQUIRE(reply.status == 200);
    REQUIRE(reply.keep_alive);
    REQUIRE(reply.body.find("\"id\":\"" + std::to_string(i) + "\"") != std::string::npos);
  }
  CHECK(server.server().open_connections() == 1);
}

TEST_CASE("200 concurrent connections are all answered") {
  TestServer server;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 200; ++i) clients.push_back(std::make_unique<Client>(server.port()));
  // Every request is in flight before any response is read.
  for (int i = 0; i < 200; ++i) {
    clients[i]->send(http::verb::post, "/v2/models/identity/infer", infer_body(8, std::to_string(i)),
                     "application/json");
  }
  for (int i = 0; i < 200; ++i) {
    const auto reply = clients[i]->receive();
    REQUIRE(reply.status == 200);
    REQUIRE(reply.body.find("\"id\":\"" + std::to_string(i) + "\"") != std::string::npos);
  }
  CHECK(server.server().open_connections() == 200);
}

TEST_CASE("a malformed request line gets 400 and the server keeps serving") {
  TestServer server;
  const auto raw = raw_exchange(server.port(), "GARBAGE\r\n\r\n");
  CHECK(status_of(raw) == 400);
  CHECK(raw.find("\"error\"") != std::string::npos);
  check_still_serving(server.port());
}

TEST_CASE("a truncated body gets 400 and the server keeps serving") {
  TestServer server;
  const auto raw = raw_exchange(server.port(),
                                "POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\n"
                                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                                "{\"inputs\":",
                                /*half_close=*/true);
  CHECK(status_of(raw) == 400);
  CHECK(raw.find("truncated") != std::string::npos);
  check_still_serving(server.port());
}

TEST_CASE("headers larger than the connection's header arena are read whole, request after request") {
  // ~6 KiB of fields: past the 2 KiB the session keeps per connection, under max_header_bytes.
  TestServer server(test_config());
  Client client(server.port());
  for (int round = 0; round < 3; ++round) {
    http::request<http::string_body> req{http::verb::get, "/v2/health/ready", 11};
    for (int i = 0; i < 20; ++i) {
      req.set("X-Pad-" + std::to_string(i), std::string(280, static_cast<char>('a' + i)));
    }
    const std::string id = "arena-" + std::to_string(round);
    req.set("X-Request-Id", id);
    const Reply big = client.exchange(std::move(req));
    CHECK(big.status == 200);
    CHECK(big.headers["X-Request-Id"] == id);
    CHECK(client.get("/v2/health/live").status == 200);  // a small one after it
  }
}

TEST_CASE("headers over max_header_bytes get 431") {
  auto config = test_config();
  config.max_header_bytes = 1024;
  TestServer server(config);
  const std::string request = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " +
                              std::string(4000, 'a') + "\r\n\r\n";
  const auto raw = raw_exchange(server.port(), request);
  CHECK(status_of(raw) == 431);
  CHECK(raw.find("max_header_bytes") != std::string::npos);
  check_still_serving(server.port());
}

TEST_CASE("a body over max_body_bytes gets 413, declared or chunked") {
  auto config = test_config();
  config.max_body_bytes = 1000;
  TestServer server(config);
  SUBCASE("declared by Content-Length: rejected before the body is read") {
    const auto raw = raw_exchange(server.port(),
                                  "POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\n"
                                  "Content-Length: 5000\r\n\r\n");
    CHECK(status_of(raw) == 413);
    CHECK(raw.find("max_body_bytes") != std::string::npos);
  }
  SUBCASE("chunked: rejected once the limit is passed") {
    std::string chunk(800, 'x');
    const auto raw = raw_exchange(server.port(),
                                  "POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n320\r\n" + chunk +
                                      "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n");
    CHECK(status_of(raw) == 413);
  }
  check_still_serving(server.port());
}

TEST_CASE("a request that stalls past read_timeout_ms gets 408") {
  auto config = test_config();
  config.read_timeout_ms = 200;
  TestServer server(config);
  const auto started = std::chrono::steady_clock::now();
  const auto raw = raw_exchange(server.port(), "GET /v2/health/live HTTP/1.1\r\nHo");
  CHECK(status_of(raw) == 408);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  check_still_serving(server.port());
}

TEST_CASE("an idle keep-alive connection is closed after idle_timeout_ms") {
  auto config = test_config();
  config.idle_timeout_ms = 200;
  TestServer server(config);
  Client client(server.port());
  CHECK(client.get("/v2/health/live").status == 200);
  char byte;
  beast::error_code ec;
  client.socket().read_some(asio::buffer(&byte, 1), ec);  // returns when the server closes
  CHECK(ec == asio::error::eof);
  check_still_serving(server.port());
}

TEST_CASE("connections over max_connections get 503 and the server keeps serving") {
  auto config = test_config();
  config.max_connections = 2;
  TestServer server(config);
  auto first = std::make_unique<Client>(server.port());
  Client second(server.port());
  CHECK(first->get("/v2/health/live").status == 200);
  CHECK(second.get("/v2/health/live").status == 200);
  const auto raw = raw_exchange(server.port(), "");
  CHECK(status_of(raw) == 503);
  CHECK(raw.find("Retry-After") != std::string::npos);
  CHECK(second.get("/v2/health/live").status == 200);
  first.reset();  // frees a slot
  for (int attempt = 0; attempt < 100 && server.server().open_connections() > 1; ++attempt) {
    std::this_thread::sleep_for(10ms);
  }
  check_still_serving(server.port());
}

TEST_CASE("an unknown route is 404 and a wrong method is 405 naming the allowed ones") {
  TestServer server;
  Client client(server.port());
  const auto missing = client.get("/v3/nothing");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("/v3/nothing") != std::string::npos);
  const auto wrong = client.request(http::verb::delete_, "/v2/models/identity/infer");
  CHECK(wrong.status == 405);
  CHECK(wrong.headers[http::field::allow] == "POST");
  CHECK(wrong.body.find("DELETE") != std::string::npos);
  CHECK(client.get("/v2/health/live").status == 200);  // same connection still usable
}

TEST_CASE("stop closes idle connections, finishes one mid-request, and releases the loop") {
  auto server = std::make_unique<TestServer>();
  Client idle(server->port());
  CHECK(idle.get("/v2/health/live").status == 200);
  Client busy(server->port());
  const std::string body = infer_body(4, "in-flight");
  const std::string head = "POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\n"
                           "Content-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n";
  asio::write(busy.socket(), asio::buffer(head + body.substr(0, 10)));
  std::this_thread::sleep_for(100ms);
  server->server().stop();
  std::this_thread::sleep_for(100ms);
  // The idle connection is closed by the server.
  char byte;
  beast::error_code ec;
  idle.socket().read_some(asio::buffer(&byte, 1), ec);
  CHECK(ec == asio::error::eof);
  // The request already started is still answered, with Connection: close.
  asio::write(busy.socket(), asio::buffer(body.substr(10)));
  const auto reply = busy.receive();
  CHECK(reply.status == 200);
  CHECK(reply.body.find("in-flight") != std::string::npos);
  CHECK_FALSE(reply.keep_alive);
  CHECK(server->wait_stopped(5s));
}

TEST_CASE("a request sent on an idle keep-alive connection as stop begins is answered, then the connection closes") {
  auto server = std::make_unique<TestServer>();
  Client client(server->port());
  CHECK(client.get("/v2/health/live").status == 200);
  server->server().stop();
  // The server has begun to stop (the idle connection would be closed by now without the
  // linger); the next request is already on its way.
  std::this_thread::sleep_for(20ms);
  const auto reply = client.get("/v2/health/live");
  CHECK(reply.status == 200);
  CHECK_FALSE(reply.keep_alive);
  char byte;
  beast::error_code ec;
  client.socket().read_some(asio::buffer(&byte, 1), ec);
  CHECK(ec == asio::error::eof);
  CHECK(server->wait_stopped(5s));
}
