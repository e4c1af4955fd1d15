// The coroutine HttpClient against the real server, and coinfer-loadgen run as a user runs it.
#include "coinfer/client/http_client.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "test_process.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;
using client::Failure;
using client::HttpClient;
using client::HttpResult;


namespace {

// An identity-model request with `values` FP32 elements 0.5, 1.5, ... (test_support's
// infer_body, written with appends: GCC 12 reports a false -Wstringop-overflow in that one's
// operator+ chain when it is compiled into this file).
std::string request_body(int values, std::string_view id = {}) {
  std::string body = "{";
  if (!id.empty()) body.append("\"id\":\"").append(id).append("\",");
  body.append(R"("inputs":[{"name":"INPUT0","shape":[1,)").append(std::to_string(values));
  body.append(R"(],"datatype":"FP32","data":[)");
  for (int i = 0; i < values; ++i) body.append(i ? "," : "").append(std::to_string(i)).append(".5");
  body.append("]}]}");
  return body;
}

Status infer_once(asio::io_context& io, HttpClient& http, HttpResult& out) {
  static const std::string body = request_body(4);
  return run_task(io, client::infer(http, "identity", body, out));
}

// Polls (bounded) until the server has `n` connections open.
bool wait_open_connections(TestServer& server, std::size_t n) {
  for (int i = 0; i < 200 && server.server().open_connections() != n; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  return server.server().open_connections() == n;
}

}  // namespace

TEST_CASE("the client speaks the OIP endpoints: health, metadata, infer") {
  TestServer server;
  asio::io_context io;
  HttpClient http(io.get_executor(), "127.0.0.1", server.port());
  HttpResult out;

  CHECK(run_task(io, client::health_live(http, out)).ok());
  CHECK(out.status == 200);
  CHECK(out.body == R"({"live":true})");
  CHECK(out.content_type == "application/json");
  CHECK(out.keep_alive);

  CHECK(run_task(io, client::health_ready(http, out)).ok());
  CHECK(out.body == R"({"ready":true})");

  CHECK(run_task(io, client::model_metadata(http, "identity", out)).ok());
  CHECK(out.body.find(R"("name":"identity")") != std::string::npos);

  const std::string request = request_body(3, "c-1");
  CHECK(run_task(io, client::infer(http, "identity", request, out)).ok());
  CHECK(out.status == 200);
  CHECK(out.body.find(R"("id":"c-1")") != std::string::npos);
  CHECK(out.body.find(R"({"name":"OUTPUT1","datatype":"FP32","shape":[1],"data":[4.5]})") !=
        std::string::npos);
}

TEST_CASE("the client reports HTTP errors as responses, and the OIP helpers as a Status") {
  TestServer server;
  asio::io_context io;
  HttpClient http(io.get_executor(), "127.0.0.1", server.port());
  HttpResult out;

  const std::string request = request_body(2);
  const Status raw = run_task(io, http.request(net::Method::post, "/v2/models/nope/infer", request,
                                               "application/json", out));
  CHECK(raw.ok());  // a response arrived
  CHECK(out.status == 404);
  CHECK(out.failure == Failure::none);

  const Status status = run_task(io, client::infer(http, "nope", request, out));
  CHECK(status.code() == Errc::not_found);
  CHECK(status.message() == R"(HTTP 404: {"error":"unknown model 'nope'"})");

  const Status bad = run_task(io, client::infer(http, "identity", "{", out));
  CHECK(bad.code() == Errc::invalid_argument);
  CHECK(out.status == 400);
  CHECK(http.connections_opened() == 1);  // error responses keep the connection
}

TEST_CASE("the client sends sequential requests over one pooled connection") {
  TestServer server;
  asio::io_context io;
  HttpClient http(io.get_executor(), "127.0.0.1", server.port());
  HttpResult out;
  for (int i = 0; i < 200; ++i) REQUIRE(infer_once(io, http, out).ok());
  CHECK(http.connections_opened() == 1);
  CHECK(http.idle_connections() == 1);
  CHECK(server.server().open_connections() == 1);
}

TEST_CASE("the client gives concurrent requests separate connections and bounds its idle pool") {
  TestServer server;
  asio::io_context io;
  HttpClient http(io.get_executor(), "127.0.0.1", server.port(), /*max_idle_connections=*/3);
  const std::string body = request_body(8);
  std::vector<HttpResult> results(8);
  int ok = 0;
  for (auto& r : results) {
    asio::co_spawn(
        io,
        [&http, &body, &ok, &r]() -> asio::awaitable<void> {
          if ((co_await client::infer(http, "identity", body, r)).ok()) ++ok;
        },
        asio::detached);
  }
  io.run();
  CHECK(ok == 8);
  CHECK(http.connections_opened() == 8);
  CHECK(http.idle_connections() == 3);
  CHECK(wait_open_connections(server, 3));
  http.close_idle();
  CHECK(wait_open_connections(server, 0));
}

TEST_CASE("the client replaces a pooled connection transparently after the server restarts") {
  asio::io_context io;
  HttpResult out;
  std::uint16_t port = 0;
  std::optional<HttpClient> http;
  {
    TestServer first;
    port = first.port();
    http.emplace(io.get_executor(), "127.0.0.1", port);
    REQUIRE(infer_once(io, *http, out).ok());
    CHECK(http->idle_connections() == 1);
  }  // stops the server: the pooled connection is now closed by the peer
  ServerConfig config = test_config();
  config.port = port;
  TestServer second(config);
  const Status status = infer_once(io, *http, out);
  CHECK_MESSAGE(status.ok(), status.message());
  CHECK(out.status == 200);
  CHECK(http->connections_opened() == 2);
  CHECK(second.server().open_connections() == 1);
}

TEST_CASE("the client replaces a pooled connection the server closed on idle timeout") {
  ServerConfig config = test_config();
  config.idle_timeout_ms = 50;
  TestServer server(config);
  asio::io_context io;
  HttpClient http(io.get_executor(), "127.0.0.1", server.port());
  HttpResult out;
  REQUIRE(infer_once(io, http, out).ok());
  REQUIRE(wait_open_connections(server, 0));
  const Status status = infer_once(io, http, out);
  CHECK_MESSAGE(status.ok(), status.message());
  CHECK(http.connections_opened() == 2);
}

TEST_CASE("the client reports a refused connection as Errc::unavailable naming the address") {
  asio::io_context io;
  std::uint16_t port = 0;
  {
    tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  HttpClient http(io.get_executor(), "127.0.0.1", port);
  HttpResult out;
  const Status status = run_task(io, client::health_live(http, out));
  CHECK(status.code() == Errc::unavailable);
  CHECK(out.failure == Failure::connect);
  CHECK(out.status == 0);
  CHECK(status.message().find("cannot connect to 127.0.0.1:" + std::to_string(port)) == 0);
}

TEST_CASE("the client fails a request to a server that never answers after request_timeout_ms") {
  asio::io_context io;
  // Listens (the kernel completes the handshake) but never reads or answers.
  tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
  HttpClient http(io.get_executor(), "127.0.0.1", silent.local_endpoint().port(),
                  client::HttpClientConfig{.request_timeout_ms = 100});
  HttpResult out;
  const auto start = std::chrono::steady_clock::now();
  const Status status = run_task(io, client::health_live(http, out));
  CHECK(status.code() == Errc::deadline_exceeded);
  CHECK(out.failure == Failure::timeout);
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);
  CHECK(http.idle_connections() == 0);
}

TEST_CASE("the client refuses a response whose status is below 100 as malformed") {
  asio::io_context io;
  tcp::acceptor server(io, {asio::ip::make_address("127.0.0.1"), 0});
  // Answers the first request with "HTTP/1.1 000 ...", then closes.
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        tcp::socket socket = co_await server.async_accept(asio::use_awaitable);
        std::string request;
        co_await asio::async_read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n",
                                        asio::use_awaitable);
        const std::string answer = "HTTP/1.1 000 Nothing\r\nContent-Length: 0\r\n\r\n";
        co_await asio::async_write(socket, asio::buffer(answer), asio::use_awaitable);
      },
      asio::detached);
  HttpClient http(io.get_executor(), "127.0.0.1", server.local_endpoint().port());
  HttpResult out;
  const Status status = run_task(io, client::health_live(http, out));
  CHECK(status.code() == Errc::unavailable);
  CHECK(out.failure == Failure::protocol);
  CHECK(out.status == 0);
  CHECK_MESSAGE(status.message().find("status") != std::string::npos, status.message());
}

