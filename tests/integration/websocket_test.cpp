// The WebSocket endpoint /v2/ws, driven by Beast's client over real sockets.
#include <doctest/doctest.h>

#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <set>

#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;
namespace websocket = beast::websocket;

namespace {

// A server with the models "identity" and "slow".
class WsServer {
 public:
  explicit WsServer(ServerConfig config = test_config()) {
    BatchPolicy policy;
    policy.max_batch_size = 8;
    policy.max_queue_delay = 0us;
    (void)repository_.add(std::make_unique<Endpoint>(
        std::make_shared<IdentityModel>("identity", "1", 8), io_.get_executor(), executor_, policy));
    policy.max_batch_size = 1;
    // Its own executor: while its batch is held, the identity model keeps computing.
    (void)repository_.add(
        std::make_unique<Endpoint>(slow_, io_.get_executor(), slow_executor_, policy));
    add_oip_routes(router_, repository_);
    server_ = std::make_unique<net::HttpServer>(io_.get_executor(), config, router_);
    REQUIRE(server_->listen().ok());
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~WsServer() {
    slow_->set_open(true);
    server_->stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  void stop() { server_->stop(); }
  GatedIdentity& slow() { return *slow_; }
  // Rows the identity model has computed (its requests' batch dimensions summed).
  std::uint64_t identity_rows_computed() {
    Endpoint* e = nullptr;
    REQUIRE(repository_.find("identity", "", nullptr, e).ok());
    return e->metrics().inference_count.value();
  }
  std::size_t slow_queue_depth() {
    Endpoint* e = nullptr;
    REQUIRE(repository_.find("slow", "", nullptr, e).ok());
    return e->batcher().queue_depth();
  }

 private:
  asio::io_context io_;
  std::shared_ptr<GatedIdentity> slow_ = std::make_shared<GatedIdentity>("slow");
  ModelRepository repository_;
  CpuExecutor executor_{1};
  CpuExecutor slow_executor_{1};
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  std::thread thread_;
};

class WsClient {
 public:
  explicit WsClient(std::uint16_t port) : ws_(io_) {
    ws_.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
    ws_.handshake("127.0.0.1", "/v2/ws");
  }
  void send(const std::string& text) {
    ws_.text(true);
    ws_.write(asio::buffer(text));
  }
  void send_binary(const std::string& bytes) {
    ws_.binary(true);
    ws_.write(asio::buffer(bytes));
  }
  std::string receive() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    return beast::buffers_to_string(buffer.data());
  }
  // Reads until the server closes; returns the close code it sent (0 if none).
  int read_until_closed() {
    beast::flat_buffer buffer;
    beast::error_code ec;
    while (!ec) ws_.read(buffer, ec);
    return ec == websocket::error::closed ? static_cast<int>(ws_.reason().code) : 0;
  }
  websocket::stream<tcp::socket>& stream() { return ws_; }

 private:
  asio::io_context io_;
  websocket::stream<tcp::socket> ws_;
};

std::string message(const char* model, const std::string& id, float value) {
  return std::string(R"({"model_name":")") + model + R"(","id":")" + id +
         R"(","inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[)" +
         std::to_string(value) + "]}]}";
}

}  // namespace

TEST_CASE("a websocket infer request is answered with its id") {
  WsServer server;
  WsClient client(server.port());
  client.send(message("identity", "a-1", 2.5f));
  const auto reply = client.receive();
  CHECK(reply.find(R"("model_name":"identity")") != std::string::npos);
  CHECK(reply.find(R"("id":"a-1")") != std::string::npos);
  CHECK(reply.find(R"("data":[2.5])") != std::string::npos);
}

TEST_CASE("websocket replies come back in completion order, not request order") {
  WsServer server;
  server.slow().set_open(false);
  WsClient client(server.port());
  client.send(message("slow", "first", 1));
  server.slow().wait_held();
  client.send(message("identity", "second", 2));
  CHECK(client.receive().find(R"("id":"second")") != std::string::npos);
  server.slow().set_open(true);
  CHECK(client.receive().find(R"("id":"first")") != std::string::npos);
}

TEST_CASE("a connection's in-flight messages are bounded: the server stops reading") {
  auto config = test_config();
  config.ws_max_in_flight = 2;
  WsServer server(config);
  server.slow().set_open(false);
  WsClient client(server.port());
  for (int i = 0; i < 6; ++i) client.send(message("slow", std::to_string(i), 1));
  server.slow().wait_held();
  std::this_thread::sleep_for(100ms);
  // One computing and one queued: the other four are still unread in the socket.
  CHECK(server.slow_queue_depth() == 1);
  server.slow().set_open(true);
  std::set<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    const auto reply = client.receive();
    const auto at = reply.find(R"("id":")") + 6;
    ids.insert(reply.substr(at, reply.find('"', at) - at));
  }
  CHECK(ids == std::set<std::string>{"0", "1", "2", "3", "4", "5"});
}

