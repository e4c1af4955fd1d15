// The digits MLP served over HTTP with dynamic batching, checked against its FP32 reference.
#include <doctest/doctest.h>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/models/mlp.hpp"
#include "coinfer/models/safetensors.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;

namespace {

std::filesystem::path asset(const char* name) {
  return std::filesystem::path(COINFER_SOURCE_DIR) / "assets/digits_mlp" / name;
}

std::string digit_request(std::span<const float> pixels) {
  std::string body = R"({"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":[)";
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    if (i) body += ',';
    json_append_number(body, pixels[i]);
  }
  return body + "]}]}";
}

std::int64_t label_of(const std::string& body) {
  // {"name":"label","datatype":"INT64","shape":[1],"data":[7]}
  const auto at = body.find(R"("name":"label")");
  const auto data = body.find(R"("data":[)", at);
  return std::stoll(body.substr(data + 8));
}

}  // namespace

// A row's INT8 result does not depend on the batch it runs in (per-row scales, exact INT32
// sums), so each client must get exactly what the model gives its digit alone; accuracy
// against FP32 is pinned in tests/unit/mlp_test.cpp.
TEST_CASE("256 concurrent clients each get the model's prediction for their own digit") {
  SafetensorsFile split;
  REQUIRE(SafetensorsFile::open(asset("test_split.safetensors"), split).ok());
  const auto* x = split.tensor("x");
  REQUIRE(x != nullptr);
  const auto samples = static_cast<std::size_t>(x->shape[0]);
  const std::span<const float> pixels(reinterpret_cast<const float*>(x->data.data()), samples * 64);

  std::unique_ptr<Mlp> reference;  // the same INT8 model, run on one digit at a time
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 64, reference).ok());
  std::unique_ptr<Mlp> served;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 64, served).ok());

  BatchPolicy policy;
  policy.max_batch_size = 64;
  policy.max_queue_delay = 20ms;  // generous, so that batches surely form on a loaded machine
  TestServer server(test_config(), 1, policy, std::shared_ptr<Model>(std::move(served)));

  constexpr int kClients = 256;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(std::make_unique<Client>(server.port()));
  for (int i = 0; i < kClients; ++i) {
    const auto sample = pixels.subspan((static_cast<std::size_t>(i) % samples) * 64, 64);
    clients[i]->send(http::verb::post, "/v2/models/digits/infer", digit_request(sample),
                     "application/json");
  }
  for (int i = 0; i < kClients; ++i) {
    const auto sample = pixels.subspan((static_cast<std::size_t>(i) % samples) * 64, 64);
    const ConstTensorView alone{
        DType::FP32, {1, 64}, reinterpret_cast<const std::byte*>(sample.data())};
    std::vector<Tensor> outputs(2);
    REQUIRE(reference->forward(Batch::dense({&alone, 1}), outputs).ok());
    const Tensor& label = outputs[1];
    const auto reply = clients[i]->receive();
    REQUIRE(reply.status == 200);
    CAPTURE(i);
    CHECK(label_of(reply.body) == label.values<std::int64_t>()[0]);
  }

  const auto metrics = Client(server.port()).get("/metrics").body;
  auto value = [&](std::string_view name) {
    const auto at = metrics.find(std::string(name) + "{");
    REQUIRE(at != std::string::npos);
    const auto end = metrics.find('\n', at);
    return std::stod(metrics.substr(metrics.rfind(' ', end) + 1, end));
  };
  const double inferences = value("coinfer_inference_count_total");
  const double executions = value("coinfer_inference_exec_count_total");
  CHECK(inferences == kClients);
  CHECK(inferences / executions > 1.0);  // average batch size above 1
}
