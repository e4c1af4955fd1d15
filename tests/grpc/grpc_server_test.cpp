// GrpcServer in process, driven by the C++ stubs generated from proto/grpc_service.proto over
// real sockets: gRPC's threads hand calls to the io_context's threads and back, which is what
// these cases check (they run under TSan and ASan: scripts/sanitize). The protocol's
// conformance with Triton's client is tests/conformance/grpc_test.py.
#include <doctest/doctest.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <thread>

#include <simdjson.h>

#include "../integration/test_process.hpp"
#include "../integration/test_support.hpp"
#include "coinfer/protocol/grpc_server.hpp"
#include "grpc_service.grpc.pb.h"

namespace coinfer::test {
namespace {

using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelInferResponse;
using inference::ModelStreamInferResponse;

// The identity model (gated: forward() can be held) served over gRPC by two I/O threads.
class GrpcFixture {
 public:
  explicit GrpcFixture(BatchPolicy policy = {}) {
    model_ = std::make_shared<GatedIdentity>();
    REQUIRE(repository_
                .add(std::make_unique<Endpoint>(model_, io_.get_executor(), executor_, policy))
                .ok());
    ServerConfig config = test_config();
    config.grpc_port = 0;
    config.drain_timeout_ms = 5'000;
    server_ = std::make_unique<GrpcServer>(io_.get_executor(), config, repository_, nullptr);
    REQUIRE(server_->start().ok());
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = GRPCInferenceService::NewStub(channel_);
  }
  ~GrpcFixture() {
    model_->set_open(true);
    stop();
  }
  // Stops the server and waits until the io_context ran out of work (the server released it).
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    server_->stop();
    for (auto& t : threads_) t.join();
  }

  GRPCInferenceService::Stub& stub() { return *stub_; }
  std::uint16_t port() const { return server_->port(); }
  GatedIdentity& model() { return *model_; }
  const ModelMetrics& metrics() {
    Endpoint* endpoint = nullptr;
    REQUIRE(repository_.find("identity", "", nullptr, endpoint).ok());
    return endpoint->metrics();
  }

 private:
  asio::io_context io_;
  ModelRepository repository_;
  CpuExecutor executor_{1};
  std::shared_ptr<GatedIdentity> model_;
  std::unique_ptr<GrpcServer> server_;
  std::vector<std::thread> threads_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
  bool stopped_ = false;
};

// A [1, n] FP32 request for the identity model, its elements in typed contents.
ModelInferRequest identity_request(std::string id, std::vector<float> values) {
  ModelInferRequest request;
  request.set_model_name("identity");
  request.set_id(std::move(id));
  auto* input = request.add_inputs();
  input->set_name("INPUT0");
  input->set_datatype("FP32");
  input->add_shape(1);
  input->add_shape(static_cast<std::int64_t>(values.size()));
  for (float v : values) input->mutable_contents()->add_fp32_contents(v);
  return request;
}

// OUTPUT1 (the row's sum) of an identity answer; NaN when the answer has no such output.
// (No REQUIRE: it runs on client threads too, where a failed REQUIRE would abort.)
float sum_of(const ModelInferResponse& response) {
  float sum = std::numeric_limits<float>::quiet_NaN();
  if (response.raw_output_contents_size() == 2 &&
      response.raw_output_contents(1).size() == sizeof sum) {
    std::memcpy(&sum, response.raw_output_contents(1).data(), sizeof sum);
  }
  return sum;
}

TEST_CASE("grpc: a port in use is refused with a message naming it") {
  GrpcFixture f;
  asio::io_context io;
  ModelRepository repository;
  ServerConfig config = test_config();
  config.grpc_port = static_cast<std::int32_t>(f.port());
  GrpcServer second(io.get_executor(), config, repository, nullptr);
  const Status status = second.start();
  CHECK(status.code() == Errc::unavailable);
  CHECK(status.message() == "gRPC: cannot listen on 127.0.0.1:" + std::to_string(f.port()));
}

TEST_CASE("grpc: unary infers from eight client threads each get their own answer") {
  GrpcFixture f;
  std::atomic<int> right{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        grpc::ClientContext context;
        ModelInferResponse response;
        const auto request = identity_request(std::to_string(t * 100 + i), {float(t), float(i), 1});
        const grpc::Status status = f.stub().ModelInfer(&context, request, &response);
        if (status.ok() && response.id() == request.id() && sum_of(response) == float(t + i + 1)) {
          ++right;
        }
      }
    });
  }
  for (auto& c : clients) c.join();
  CHECK(right == 200);
}

