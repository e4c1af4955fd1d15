// The coroutine WebSocket client and WsInferSession against the real server's /v2/ws, and
// coinfer-loadgen over WebSocket as a user runs it.
#include "coinfer/client/ws_client.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/beast/websocket.hpp>
#include <charconv>
#include <optional>

#include "test_process.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;
using client::Failure;
using client::WsClient;
using client::WsInferResult;
using client::WsInferSession;
namespace websocket = beast::websocket;


namespace {

// An identity-model request with one FP32 element.
std::string one_value(float value) {
  char digits[32];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  return std::string(R"({"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[)") +
         std::string(digits, end) + "]}]}";
}

// A WebSocket peer on a thread that accepts one connection and reads; with `drop` it closes
// the socket (no closing handshake) after the first message, else it never answers.
class MuteWsServer {
 public:
  explicit MuteWsServer(bool drop) : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, drop] {
      websocket::stream<tcp::socket> ws(acceptor_.accept());
      beast::error_code ec;
      ws.accept(ec);
      beast::flat_buffer buffer;
      if (drop) {
        if (!ec) ws.read(buffer, ec);
        ws.next_layer().close(ec);  // no closing handshake
        return;
      }
      while (!ec) ws.read(buffer, ec);  // until the client's closing handshake
    });
  }
  ~MuteWsServer() { thread_.join(); }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("a WsClient sends while it receives, and close ends the pending receive") {
  TestServer server;
  asio::io_context io;
  WsClient ws(io.get_executor());
  std::vector<std::string> replies;
  bool reader_ended = false;
  const auto reader = [&]() -> asio::awaitable<void> {
    std::string message;
    while ((co_await ws.receive(message)).ok()) replies.push_back(message);
    reader_ended = true;
  };
  const auto writer = [&](std::string id) {
    return [&ws, id]() -> asio::awaitable<void> {
      std::string text = one_value(1.5f);
      text.insert(1, R"("model_name":"identity","id":")" + id + "\",");
      CHECK((co_await ws.send(text)).ok());
    };
  };
  const auto task = [&]() -> asio::awaitable<int> {
    REQUIRE((co_await ws.connect("127.0.0.1", server.port(), "/v2/ws")).ok());
    CHECK(ws.is_open());
    // One reader, two writers at once.
    auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(executor, reader, asio::detached);
    asio::co_spawn(executor, writer("a"), asio::detached);
    asio::co_spawn(executor, writer("b"), asio::detached);
    asio::steady_timer timer(executor);
    for (int i = 0; i < 200 && replies.size() < 2; ++i) {
      timer.expires_after(5ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
    CHECK((co_await ws.close()).ok());
    CHECK_FALSE(ws.is_open());
    co_return 0;
  };
  run_task(io, task());  // returns once the reader has ended too
  CHECK(reader_ended);
  REQUIRE(replies.size() == 2);
  const bool a_first = replies[0].find(R"("id":"a")") != std::string::npos;
  CHECK(replies[a_first ? 1 : 0].find(R"("id":"b")") != std::string::npos);
  CHECK(replies[0].find(R"("data":[1.5])") != std::string::npos);
}

TEST_CASE("a WsClient connecting to a path that is no websocket endpoint gets the HTTP status") {
  TestServer server;
  asio::io_context io;
  WsClient ws(io.get_executor());
  const Status status = run_task(io, ws.connect("127.0.0.1", server.port(), "/v2/health/live"));
  CHECK(status.code() == Errc::unavailable);
  CHECK_MESSAGE(status.message().find("declined: HTTP ") != std::string::npos, status.message());
  CHECK_FALSE(ws.is_open());
}

TEST_CASE("many concurrent infers on one WsInferSession each get their own reply") {
  TestServer server;  // batches of up to 64: replies to one batch come back together
  asio::io_context io;
  WsInferSession session(io.get_executor());
  constexpr int kCalls = 300;  // beyond the server's ws_max_in_flight (64): it pushes back
  std::vector<WsInferResult> results(kCalls);
  std::vector<Status> statuses(kCalls);
  const auto task = [&]() -> asio::awaitable<std::size_t> {
    REQUIRE((co_await session.connect("127.0.0.1", server.port())).ok());
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
    int running = kCalls;
    std::size_t peak_in_flight = 0;  // seen as calls complete: the rest are still waiting
    for (int i = 0; i < kCalls; ++i) {
      asio::co_spawn(
          executor,
          [&, i]() -> asio::awaitable<void> {
            const std::string request = one_value(static_cast<float>(i) + 0.25f);
            statuses[i] = co_await session.infer("identity", request, results[i]);
            peak_in_flight = std::max(peak_in_flight, session.in_flight());
            if (--running == 0) all_done.cancel();
          },
          asio::detached);
    }
    co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    CHECK(session.in_flight() == 0);
    CHECK(session.unmatched_replies() == 0);
    CHECK((co_await session.close()).ok());
    co_return peak_in_flight;
  };
  CHECK(run_task(io, task()) > 64);
  for (int i = 0; i < kCalls; ++i) {
    CAPTURE(i);
    REQUIRE_MESSAGE(statuses[i].ok(), statuses[i].message());
    CHECK(results[i].status == 200);
    char digits[32];
    const auto value = static_cast<float>(i) + 0.25f;
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    const std::string own = R"("data":[)" + std::string(digits, end) + "]";
    CHECK_MESSAGE(results[i].body.find(own) != std::string::npos, results[i].body);
    CHECK(results[i].body.find(R"("model_name":"identity")") != std::string::npos);
  }
}

TEST_CASE("a WsInferSession turns error replies into a Status with the server's status") {
  TestServer server;
  asio::io_context io;
  WsInferSession session(io.get_executor());
  WsInferResult out;
  const auto task = [&]() -> asio::awaitable<int> {
    REQUIRE((co_await session.connect("127.0.0.1", server.port())).ok());
    const Status unknown = co_await session.infer("nope", one_value(1), out);
    CHECK(unknown.code() == Errc::not_found);
    CHECK(unknown.message() == "status 404: unknown model 'nope'");
    CHECK(out.status == 404);
    CHECK(out.failure == Failure::none);
    const Status bad = co_await session.infer(
        "identity", R"({"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[1]}]})",
        out);
    CHECK(bad.code() == Errc::invalid_argument);
    CHECK(out.status == 400);
    const Status not_object = co_await session.infer("identity", "[1]", out);
    CHECK(not_object.code() == Errc::invalid_argument);
    CHECK(out.status == 0);                                                   // not sent
    const Status ok = co_await session.infer("identity", one_value(2), out);  // still connected
    CHECK_MESSAGE(ok.ok(), ok.message());
    (void)co_await session.close();
    co_return 0;
  };
  run_task(io, task());
}

