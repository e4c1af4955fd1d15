#include "coinfer/models/mlp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "coinfer/core/config.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/models/safetensors.hpp"

using namespace coinfer;

namespace {

std::filesystem::path asset(const char* name) {
#ifdef COINFER_SOURCE_DIR
  return std::filesystem::path(COINFER_SOURCE_DIR) / "assets/digits_mlp" / name;
#else
  return std::filesystem::path("assets/digits_mlp") / name;
#endif
}

// The held-out split the training script wrote: x FP32 [n, 64], y INT64 [n].
struct TestSplit {
  SafetensorsFile file;
  Tensor x;
  std::vector<std::int64_t> y;
};

void load_split(TestSplit& split) {
  REQUIRE(SafetensorsFile::open(asset("test_split.safetensors"), split.file).ok());
  const SafetensorsTensor* x = split.file.tensor("x");
  const SafetensorsTensor* y = split.file.tensor("y");
  REQUIRE(x != nullptr);
  REQUIRE(y != nullptr);
  REQUIRE(x->dtype == SafetensorsDType::F32);
  REQUIRE(y->dtype == SafetensorsDType::I64);
  split.x = Tensor(DType::FP32, x->shape);
  std::memcpy(split.x.bytes().data(), x->data.data(), x->data.size());
  split.y.resize(y->data.size() / sizeof(std::int64_t));
  std::memcpy(split.y.data(), y->data.data(), y->data.size());
}

// Rows [begin, begin + rows) of an FP32 [n, k] tensor as a view.
ConstTensorView rows_of(const Tensor& x, std::int64_t begin, std::int64_t rows) {
  const std::int64_t k = x.shape()[1];
  return {DType::FP32, {rows, k}, x.bytes().data() + begin * k * std::int64_t(sizeof(float))};
}

}  // namespace

TEST_CASE("the digits mlp declares its inputs and outputs from the weights file") {
  std::unique_ptr<Mlp> mlp;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 16, mlp).ok());
  const ModelMetadata& md = mlp->metadata();
  CHECK(md.name == "digits");
  CHECK(md.max_batch_size == 16);
  CHECK(mlp->layer_count() == 3);
  REQUIRE(md.inputs.size() == 1);
  CHECK(md.inputs[0].name == "INPUT0");
  CHECK(md.inputs[0].shape == Shape{-1, 64});
  REQUIRE(md.outputs.size() == 2);
  CHECK(md.outputs[0].name == "probabilities");
  CHECK(md.outputs[0].shape == Shape{-1, 10});
  CHECK(md.outputs[1].name == "label");
  CHECK(md.outputs[1].dtype == DType::Int64);
}

TEST_CASE("int8 accuracy on the held-out digits is within 0.5 points of fp32") {
  TestSplit split;
  load_split(split);
  const int batch = 64;
  std::unique_ptr<Mlp> mlp;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", batch, mlp, true).ok());

  const auto n = std::int64_t(split.y.size());
  int int8_correct = 0, fp32_correct = 0;
  Tensor outputs[2];
  Tensor probabilities, label;
  for (std::int64_t begin = 0; begin < n; begin += batch) {
    const std::int64_t rows = std::min<std::int64_t>(batch, n - begin);
    const ConstTensorView x = rows_of(split.x, begin, rows);
    REQUIRE(mlp->forward(Batch::dense({&x, 1}), outputs).ok());
    REQUIRE(mlp->forward_reference(x, probabilities, label).ok());
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto expected = split.y[std::size_t(begin + r)];
      int8_correct += outputs[1].values<std::int64_t>()[std::size_t(r)] == expected;
      fp32_correct += label.values<std::int64_t>()[std::size_t(r)] == expected;
    }
    float row_sum = 0;
    for (int c = 0; c < 10; ++c) row_sum += outputs[0].values<float>()[std::size_t(c)];
    CHECK(row_sum == doctest::Approx(1.0f));
  }
  const double int8_accuracy = double(int8_correct) / double(n);
  const double fp32_accuracy = double(fp32_correct) / double(n);
  MESSAGE("digits held-out accuracy over " << n << " samples: FP32 " << fp32_accuracy << " ("
                                           << fp32_correct << "), INT8 " << int8_accuracy << " ("
                                           << int8_correct << ")");
  CHECK(int8_accuracy >= fp32_accuracy - 0.005);

  SafetensorsFile weights;
  REQUIRE(SafetensorsFile::open(asset("model.safetensors"), weights).ok());
  const double recorded = std::stod(weights.metadata().at("fp32_test_accuracy"));
  CHECK(std::fabs(fp32_accuracy - recorded) * double(n) <= 1.0 + 1e-9);
}

TEST_CASE("the mlp reuses its output tensors and answers any batch size up to the maximum") {
  TestSplit split;
  load_split(split);
  std::unique_ptr<Mlp> mlp;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 8, mlp).ok());
  Tensor outputs[2];
  const ConstTensorView full = rows_of(split.x, 0, 8);
  REQUIRE(mlp->forward(Batch::dense({&full, 1}), outputs).ok());
  const auto* storage = outputs[0].bytes().data();
  const std::int64_t first_label = outputs[1].values<std::int64_t>()[0];
  const ConstTensorView one = rows_of(split.x, 0, 1);
  REQUIRE(mlp->forward(Batch::dense({&one, 1}), outputs).ok());
  CHECK(outputs[0].shape() == Shape{1, 10});
  CHECK(outputs[0].bytes().data() == storage);  // no reallocation for a smaller batch
  CHECK(outputs[1].values<std::int64_t>()[0] == first_label);
}

TEST_CASE("the mlp rejects a batch over max_batch_size or a wrong input width") {
  std::unique_ptr<Mlp> mlp;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 2, mlp).ok());
  Tensor x(DType::FP32, {3, 64});
  Tensor narrow(DType::FP32, {1, 63});
  Tensor outputs[2];
  const ConstTensorView too_many = x.view();
  CHECK(mlp->forward(Batch::dense({&too_many, 1}), outputs).code() == Errc::invalid_argument);
  const ConstTensorView wrong_width = narrow.view();
  CHECK(mlp->forward(Batch::dense({&wrong_width, 1}), outputs).message().find("INPUT0") != std::string::npos);
  Tensor probabilities, label;
  CHECK(mlp->forward_reference(x.view(), probabilities, label).code() == Errc::internal);
}

TEST_CASE("a weights file without fc layers or with mismatched layers is rejected") {
  std::unique_ptr<Mlp> mlp;
  const auto status = Mlp::load(asset("test_split.safetensors"), "m", "1", 4, mlp);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message().find("no fc0.weight") != std::string::npos);
  CHECK(Mlp::load("/nonexistent.safetensors", "m", "1", 4, mlp).code() == Errc::not_found);
}

TEST_CASE("kind mlp builds the digits model from its weights path") {
  ModelConfig config;
  config.name = "digits";
  config.kind = "mlp";
  config.max_batch_size = 4;
  std::shared_ptr<Model> model;
  CHECK(make_builtin_model(config, model).message().find("models.digits.weights") !=
        std::string::npos);
  config.weights = asset("model.safetensors").string();
  REQUIRE(make_builtin_model(config, model).ok());
  CHECK(model->metadata().outputs[0].name == "probabilities");
}