TEST_CASE("grpc: one stream answers interleaved infers and failures by id, then finishes") {
  GrpcFixture f;
  grpc::ClientContext context;
  auto stream = f.stub().ModelStreamInfer(&context);
  constexpr int kRequests = 40;
  for (int i = 0; i < kRequests; ++i) {
    ModelInferRequest request = identity_request("r" + std::to_string(i), {float(i), 2});
    if (i % 5 == 4) request.mutable_inputs(0)->set_datatype("INT32");  // fails, the stream lives
    REQUIRE(stream->Write(request));
  }
  stream->WritesDone();
  std::map<std::string, float> sums;
  std::vector<std::string> errors;
  ModelStreamInferResponse response;
  while (stream->Read(&response)) {
    if (!response.error_message().empty()) {
      errors.push_back(response.error_message());
    } else {
      sums[response.infer_response().id()] = sum_of(response.infer_response());
    }
  }
  CHECK(stream->Finish().ok());
  REQUIRE(errors.size() == kRequests / 5);
  CHECK(errors[0].find("inputs[0].datatype: expected FP32, got INT32") != std::string::npos);
  CHECK(errors[0].starts_with("request 'r"));
  REQUIRE(sums.size() == kRequests - kRequests / 5);
  CHECK(sums["r7"] == 9.0f);
}

TEST_CASE("grpc: a cancelled call's queued request is dropped before compute") {
  GrpcFixture f;
  f.model().set_open(false);
  // The first request holds the executor; the second waits in the queue behind it.
  std::thread first([&] {
    grpc::ClientContext context;
    ModelInferResponse response;
    CHECK(f.stub().ModelInfer(&context, identity_request("held", {1, 2, 3}), &response).ok());
  });
  f.model().wait_held();
  grpc::ClientContext cancelled;
  std::thread second([&] {
    ModelInferResponse response;
    const grpc::Status status = f.stub().ModelInfer(&cancelled, identity_request("gone", {5}), &response);
    CHECK(status.error_code() == grpc::StatusCode::CANCELLED);
  });
  // Cancelled once it is queued: the batcher counts it cancelled, never computed.
  for (int i = 0; i < 500 && f.metrics().queue_depth.load() < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(f.metrics().queue_depth.load() == 1);
  cancelled.TryCancel();
  second.join();
  for (int i = 0; i < 500 && f.metrics().cancelled.value() < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(f.metrics().cancelled.value() == 1);
  f.model().set_open(true);
  first.join();
  CHECK(f.model().rows_seen() == 1);  // the held request's row only
}

TEST_CASE("grpc: stop() ends an idle stream UNAVAILABLE, lets a running call finish and releases the io_context") {
  GrpcFixture f;
  grpc::ClientContext idle_context;
  auto idle = f.stub().ModelStreamInfer(&idle_context);
  REQUIRE(idle->Write(identity_request("before", {1})));
  ModelStreamInferResponse first;
  REQUIRE(idle->Read(&first));
  CHECK(sum_of(first.infer_response()) == 1.0f);

  f.model().set_open(false);
  std::thread running([&] {
    grpc::ClientContext context;
    ModelInferResponse response;
    const grpc::Status status = f.stub().ModelInfer(&context, identity_request("late", {4, 5}), &response);
    CHECK_MESSAGE(status.ok(), status.error_message());
    CHECK(sum_of(response) == 9.0f);
  });
  f.model().wait_held(2);  // the first forward() was the stream's request
  std::thread stopper([&] { f.stop(); });  // returns once every call is done
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ModelStreamInferResponse none;
  CHECK_FALSE(idle->Read(&none));  // the server finished the idle stream
  const grpc::Status ended = idle->Finish();
  CHECK(ended.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(ended.error_message() == "the server is shutting down");
  f.model().set_open(true);
  running.join();
  stopper.join();
}

#ifdef COINFER_LOADGEN_PATH
TEST_CASE("grpc: coinfer-loadgen grpc:// sends ModelInfer calls from a JSON-mapped request") {
  GrpcFixture f;
  const std::string url = "grpc://127.0.0.1:" + std::to_string(f.port());
  auto run = [&](std::string body) {
    return run_process(COINFER_LOADGEN_PATH,
                       {"--url", url, "--body", std::move(body), "--concurrency", "4",
                        "--connections", "2", "--duration-s", "0.3", "--warmup-s", "0", "--json"});
  };
  const std::string request =
      R"({"model_name": "identity", "inputs": [{"name": "INPUT0", "datatype": "FP32",)"
      R"( "shape": [1, 2], "contents": {"fp32_contents": [1, 2]}}]})";
  const auto ok = run(request);
  REQUIRE(ok.exit_code == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element json = parser.parse(ok.out);
  CHECK(int64_t(json["requests"]) > 0);
  CHECK(int64_t(json["ok"]) == int64_t(json["requests"]));
  CHECK(int64_t(json["connections"]) == 2);

  // gRPC failures count under the HTTP status of the same outcome.
  std::string unknown = request;
  unknown.replace(unknown.find("identity"), 8, "nope");
  const auto missing = run(unknown);
  REQUIRE(missing.exit_code == 0);
  simdjson::dom::element errors = parser.parse(missing.out);
  CHECK(int64_t(errors["ok"]) == 0);
  CHECK(int64_t(errors["errors_by_status"]["404"]) == int64_t(errors["requests"]));

  CHECK(run(R"({"model_name": 7})").exit_code == 2);  // not a ModelInferRequest: refused
}
#endif

}  // namespace
}  // namespace coinfer::test