TEST_CASE("a WsInferSession call times out after request_timeout_ms when no reply comes") {
  MuteWsServer peer(/*drop=*/false);
  asio::io_context io;
  WsInferSession session(io.get_executor(), {}, /*request_timeout_ms=*/100);
  WsInferResult out;
  const auto started = std::chrono::steady_clock::now();
  const auto task = [&]() -> asio::awaitable<Status> {
    REQUIRE((co_await session.connect("127.0.0.1", peer.port())).ok());
    Status status = co_await session.infer("identity", one_value(1), out);
    CHECK(session.in_flight() == 0);
    (void)co_await session.close();
    co_return status;
  };
  const Status status = run_task(io, task());
  CHECK(status.code() == Errc::deadline_exceeded);
  CHECK(out.failure == Failure::timeout);
  CHECK(std::chrono::steady_clock::now() - started >= 100ms);
}

TEST_CASE("waiting WsInferSession calls fail with Errc::unavailable when the connection drops") {
  MuteWsServer peer(/*drop=*/true);
  asio::io_context io;
  WsInferSession session(io.get_executor());
  WsInferResult out;
  const auto task = [&]() -> asio::awaitable<Status> {
    REQUIRE((co_await session.connect("127.0.0.1", peer.port())).ok());
    co_return co_await session.infer("identity", one_value(1), out);
  };
  const Status status = run_task(io, task());  // ends: the reader loop saw the connection go
  CHECK(status.code() == Errc::unavailable);
  CHECK(out.failure == Failure::closed);
  CHECK_FALSE(session.is_open());
}

#ifdef COINFER_LOADGEN_PATH
namespace {

// Runs coinfer-loadgen with `args`; returns its exit code and stdout (stderr passes through).
std::pair<int, std::string> run_loadgen(std::vector<std::string> args) {
  auto result = run_process(COINFER_LOADGEN_PATH, args);
  return {result.exit_code, std::move(result.out)};
}

}  // namespace

TEST_CASE("coinfer-loadgen runs an open loop over websocket and reports JSON with no errors") {
  TestServer server;
  // The body's own "id" is dropped: loadgen gives every request its own.
  std::string body = one_value(3);
  body.insert(1, R"("id":"mine",)");
  const auto [code, out] =
      run_loadgen({"--url", "ws://127.0.0.1:" + std::to_string(server.port()) + "/v2/ws", "--model",
                   "identity", "--body", body, "--mode", "open", "--rate", "200", "--duration-s",
                   "1", "--warmup-s", "0.2", "--connections", "2", "--json"});
  REQUIRE(code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(out);
  CHECK(std::string_view(json["mode"]) == "open");
  CHECK(std::string_view(json["model"]) == "identity");
  CHECK(int64_t(json["connections"]) == 2);
  CHECK(int64_t(json["requests"]) >= 190);
  CHECK(int64_t(json["requests"]) <= 201);
  CHECK(int64_t(json["ok"]) == int64_t(json["requests"]));
  CHECK(int64_t(json["errors"]) == 0);
  CHECK(simdjson::dom::object(json["errors_by_status"]).size() == 0);
  CHECK(double(json["latency_us"]["p50"]) > 0.0);
  CHECK(double(json["latency_us"]["p50"]) <= double(json["latency_us"]["p99"]));
}

TEST_CASE("coinfer-loadgen over websocket counts error replies by their status") {
  TestServer server;
  const auto [code, out] =
      run_loadgen({"--url", "ws://127.0.0.1:" + std::to_string(server.port()) + "/v2/ws", "--model",
                   "nope", "--body", one_value(1), "--concurrency", "4", "--connections", "1",
                   "--duration-s", "0.3", "--warmup-s", "0", "--json"});
  REQUIRE(code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(out);
  CHECK(std::string_view(json["mode"]) == "closed");
  CHECK(int64_t(json["requests"]) > 0);
  CHECK(int64_t(json["ok"]) == 0);
  CHECK(int64_t(json["errors_by_status"]["404"]) == int64_t(json["requests"]));
}
#endif
