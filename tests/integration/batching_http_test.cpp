// The batcher behind real HTTP connections.
#include <doctest/doctest.h>

#include <condition_variable>

#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;

namespace {

std::string metrics_line(Client& client, std::string_view name) {
  const auto body = client.get("/metrics").body;
  const auto at = body.find(std::string(name) + "{");
  if (at == std::string::npos) return {};
  return body.substr(at, body.find('\n', at) - at);
}

}  // namespace

TEST_CASE("a client that disconnects while queued is dropped before compute") {
  BatchPolicy policy;
  policy.max_batch_size = 1;
  auto model = std::make_shared<GatedIdentity>();
  TestServer server(test_config(), 1, policy, model);
  model->set_open(false);

  Client running(server.port());
  running.send(http::verb::post, "/v2/models/identity/infer", infer_body(2, "running"),
               "application/json");
  model->wait_held();
  {
    Client leaving(server.port());
    leaving.send(http::verb::post, "/v2/models/identity/infer", infer_body(2, "leaving"),
                 "application/json");
    std::this_thread::sleep_for(50ms);  // queued behind the held batch
  }  // closes its connection
  Client observer(server.port());
  std::string cancelled;
  for (int i = 0; i < 500 && cancelled.find(" 1") == std::string::npos; ++i) {
    cancelled = metrics_line(observer, "coinfer_inference_cancelled_total");
    std::this_thread::sleep_for(10ms);
  }
  CHECK(cancelled == R"(coinfer_inference_cancelled_total{model="identity",version="1"} 1)");
  model->set_open(true);
  CHECK(running.receive().status == 200);
  CHECK(model->rows_seen() == 1);  // the cancelled request never reached the model
}

TEST_CASE("a request pipelined behind one held in the batcher is answered after it") {
  // The second request's bytes arrive while the first one's handler waits in the batcher:
  // the disconnect watch reads them, and the session must serve them next, in order.
  BatchPolicy policy;
  policy.max_batch_size = 1;
  auto model = std::make_shared<GatedIdentity>();
  TestServer server(test_config(), 1, policy, model);
  model->set_open(false);
  Client client(server.port());
  client.send(http::verb::post, "/v2/models/identity/infer", infer_body(2, "first"),
              "application/json");
  model->wait_held();
  client.send(http::verb::post, "/v2/models/identity/infer", infer_body(2, "second"),
              "application/json");
  std::this_thread::sleep_for(50ms);  // read by the watch while the first is held
  model->set_open(true);
  const Reply first = client.receive();
  const Reply second = client.receive();
  CHECK(first.status == 200);
  CHECK(first.body.find(R"("id":"first")") != std::string::npos);
  CHECK(second.status == 200);
  CHECK(second.body.find(R"("id":"second")") != std::string::npos);
  CHECK(model->rows_seen() == 2);
}

TEST_CASE("concurrent HTTP requests are batched and /metrics shows it") {
  BatchPolicy policy;
  policy.max_batch_size = 64;
  policy.max_queue_delay = 20ms;
  TestServer server(test_config(), 1, policy);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 64; ++i) clients.push_back(std::make_unique<Client>(server.port()));
  for (int i = 0; i < 64; ++i) {
    clients[i]->send(http::verb::post, "/v2/models/identity/infer", infer_body(4, std::to_string(i)),
                     "application/json");
  }
  for (int i = 0; i < 64; ++i) {
    const auto reply = clients[i]->receive();
    REQUIRE(reply.status == 200);
    REQUIRE(reply.body.find("\"id\":\"" + std::to_string(i) + "\"") != std::string::npos);
  }
  Client client(server.port());
  const auto inferences = metrics_line(client, "coinfer_inference_count_total");
  const auto executions = metrics_line(client, "coinfer_inference_exec_count_total");
  CHECK(inferences == R"(coinfer_inference_count_total{model="identity",version="1"} 64)");
  const auto exec = std::stoi(executions.substr(executions.rfind(' ') + 1));
  CHECK(exec < 64);  // average batch size above 1
  CHECK(client.get("/metrics").headers[http::field::content_type] == "text/plain; version=0.0.4");
}

TEST_CASE("a full queue answers 503 with Retry-After and an expired request 504") {
  BatchPolicy policy;
  policy.max_batch_size = 1;
  policy.max_queue_size = 1;
  auto model = std::make_shared<GatedIdentity>();
  TestServer server(test_config(), 1, policy, model);
  model->set_open(false);
  Client running(server.port());
  running.send(http::verb::post, "/v2/models/identity/infer", infer_body(2), "application/json");
  model->wait_held();
  Client queued(server.port());
  // Its timeout (1 s) holds its place in the queue while the next request is refused.
  queued.send(http::verb::post, "/v2/models/identity/infer",
              R"({"parameters":{"timeout":1000000},"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[1]}]})",
              "application/json");
  Endpoint* endpoint = nullptr;
  REQUIRE(server.repository().find("identity", "", nullptr, endpoint).ok());
  for (int i = 0; i < 500 && endpoint->batcher().queue_depth() < 1; ++i) {
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(endpoint->batcher().queue_depth() == 1);
  Client rejected(server.port());
  const auto full = rejected.post("/v2/models/identity/infer", infer_body(2));
  REQUIRE(full.status == 503);
  CHECK(full.headers["Retry-After"] == "1");
  CHECK(full.body.find("queue full") != std::string::npos);
  const auto expired = queued.receive();
  CHECK(expired.status == 504);
  CHECK(expired.body.find("timed out") != std::string::npos);
  model->set_open(true);
  CHECK(running.receive().status == 200);
}

TEST_CASE("with two I/O threads, concurrent batched requests are all answered correctly") {
  auto config = test_config();
  config.io_threads = 2;  // connections get strands
  BatchPolicy policy;
  policy.max_batch_size = 16;
  policy.max_queue_delay = 1ms;
  TestServer server(config, /*io_threads=*/2, policy);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 64; ++i) clients.push_back(std::make_unique<Client>(server.port()));
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 64; ++i) {
      clients[i]->send(http::verb::post, "/v2/models/identity/infer",
                       infer_body(3, std::to_string(round * 64 + i)), "application/json");
    }
    for (int i = 0; i < 64; ++i) {
      const auto reply = clients[i]->receive();
      REQUIRE(reply.status == 200);
      REQUIRE(reply.body.find("\"id\":\"" + std::to_string(round * 64 + i) + "\"") !=
              std::string::npos);
    }
  }
}
