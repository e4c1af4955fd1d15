// Helpers for integration tests: an in-process server on 127.0.0.1 port 0 and small blocking
// clients (Beast for well-formed HTTP, raw sockets for malformed bytes).
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "coinfer/models/identity_model.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Runs `task` on `io` until it and everything it started are done.
template <class T>
T run_task(asio::io_context& io, asio::awaitable<T> task) {
  std::optional<T> result;
  std::exception_ptr error;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    error = e;
    result = std::move(value);
  });
  io.restart();
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

// The identity model with a gate: while closed, forward() holds its executor, so requests
// queue behind the held batch.
class GatedIdentity final : public Model {
 public:
  explicit GatedIdentity(std::string name = "identity") : inner_(std::move(name), "1", 8) {}
  const ModelMetadata& metadata() const noexcept override { return inner_.metadata(); }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    std::unique_lock lock(mutex_);
    ++held_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    rows_seen_ += batch.inputs[0].shape[0];
    return inner_.forward(batch, outputs);
  }
  void set_open(bool open) {
    std::lock_guard lock(mutex_);
    open_ = open;
    changed_.notify_all();
  }
  // Until forward() has been entered `calls` times in all.
  void wait_held(int calls = 1) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this, calls] { return held_ >= calls; });
  }
  std::int64_t rows_seen() {
    std::lock_guard lock(mutex_);
    return rows_seen_;
  }

 private:
  IdentityModel inner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int held_ = 0;
  std::int64_t rows_seen_ = 0;
};

inline ServerConfig test_config() {
  ServerConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  return config;
}

// The real server with the identity model, its io_context run by background threads.
class TestServer {
 public:
  // `access`: API keys checked by the server (outlives it); null: none asked for.
  explicit TestServer(ServerConfig config = test_config(), int io_threads = 1,
                      BatchPolicy policy = {}, std::shared_ptr<Model> model = nullptr,
                      const AccessControl* access = nullptr) {
    if (!model) model = std::make_shared<IdentityModel>("identity", "1", policy.max_batch_size);
    (void)repository_.add(
        std::make_unique<Endpoint>(std::move(model), io_.get_executor(), executor_, policy));
    add_oip_routes(router_, repository_);
    router_.set_access_control(access);
    server_ = std::make_unique<net::HttpServer>(io_.get_executor(), config, router_);
    if (auto status = server_->listen(); !status.ok()) throw std::runtime_error(status.message());
    server_->start();
    for (int i = 0; i < io_threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~TestServer() {
    server_->stop();
    for (auto& t : threads_) t.join();
  }
  std::uint16_t port() const { return server_->port(); }
  net::HttpServer& server() { return *server_; }
  ModelRepository& repository() { return repository_; }
  // Waits (bounded) until the io_context has run out of work after stop().
  bool wait_stopped(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!io_.stopped()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  asio::io_context io_;
  ModelRepository repository_;
  CpuExecutor executor_{1};  // joins before the endpoints it runs are destroyed
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  std::vector<std::thread> threads_;
};

struct Reply {
  int status = 0;
  std::string body;
  http::fields headers;
  bool keep_alive = false;
};

// One keep-alive connection; requests are sent one at a time.
class Client {
 public:
  explicit Client(std::uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
  }
  Reply request(http::verb verb, std::string target, std::string body = {},
                std::string content_type = "application/json") {
    send(verb, std::move(target), std::move(body), std::move(content_type));
    return receive();
  }
  Reply get(std::string target) { return request(http::verb::get, std::move(target)); }
  Reply post(std::string target, std::string body) {
    return request(http::verb::post, std::move(target), std::move(body));
  }
  void send(http::verb verb, std::string target, std::string body, std::string content_type) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty() || verb == http::verb::post) req.set(http::field::content_type, content_type);
    req.body() = std::move(body);
    req.prepare_payload();
    http::write(socket_, req);
  }
  // A request with headers of the caller's choosing (Content-Length is set here).
  Reply exchange(http::request<http::string_body> req) {
    req.set(http::field::host, "127.0.0.1");
    req.prepare_payload();
    http::write(socket_, req);
    return receive();
  }
  Reply receive() {
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res);
    return {static_cast<int>(res.result_int()), res.body(), res.base(), res.keep_alive()};
  }
  tcp::socket& socket() { return socket_; }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

// Sends raw bytes (optionally half-closing), then reads until the server closes.
inline std::string raw_exchange(std::uint16_t port, std::string_view bytes, bool half_close = false) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  asio::write(socket, asio::buffer(bytes));
  if (half_close) socket.shutdown(tcp::socket::shutdown_send);
  std::string out;
  beast::error_code ec;
  char chunk[4096];
  for (;;) {
    const auto n = socket.read_some(asio::buffer(chunk), ec);
    if (ec) break;
    out.append(chunk, n);
  }
  return out;
}

inline int status_of(std::string_view raw_response) {
  // "HTTP/1.1 400 Bad Request\r\n..."
  if (raw_response.size() < 12 || raw_response.substr(0, 5) != "HTTP/") return 0;
  return std::stoi(std::string(raw_response.substr(9, 3)));
}

inline std::string infer_body(int values = 4, std::string id = {}) {
  std::string data;
  for (int i = 0; i < values; ++i) data += (i ? "," : "") + std::to_string(i) + ".5";
  std::string body = "{";
  if (!id.empty()) body += "\"id\":\"" + id + "\",";
  body += R"("inputs":[{"name":"INPUT0","shape":[1,)" + std::to_string(values) +
          R"(],"datatype":"FP32","data":[)" + data + "]}]}";
  return body;
}

}  // namespace coinfer::test
