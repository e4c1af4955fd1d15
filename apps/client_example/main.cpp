// coinfer-client-example: the client library from an Asio application. Against a running
// coinfer-serve (its default config serves the digits classifier):
//
//   build/coinfer-serve &
//   build/coinfer-client-example --host 127.0.0.1 --port 8000
//
// checks health, reads the model's metadata, classifies one digit over HTTP, then a burst of
// digits over one WebSocket connection, all in flight at once: coroutines on one io_context.
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <cstdio>

#include "coinfer/client/http_client.hpp"
#include "coinfer/client/ws_client.hpp"

namespace asio = boost::asio;
using namespace coinfer;

namespace {

// Held-out 8x8 digits (pixels 0..16), labelled 0, 3 and 7, from
// assets/digits_mlp/test_split.safetensors.
constexpr const char* kDigits[] = {
    "0,0,9,15,5,0,0,0,0,3,15,15,16,4,0,0,0,10,14,0,9,14,0,0,0,8,12,0,0,12,5,0,0,8,8,0,0,10,8,0,"
    "0,5,14,0,0,12,8,0,0,0,16,7,12,16,4,0,0,0,9,16,15,7,0,0",
    "0,0,6,14,16,16,2,0,0,5,16,13,11,16,0,0,0,0,7,2,15,12,0,0,0,0,0,7,16,13,1,0,0,0,0,0,6,15,10,"
    "0,0,0,0,0,0,15,9,0,0,0,3,11,8,16,6,0,0,0,7,16,16,8,0,0",
    "0,0,2,13,16,9,0,0,0,0,12,12,7,16,3,0,0,1,14,3,0,16,4,0,0,0,0,4,10,16,6,0,0,0,0,13,16,16,9,"
    "0,0,0,0,5,13,1,0,0,0,0,0,11,9,0,0,0,0,0,1,16,4,0,0,0"};

std::string infer_request(const char* pixels) {
  return std::string(R"({"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":[)") +
         pixels + "]}]}";
}

// The "label" output of an infer response; -1 when there is none.
std::int64_t label_of(const std::string& response) {
  simdjson::dom::parser parser;
  simdjson::dom::array outputs;
  if (parser.parse(response)["outputs"].get(outputs)) return -1;
  for (auto output : outputs) {
    std::string_view name;
    std::int64_t label = -1;
    if (!output["name"].get(name) && name == "label" && !output["data"].at(0).get(label)) {
      return label;
    }
  }
  return -1;
}

asio::awaitable<int> run(std::string host, std::uint16_t port, std::string model, int burst) {
  const auto executor = co_await asio::this_coro::executor;
  client::HttpClient http(executor, host, port);
  client::HttpResult out;
  Status status = co_await client::health_ready(http, out);
  if (status.ok()) std::printf("ready: %s\n", out.body.c_str());
  if (status.ok()) status = co_await client::model_metadata(http, model, out);
  if (status.ok()) std::printf("metadata: %s\n", out.body.c_str());
  if (status.ok()) status = co_await client::infer(http, model, infer_request(kDigits[0]), out);
  if (!status.ok()) {
    std::fprintf(stderr, "coinfer-client-example: %s\n", status.message().c_str());
    co_return 1;
  }
  std::printf("HTTP infer: label %lld\n", static_cast<long long>(label_of(out.body)));

  client::WsInferSession ws(executor);
  if (status = co_await ws.connect(host, port); !status.ok()) {
    std::fprintf(stderr, "coinfer-client-example: %s\n", status.message().c_str());
    co_return 1;
  }
  // Every call in flight at once on the one connection; the session matches replies by id.
  std::vector<client::WsInferResult> results(static_cast<std::size_t>(burst));
  int running = burst, failed = 0;
  asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
  for (int i = 0; i < burst; ++i) {
    asio::co_spawn(
        executor,
        [&, i]() -> asio::awaitable<void> {
          const auto request = infer_request(kDigits[i % 3]);
          const Status s = co_await ws.infer(model, request, results[static_cast<std::size_t>(i)]);
          if (!s.ok()) std::fprintf(stderr, "websocket infer %d: %s\n", i, s.message().c_str());
          failed += s.ok() ? 0 : 1;
          if (--running == 0) all_done.cancel();
        },
        asio::detached);
  }
  co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  std::printf("WebSocket burst of %d: labels", burst);
  for (const auto& r : results) std::printf(" %lld", static_cast<long long>(label_of(r.body)));
  std::printf("\n");
  (void)co_await ws.close();
  co_return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"coinfer-client-example: the coinfer client library against a running server"};
  std::string host = "127.0.0.1", model = "digits";
  std::uint16_t port = 8000;
  int burst = 24;
  cli.add_option("--host", host, "server address")->capture_default_str();
  cli.add_option("--port", port, "server port")->capture_default_str();
  cli.add_option("--model", model, "a model taking INPUT0 FP32 [1,64]")->capture_default_str();
  cli.add_option("--burst", burst, "concurrent WebSocket infers")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);

  asio::io_context io(1);
  int exit_code = 1;
  asio::co_spawn(io, run(host, port, model, burst), [&](std::exception_ptr e, int code) {
    if (e) std::rethrow_exception(e);
    exit_code = code;
  });
  io.run();
  return exit_code;
}