TEST_CASE("a malformed websocket message gets an error and the connection stays up") {
  WsServer server;
  WsClient client(server.port());
  client.send("{not json");
  const auto error = client.receive();
  CHECK(error.find(R"("error":)") != std::string::npos);
  CHECK(error.find(R"("status":400)") != std::string::npos);
  client.send(R"({"model_name":"nope","id":"z","inputs":[]})");
  CHECK(client.receive() == R"({"id":"z","error":"unknown model 'nope'","status":404})");
  client.send(R"({"model_name":"identity","id":"bad","inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[1]}]})");
  const auto invalid = client.receive();
  CHECK(invalid.find(R"("id":"bad")") != std::string::npos);
  CHECK(invalid.find("needs 2 elements") != std::string::npos);
  client.send(message("identity", "ok", 1));
  CHECK(client.receive().find(R"("id":"ok")") != std::string::npos);
}

TEST_CASE("a binary websocket message is closed with 1003 (unsupported data)") {
  WsServer server;
  WsClient client(server.port());
  client.send_binary(std::string("\x00\x01", 2));
  CHECK(client.read_until_closed() == 1003);
}

TEST_CASE("a silent websocket peer is closed after ws_idle_timeout_ms") {
  auto config = test_config();
  config.ws_idle_timeout_ms = 200;
  WsServer server(config);
  WsClient client(server.port());
  // Not reading means not answering the server's pings.
  std::this_thread::sleep_for(600ms);
  beast::flat_buffer buffer;
  beast::error_code ec;
  const auto started = std::chrono::steady_clock::now();
  client.stream().read(buffer, ec);  // pings are answered here, but the server already gave up
  CHECK(ec);
  CHECK(std::chrono::steady_clock::now() - started < 2s);
}

TEST_CASE("a websocket client that disconnects drops its queued requests before compute") {
  WsServer server;
  server.slow().set_open(false);
  {
    WsClient client(server.port());
    client.send(message("slow", "computing", 1));
    server.slow().wait_held();
    client.send(message("slow", "queued", 2));
    for (int i = 0; i < 200 && server.slow_queue_depth() < 1; ++i) std::this_thread::sleep_for(5ms);
    REQUIRE(server.slow_queue_depth() == 1);
  }  // the client goes away without closing politely
  for (int i = 0; i < 200 && server.slow_queue_depth() > 0; ++i) std::this_thread::sleep_for(5ms);
  CHECK(server.slow_queue_depth() == 0);
}

