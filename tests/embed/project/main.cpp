// An application that owns its io_context and embeds a coinfer server next to its own
// coroutines: one custom route, the OIP v2 routes, and a client that calls both.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <coinfer/models/identity_model.hpp>
#include <coinfer/net/http_server.hpp>
#include <coinfer/protocol/oip_routes.hpp>
#include <coinfer/runtime/cpu_executor.hpp>
#include <cstdio>

namespace asio = boost::asio;
namespace http = boost::beast::http;

asio::awaitable<int> get(std::uint16_t port, const char* target, std::string& body) {
  asio::ip::tcp::socket socket(co_await asio::this_coro::executor);
  co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  co_await http::async_write(socket, req, asio::use_awaitable);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  co_await http::async_read(socket, buffer, res, asio::use_awaitable);
  body = res.body();
  co_return res.result_int();
}

int main() {
  asio::io_context io;
  coinfer::ModelRepository repository;
  coinfer::CpuExecutor executor(1);
  (void)repository.add(std::make_unique<coinfer::Endpoint>(
      std::make_shared<coinfer::IdentityModel>("identity", "1", 8), io.get_executor(), executor,
      coinfer::BatchPolicy{}));
  coinfer::net::Router router;
  coinfer::add_oip_routes(router, repository);
  router.add(coinfer::net::Method::get, "/hello",
             [](const coinfer::net::HttpRequest&, coinfer::net::HttpResponse& res) {
               res.content_type = "text/plain";
               res.body += "hello from the host application";
             });
  coinfer::ServerConfig config;
  config.port = 0;
  coinfer::net::HttpServer server(io.get_executor(), config, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  server.start();

  int failures = 0;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    std::string body;
    if (co_await get(server.port(), "/hello", body) != 200 || body != "hello from the host application") ++failures;
    if (co_await get(server.port(), "/v2/models/identity/ready", body) != 200) ++failures;
    std::printf("embedded server answered: %s\n", body.c_str());
    server.stop();
  }, asio::detached);
  io.run();
  return failures == 0 ? 0 : 1;
}