#ifdef COINFER_LOADGEN_PATH
namespace {

// Runs coinfer-loadgen with `args`, capturing stdout (stderr passes through).
ProcessResult run_loadgen(std::vector<std::string> args) {
  return run_process(COINFER_LOADGEN_PATH, args);
}

std::string infer_url(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port) + "/v2/models/identity/infer";
}

}  // namespace

TEST_CASE("coinfer-loadgen runs an open loop and reports JSON with no errors") {
  TestServer server;
  const auto run = run_loadgen({"--url", infer_url(server.port()), "--body", request_body(16),
                                "--mode", "open", "--rate", "100", "--duration-s", "1",
                                "--warmup-s", "0.2", "--connections", "4", "--json"});
  REQUIRE(run.exit_code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(run.out);
  CHECK(std::string_view(json["mode"]) == "open");
  CHECK(double(json["rate"]) == 100.0);
  CHECK(double(json["duration_s"]) == 1.0);
  CHECK(int64_t(json["requests"]) >= 95);
  CHECK(int64_t(json["requests"]) <= 101);
  CHECK(int64_t(json["ok"]) == int64_t(json["requests"]));
  CHECK(double(json["throughput_rps"]) >= 95.0);
  CHECK(int64_t(json["errors"]) == 0);
  CHECK(simdjson::dom::object(json["errors_by_status"]).size() == 0);
  const auto latency = json["latency_us"];
  CHECK(double(latency["p50"]) > 0.0);
  CHECK(double(latency["p50"]) <= double(latency["p90"]));
  CHECK(double(latency["p90"]) <= double(latency["p99"]));
  CHECK(double(latency["p99"]) <= double(latency["p999"]));
  CHECK(double(latency["p999"]) <= double(latency["max"]));
  CHECK(double(latency["mean"]) > 0.0);
}

TEST_CASE("coinfer-loadgen runs a closed loop and counts error statuses by code") {
  TestServer server;
  const auto run = run_loadgen(
      {"--url", "http://127.0.0.1:" + std::to_string(server.port()) + "/v2/models/nope/infer",
       "--body", request_body(4), "--concurrency", "2", "--duration-s", "0.3", "--warmup-s", "0",
       "--json"});
  REQUIRE(run.exit_code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(run.out);
  CHECK(std::string_view(json["mode"]) == "closed");
  CHECK(int64_t(json["concurrency"]) == 2);
  CHECK(int64_t(json["requests"]) > 0);
  CHECK(int64_t(json["ok"]) == 0);
  CHECK(int64_t(json["errors_by_status"]["404"]) == int64_t(json["requests"]));
}

TEST_CASE("coinfer-loadgen --header sends its lines with every request: binary tensor data") {
  TestServer server;
  // The JSON header, then INPUT0's two FP32 elements as raw bytes.
  std::string body =
      R"({"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  const std::string header_length = std::to_string(body.size());
  const float values[2] = {1.0f, 2.0f};
  body.append(reinterpret_cast<const char*>(values), sizeof values);
  char path[] = "/tmp/coinfer-loadgen-body-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size()));
  close(fd);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--url", infer_url(server.port()), "--body-file", path,
                                     "--content-type", "application/octet-stream",
                                     "--concurrency", "2", "--duration-s", "0.3",
                                     "--warmup-s", "0", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_loadgen(args);
  };
  const auto with = run({"--header", "Inference-Header-Content-Length: " + header_length});
  const auto without = run({});
  const auto bad = run({"--header", "no colon here"});
  unlink(path);
  REQUIRE(with.exit_code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element ok = parser.parse(with.out);
  CHECK(int64_t(ok["requests"]) > 0);
  CHECK(int64_t(ok["ok"]) == int64_t(ok["requests"]));
  // Without the header the body is not JSON the server can take.
  REQUIRE(without.exit_code == 0);
  simdjson::dom::element refused = parser.parse(without.out);
  CHECK(int64_t(refused["ok"]) == 0);
  CHECK(int64_t(refused["errors"]) == int64_t(refused["requests"]));
  CHECK(bad.exit_code != 0);  // a header line without "Name:" is refused at start
}

TEST_CASE("coinfer-loadgen --find-max-qps reports each step and the highest passing rate") {
  TestServer server;
  const auto run =
      run_loadgen({"--url", infer_url(server.port()), "--body", request_body(4), "--find-max-qps",
                   "--p99-ms", "500", "--start-rate", "50", "--max-rate", "200", "--step-s", "0.3",
                   "--warmup-s", "0.1", "--json"});
  REQUIRE(run.exit_code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(run.out);
  CHECK(std::string_view(json["mode"]) == "find-max-qps");
  CHECK(double(json["max_qps"]) == 200.0);
  const auto steps = simdjson::dom::array(json["steps"]);
  CHECK(steps.size() == 3);  // 50, 100, 200 (the cap)
  for (auto step : steps) CHECK(bool(step["pass"]));
}
#endif