TEST_CASE("on stop, replies still being written reach a slow reader, then the close is 1001") {
  WsServer server;
  WsClient client(server.port());
  // Replies of about 200 KB each, and a client that does not read yet: the server's writes
  // stall on the full socket buffers, one of them in progress when stop() comes.
  const int count = 40;
  std::string row = "0.5";
  for (int i = 1; i < 40000; ++i) row += ",0.5";
  for (int i = 0; i < count; ++i) {
    client.send(R"({"model_name":"identity","id":")" + std::to_string(i) +
                R"(","inputs":[{"name":"INPUT0","shape":[1,40000],"datatype":"FP32","data":[)" +
                row + "]}]}");
  }
  // Every request read and computed, so the replies wait on the client's full socket. Waited
  // for, not slept: under TSan, reading these 6 MB of JSON outlasted a 300 ms sleep, stop()
  // came first, and messages not yet read are rightly never answered.
  for (int i = 0; i < 2000 && server.identity_rows_computed() < count; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  REQUIRE(server.identity_rows_computed() == std::uint64_t(count));
  server.stop();
  std::this_thread::sleep_for(100ms);  // stop() has reached the connection
  std::set<std::string> ids;
  for (int i = 0; i < count; ++i) {
    const std::string reply = client.receive();
    const auto at = reply.find(R"("id":")");
    REQUIRE(at != std::string::npos);
    ids.insert(reply.substr(at + 6, reply.find('"', at + 6) - at - 6));
  }
  CHECK(ids.size() == std::size_t(count));
  CHECK(client.read_until_closed() == 1001);  // going away
}

TEST_CASE("on stop, messages sent before it are answered even while the connection was at its cap") {
  auto config = test_config();
  config.ws_max_in_flight = 2;
  WsServer server(config);
  server.slow().set_open(false);
  WsClient client(server.port());
  // Two slow requests fill the connection's slots; two more wait unread in the socket.
  client.send(message("slow", "s0", 1));
  client.send(message("slow", "s1", 1));
  for (int i = 0; i < 2; ++i) client.send(message("identity", "i" + std::to_string(i), 1));
  server.slow().wait_held();
  for (int i = 0; i < 200 && server.slow_queue_depth() < 1; ++i) std::this_thread::sleep_for(5ms);
  REQUIRE(server.slow_queue_depth() == 1);
  CHECK(server.identity_rows_computed() == 0);  // unread: the reader is at its cap
  server.stop();
  std::set<std::string> ids;
  for (int i = 0; i < 2; ++i) {  // taken in the drain, answered while the slow ones still wait
    const auto reply = client.receive();
    const auto at = reply.find(R"("id":")") + 6;
    ids.insert(reply.substr(at, reply.find('"', at) - at));
  }
  CHECK(ids == std::set<std::string>{"i0", "i1"});
  server.slow().set_open(true);
  for (int i = 0; i < 2; ++i) {
    const auto reply = client.receive();
    const auto at = reply.find(R"("id":")") + 6;
    ids.insert(reply.substr(at, reply.find('"', at) - at));
  }
  CHECK(ids.size() == 4);
  CHECK(client.read_until_closed() == 1001);
}

TEST_CASE("on stop, an idle websocket connection is closed with 1001 at once") {
  WsServer server;
  WsClient client(server.port());
  client.send(message("identity", "before", 1));
  CHECK(client.receive().find(R"("id":"before")") != std::string::npos);
  const auto started = std::chrono::steady_clock::now();
  server.stop();
  CHECK(client.read_until_closed() == 1001);
  CHECK(std::chrono::steady_clock::now() - started < 2s);  // not the drain timeout
}

namespace {

// A server whose /v2/ws handler streams: the message "COUNT SIZE" is answered with COUNT
// messages "i:<SIZE bytes>" through the connection's WebSocketStream, then the reply "done".
class StreamingWsServer {
 public:
  explicit StreamingWsServer(ServerConfig config = test_config()) {
    router_.add_websocket("/v2/ws", [this](std::string_view message, std::size_t,
                                           const Tenant*, net::WebSocketStream* stream,
                                           std::string& reply) -> asio::awaitable<void> {
      const std::string text(message);
      const auto space = text.find(' ');
      const int count = std::stoi(text.substr(0, space));
      const std::size_t size = std::stoul(text.substr(space + 1));
      for (int i = 0; i < count; ++i) {
        std::string part = std::to_string(i) + ":";
        part.append(size, 'x');
        const bool sent = co_await stream->send(std::move(part));
        if (!sent) {
          refused_ = true;
          co_return;
        }
        ++sent_;
      }
      reply = "done";
    });
    server_ = std::make_unique<net::HttpServer>(io_.get_executor(), config, router_);
    REQUIRE(server_->listen().ok());
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~StreamingWsServer() {
    server_->stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  int sent() const { return sent_.load(); }  // sends that returned true
  bool refused() const { return refused_.load(); }

 private:
  asio::io_context io_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  std::thread thread_;
  std::atomic<int> sent_{0};
  std::atomic<bool> refused_{false};
};

}  // namespace

TEST_CASE("a streaming websocket handler's messages come in order, then its reply") {
  StreamingWsServer server;
  WsClient client(server.port());
  client.send("5 3");
  for (int i = 0; i < 5; ++i) CHECK(client.receive() == std::to_string(i) + ":xxx");
  CHECK(client.receive() == "done");
  client.send("0 1");  // nothing streamed: just the reply
  CHECK(client.receive() == "done");
}

TEST_CASE("a streaming websocket handler waits while its client does not read") {
  auto config = test_config();
  config.ws_max_in_flight = 4;
  StreamingWsServer server(config);
  WsClient client(server.port());
  // 256 messages of 256 KiB (64 MiB): far more than the socket buffers hold.
  client.send("256 262144");
  std::this_thread::sleep_for(300ms);
  const int sent_while_paused = server.sent();
  CHECK(sent_while_paused > 0);
  CHECK(sent_while_paused < 256);  // held by the unread messages
  for (int i = 0; i < 256; ++i) {
    const std::string part = client.receive();
    REQUIRE(part.size() == std::to_string(i).size() + 1 + 262144);
    CHECK(part.rfind(std::to_string(i) + ":", 0) == 0);
  }
  CHECK(client.receive() == "done");
  CHECK(server.sent() == 256);
}

TEST_CASE("a streaming websocket handler stops when its client goes away") {
  auto config = test_config();
  config.ws_max_in_flight = 2;
  StreamingWsServer server(config);
  {
    WsClient client(server.port());
    client.send("100000 65536");
    CHECK(client.receive().rfind("0:", 0) == 0);
    client.stream().next_layer().close();  // gone without a close frame
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!server.refused() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  CHECK(server.refused());
  CHECK(server.sent() < 100000);
}
