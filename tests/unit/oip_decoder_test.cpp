#include "coinfer/protocol/oip_decoder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "coinfer/core/half.hpp"
#include "coinfer/serving/input_sink.hpp"

using namespace coinfer;

namespace {

// A model with one input and one output of the given type; batching by default.
ModelMetadata identity_model(DType dtype = DType::FP32, Shape shape = {-1, 4},
                             int max_batch_size = 8) {
  ModelMetadata model;
  model.name = "identity";
  model.max_batch_size = max_batch_size;
  model.inputs = {{"INPUT0", dtype, shape}};
  model.outputs = {{"OUTPUT0", dtype, shape}};
  return model;
}

ModelMetadata two_input_model() {
  ModelMetadata model;
  model.name = "pair";
  model.max_batch_size = 8;
  model.inputs = {{"A", DType::FP32, {-1, 2}}, {"B", DType::Int32, {-1, 1}}};
  model.outputs = {{"SUM", DType::FP32, {-1, 2}}, {"PRODUCT", DType::FP32, {-1, 2}}};
  return model;
}

struct Decoded {
  Status status;
  InferRequest request;
};

// Decodes `json` from a buffer with kJsonPadding spare bytes, as the HTTP layer provides.
Decoded decode(const ModelMetadata& model, std::string_view json) {
  std::string body;
  body.reserve(json.size() + kJsonPadding);
  body.assign(json);
  OipDecoder decoder;
  Decoded result;
  result.status = decoder.decode_infer(body, body.capacity(), model, result.request);
  return result;
}

// {"inputs":[{"name":"INPUT0","shape":<shape>,"datatype":<dtype>,"data":<data>}]}
std::string one_input(std::string_view datatype, std::string_view shape, std::string_view data) {
  return R"({"inputs":[{"name":"INPUT0","shape":)" + std::string(shape) + R"(,"datatype":")" +
         std::string(datatype) + R"(","data":)" + std::string(data) + "}]}";
}

std::string error_of(DType dtype, Shape declared, std::string_view datatype, std::string_view shape,
                     std::string_view data) {
  const Decoded d = decode(identity_model(dtype, declared), one_input(datatype, shape, data));
  CHECK_FALSE(d.status.ok());
  CHECK(d.status.code() == Errc::invalid_argument);
  return d.status.message();
}

template <class T>
std::vector<T> values_of(const Decoded& d, std::size_t input = 0) {
  REQUIRE(d.status.ok());
  const auto span = d.request.inputs.at(input).values<T>();
  return {span.begin(), span.end()};
}

// A sink that records what allocate was given and hands out one buffer per fixed-size input.
// Layout of buffers[m]: the destination (element_count × element_size bytes, prefilled with
// kFill) followed by kGuardBytes of kFill that the decoder must never touch.
class RecordingSink final : public InputSink {
 public:
  static constexpr std::byte kFill{0xa5};
  static constexpr std::size_t kGuardBytes = 64;

  explicit RecordingSink(const ModelMetadata& model, Status result = {})
      : model_(model), result_(std::move(result)) {}

  Status allocate(std::span<const Shape> shapes, const Parameters& parameters,
                  std::span<std::span<std::byte>> destinations) override {
    ++calls;
    this->shapes.assign(shapes.begin(), shapes.end());
    this->parameters = parameters;
    if (!result_.ok()) return result_;
    buffers.assign(shapes.size(), {});
    for (std::size_t m = 0; m < shapes.size(); ++m) {
      const DType dtype = model_.inputs.at(m).dtype;
      if (dtype == DType::Bytes) continue;
      const auto size = static_cast<std::size_t>(element_count(shapes[m])) * element_size(dtype);
      buffers[m].assign(size + kGuardBytes, kFill);
      destinations[m] = std::span(buffers[m]).first(size);
    }
    return {};
  }

  std::span<const std::byte> row(std::size_t m) const {
    return std::span(buffers.at(m)).first(buffers[m].size() - kGuardBytes);
  }

  template <class T>
  std::vector<T> values(std::size_t m) const {
    const auto bytes = row(m);
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  bool guards_intact() const {
    return std::all_of(buffers.begin(), buffers.end(), [](const std::vector<std::byte>& b) {
      return b.empty() ||
             std::all_of(b.end() - kGuardBytes, b.end(), [](std::byte x) { return x == kFill; });
    });
  }

  int calls = 0;
  std::vector<Shape> shapes;
  Parameters parameters;
  std::vector<std::vector<std::byte>> buffers;  // empty for BYTES inputs

 private:
  const ModelMetadata& model_;
  Status result_;
};

Decoded decode_into(RecordingSink& sink, const ModelMetadata& model, std::string_view json) {
  std::string body;
  body.reserve(json.size() + kJsonPadding);
  body.assign(json);
  OipDecoder decoder;
  Decoded result;
  result.status = decoder.decode_infer(body, body.capacity(), model, result.request, sink);
  return result;
}

}  // namespace

// ---- datatypes ---------------------------------------------------------------------------------

TEST_CASE("an FP32 input decodes from a flat data array") {
  const Decoded d = decode(identity_model(), one_input("FP32", "[2, 4]",
                                                       "[1, 2.5, -3, 4e2, 0, "
                                                       "-0.125, 1e-3, 7]"));
  CHECK(d.status.ok());
  REQUIRE(d.request.inputs.size() == 1);
  CHECK(d.request.inputs[0].dtype() == DType::FP32);
  CHECK(d.request.inputs[0].shape() == Shape{2, 4});
  CHECK(values_of<float>(d) ==
        std::vector<float>{1.0f, 2.5f, -3.0f, 400.0f, 0.0f, -0.125f, 1e-3f, 7.0f});
}

TEST_CASE("nested data arrays are flattened in row-major order") {
  const Decoded d =
      decode(identity_model(), one_input("FP32", "[2, 4]", "[[1, 2, 3, 4], [5, 6, 7, 8]]"));
  CHECK(values_of<float>(d) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("data may nest deeper than the shape, or mix levels, as long as the count fits") {
  const Decoded d =
      decode(identity_model(), one_input("FP32", "[2, 4]", "[[[1], [2, 3]], 4, [[[5, 6]], 7], 8]"));
  CHECK(values_of<float>(d) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("a BOOL input decodes from JSON true and false") {
  const Decoded d = decode(identity_model(DType::Bool),
                           one_input("BOOL", "[1, 4]", "[true, false, false, true]"));
  REQUIRE(d.status.ok());
  const auto bytes = d.request.inputs[0].bytes();
  REQUIRE(bytes.size() == 4);
  CHECK(bytes[0] == std::byte{1});
  CHECK(bytes[1] == std::byte{0});
  CHECK(bytes[2] == std::byte{0});
  CHECK(bytes[3] == std::byte{1});
}

TEST_CASE("INT8 accepts -128 and 127") {
  const Decoded d =
      decode(identity_model(DType::Int8), one_input("INT8", "[1, 4]", "[-128, 127, 0, -1]"));
  CHECK(values_of<std::int8_t>(d) == std::vector<std::int8_t>{-128, 127, 0, -1});
}

TEST_CASE("INT16 accepts -32768 and 32767") {
  const Decoded d =
      decode(identity_model(DType::Int16), one_input("INT16", "[1, 4]", "[-32768, 32767, 0, 5]"));
  CHECK(values_of<std::int16_t>(d) == std::vector<std::int16_t>{-32768, 32767, 0, 5});
}

TEST_CASE("INT32 accepts its full range") {
  const Decoded d = decode(identity_model(DType::Int32),
                           one_input("INT32", "[1, 4]", "[-2147483648, 2147483647, 0, 5]"));
  CHECK(values_of<std::int32_t>(d) ==
        std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(),
                                  std::numeric_limits<std::int32_t>::max(), 0, 5});
}

TEST_CASE("INT64 accepts its full range, including the minimum") {
  const Decoded d =
      decode(identity_model(DType::Int64),
             one_input("INT64", "[1, 4]", "[-9223372036854775808, 9223372036854775807, 0, -5]"));
  CHECK(values_of<std::int64_t>(d) ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::max(), 0, -5});
}

TEST_CASE("UINT8, UINT16 and UINT32 accept 0 up to their maximum") {
  CHECK(values_of<std::uint8_t>(
            decode(identity_model(DType::UInt8), one_input("UINT8", "[1, 4]", "[0, 255, 1, 2]"))) ==
        std::vector<std::uint8_t>{0, 255, 1, 2});
  CHECK(values_of<std::uint16_t>(decode(identity_model(DType::UInt16),
                                        one_input("UINT16", "[1, 4]", "[0, 65535, 1, 2]"))) ==
        std::vector<std::uint16_t>{0, 65535, 1, 2});
  CHECK(values_of<std::uint32_t>(decode(identity_model(DType::UInt32),
                                        one_input("UINT32", "[1, 4]", "[0, 4294967295, 1, 2]"))) ==
        std::vector<std::uint32_t>{0, 4294967295u, 1, 2});
}

TEST_CASE("UINT64 accepts values up to 2^64 - 1") {
  const Decoded d =
      decode(identity_model(DType::UInt64),
             one_input("UINT64", "[1, 4]", "[18446744073709551615, 9223372036854775808, 0, 1]"));
  CHECK(values_of<std::uint64_t>(d) ==
        std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max(),
                                   std::uint64_t{1} << 63, 0, 1});
}

TEST_CASE("FP16 numbers are stored as IEEE binary16 bits") {
  const Decoded d = decode(identity_model(DType::FP16),
                           one_input("FP16", "[1, 4]", "[1.0, -2.5, 65504, 0.000061035156]"));
  REQUIRE(d.status.ok());
  const auto bytes = d.request.inputs[0].bytes();
  REQUIRE(bytes.size() == 8);
  const auto* bits = reinterpret_cast<const std::uint16_t*>(bytes.data());
  CHECK(bits[0] == 0x3c00);
  CHECK(bits[1] == 0xc100);
  CHECK(bits[2] == 0x7bff);
  CHECK(bits[3] == 0x0400);  // 2^-14, the smallest normal half
  CHECK(half_to_float(bits[1]) == -2.5f);
}

TEST_CASE("FP64 numbers keep double precision") {
  const Decoded d = decode(identity_model(DType::FP64),
                           one_input("FP64", "[1, 4]",
                                     "[0.1, 1.7976931348623157e308, -2.2250738585072014e-308, "
                                     "3]"));
  CHECK(values_of<double>(d) ==
        std::vector<double>{0.1, 1.7976931348623157e308, -2.2250738585072014e-308, 3.0});
}

TEST_CASE("BYTES elements decode from JSON strings with escapes resolved") {
  const Decoded d =
      decode(identity_model(DType::Bytes, {-1}),
             one_input("BYTES", "[3]", R"(["hello", "tab\there \"quoted\" \u00e9", ""])"));
  REQUIRE(d.status.ok());
  CHECK(d.request.inputs[0].strings() ==
        std::vector<std::string>{"hello", "tab\there \"quoted\" \xc3\xa9", ""});
}

TEST_CASE("a zero-sized batch decodes to an empty tensor") {
  const Decoded d = decode(identity_model(), one_input("FP32", "[0, 4]", "[]"));
  REQUIRE(d.status.ok());
  CHECK(d.request.inputs[0].size() == 0);
}

// ---- request fields
// ------------------------------------------------------------------------------

TEST_CASE("the request id is echoed into the request") {
  const Decoded d = decode(identity_model(), R"({"id":"req-42","inputs":[{"name":"INPUT0",
      "shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})");
  REQUIRE(d.status.ok());
  CHECK(d.request.id == "req-42");
}

TEST_CASE("request parameters are passed through in order with their types") {
  const Decoded d = decode(identity_model(), R"({"parameters":{"flag":true,"count":-7,
      "ratio":0.5,"label":"x\"y","big":18446744073709551615},"inputs":[{"name":"INPUT0",
      "shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})");
  REQUIRE(d.status.ok());
  const Parameters& p = d.request.parameters;
  REQUIRE(p.size() == 5);
  CHECK(p[0].first == "flag");
  CHECK(std::get<bool>(p[0].second) == true);
  CHECK(p[1].first == "count");
  CHECK(std::get<std::int64_t>(p[1].second) == -7);
  CHECK(p[2].first == "ratio");
  CHECK(std::get<double>(p[2].second) == 0.5);
  CHECK(p[3].first == "label");
  CHECK(std::get<std::string>(p[3].second) == "x\"y");
  CHECK(p[4].first == "big");
  CHECK(std::get<double>(p[4].second) == 18446744073709551615.0);
}

TEST_CASE("a parameter that is an object or null is rejected and named") {
  const Decoded d = decode(identity_model(), R"({"parameters":{"nested":{"a":1}},"inputs":[]})");
  CHECK(d.status.message() ==
        "parameters.nested: expected a boolean, number or string, got object");
}

TEST_CASE("inputs are reordered into the model's metadata order") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"B","shape":[2,1],"datatype":"INT32","data":[7,8]},
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4]]}]})");
  REQUIRE(d.status.ok());
  REQUIRE(d.request.inputs.size() == 2);
  CHECK(d.request.inputs[0].dtype() == DType::FP32);
  CHECK(values_of<float>(d, 0) == std::vector<float>{1, 2, 3, 4});
  CHECK(values_of<std::int32_t>(d, 1) == std::vector<std::int32_t>{7, 8});
}

TEST_CASE("requested outputs become indices into the model's outputs, in request order") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]},
      {"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}],
      "outputs":[{"name":"PRODUCT","parameters":{"binary_data":false}},{"name":"SUM"}]})");
  REQUIRE(d.status.ok());
  CHECK(d.request.requested_outputs == std::vector<std::size_t>{1, 0});
}

TEST_CASE("absent or empty outputs request every output") {
  const std::string inputs = R"("inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32",
      "data":[1,2,3,4]}])";
  const Decoded absent = decode(identity_model(), "{" + inputs + "}");
  REQUIRE(absent.status.ok());
  CHECK(absent.request.requested_outputs.empty());
  const Decoded empty = decode(identity_model(), R"({"outputs":[],)" + inputs + "}");
  REQUIRE(empty.status.ok());
  CHECK(empty.request.requested_outputs.empty());
}

TEST_CASE("an unknown requested output is rejected and named") {
  const Decoded d = decode(identity_model(), R"({"inputs":[{"name":"INPUT0","shape":[1,4],
      "datatype":"FP32","data":[1,2,3,4]}],"outputs":[{"name":"OUTPUT0"},{"name":"NOPE"}]})");
  CHECK(d.status.message() == "outputs[1].name: model 'identity' has no output 'NOPE'");
}

TEST_CASE("unknown top-level and per-input keys are ignored") {
  const Decoded d = decode(identity_model(), R"({"extra":{"deep":[1,[2,{"x":null}]]},
      "inputs":[{"name":"INPUT0","comment":"hi","shape":[1,4],"datatype":"FP32",
      "parameters":{"content_type":"np"},"data":[1,2,3,4],"more":[1]}],"tail":false})");
  REQUIRE(d.status.ok());
  CHECK(values_of<float>(d) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("data that comes before name, shape and datatype still decodes") {
  const Decoded d = decode(identity_model(), R"({"inputs":[{"data":[[1,2,3,4],[5,6,7,8]],
      "datatype":"FP32","shape":[2,4],"name":"INPUT0"}]})");
  CHECK(values_of<float>(d) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("a body without padding after it is decoded through a padded copy") {
  const std::string json = one_input("FP32", "[1, 4]", "[1, 2, 3, 4]");
  OipDecoder decoder;
  InferRequest request;
  const Status status = decoder.decode_infer(json, json.size(), identity_model(), request);
  REQUIRE(status.ok());
  CHECK(request.inputs[0].values<float>()[3] == 4.0f);
}

TEST_CASE("a reused decoder and request carry nothing over between requests") {
  const ModelMetadata model = two_input_model();
  OipDecoder decoder;
  InferRequest request;
  std::string first = R"({"id":"one","parameters":{"p":1},"inputs":[
      {"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]},
      {"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}],"outputs":[{"name":"SUM"}]})";
  first.reserve(first.size() + kJsonPadding);
  REQUIRE(decoder.decode_infer(first, first.capacity(), model, request).ok());
  std::string second = R"({"inputs":[
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[5,6,7,8]},
      {"name":"B","shape":[2,1],"datatype":"INT32","data":[9,10]}]})";
  second.reserve(second.size() + kJsonPadding);
  REQUIRE(decoder.decode_infer(second, second.capacity(), model, request).ok());
  CHECK(request.id.empty());
  CHECK(request.parameters.empty());
  CHECK(request.requested_outputs.empty());
  CHECK(request.inputs[0].shape() == Shape{2, 2});
  CHECK(request.inputs[1].values<std::int32_t>()[1] == 10);
}

// ---- malformed bodies
// ----------------------------------------------------------------------------

TEST_CASE("malformed JSON is rejected with simdjson's reason") {
  const Decoded d = decode(identity_model(), R"({"inputs": [{"name": "INPUT0",)");
  CHECK(d.status.code() == Errc::invalid_argument);
  CHECK(d.status.message().starts_with("invalid JSON: "));
}

TEST_CASE("an empty body is rejected as invalid JSON") {
  const Decoded d = decode(identity_model(), "");
  CHECK(d.status.message().starts_with("invalid JSON: "));
}

TEST_CASE("content after the request object is rejected") {
  const Decoded d =
      decode(identity_model(), one_input("FP32", "[1, 4]", "[1, 2, 3, 4]") + R"( {"x":1})");
  CHECK(d.status.message().starts_with("invalid JSON: "));
}

TEST_CASE("malformed JSON under an ignored key is still rejected") {
  const std::string input = R"({"name":"INPUT0","shape":[1,4],"datatype":"FP32","data":[1,2,3,4])";
  CHECK(decode(identity_model(), R"({"inputs":[)" + input + R"(}],"junk":[1,}]})")
            .status.message()
            .starts_with("invalid JSON: "));
  CHECK(decode(identity_model(), R"({"inputs":[)" + input + R"(,"junk":{"a":nul}}]})")
            .status.message()
            .starts_with("invalid JSON: "));
  CHECK(decode(identity_model(), R"({"inputs":[)" + input + R"(,"parameters":{"x":01}}]})")
            .status.message()
            .starts_with("invalid JSON: "));
}

TEST_CASE("an input with two data keys is rejected") {
  const Decoded d = decode(identity_model(), R"({"inputs":[{"name":"INPUT0","shape":[1,4],
      "datatype":"FP32","data":[1,2,3,4],"data":[5,6,7,8]}]})");
  CHECK(d.status.message() == "inputs[0].data: duplicate key");
}

TEST_CASE("a body that is not an object is rejected") {
  CHECK(decode(identity_model(), "[1, 2]").status.message() ==
        "request body: expected a JSON object, got array");
  CHECK(decode(identity_model(), "42").status.message() ==
        "request body: expected a JSON object, got number");
}

TEST_CASE("a request without inputs is rejected") {
  CHECK(decode(identity_model(), R"({"id":"x"})").status.message() == "inputs: missing");
}

TEST_CASE("inputs that are not an array are rejected") {
  CHECK(decode(identity_model(), R"({"inputs":{"name":"INPUT0"}})").status.message() ==
        "inputs: expected an array, got object");
}

TEST_CASE("an input that is not an object is rejected with its index") {
  CHECK(decode(identity_model(), R"({"inputs":[3]})").status.message() ==
        "inputs[0]: expected an object, got number");
}

TEST_CASE("a non-string id is rejected") {
  CHECK(decode(identity_model(), R"({"id":5,"inputs":[]})").status.message() ==
        "id: expected a string, got number");
}

TEST_CASE("an input without data is rejected") {
  CHECK(decode(identity_model(), R"({"inputs":[{"name":"INPUT0","shape":[1,4],
      "datatype":"FP32"}]})")
            .status.message() == "inputs[0].data: missing");
}

TEST_CASE("an input without a datatype is rejected") {
  CHECK(decode(identity_model(), R"({"inputs":[{"name":"INPUT0","shape":[1,4],
      "data":[1,2,3,4]}]})")
            .status.message() == "inputs[0].datatype: missing");
}

// ---- validation against the model
// ----------------------------------------------------------------

TEST_CASE("an input the model does not have is rejected and named") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]},
      {"name":"FOO","shape":[1,1],"datatype":"INT32","data":[3]}]})");
  CHECK(d.status.message() == "inputs[1].name: model 'pair' has no input 'FOO'");
}

TEST_CASE("an input given twice is rejected") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]},
      {"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]}]})");
  CHECK(d.status.message() == "inputs[1].name: duplicate input 'A'");
}

TEST_CASE("a model input the request leaves out is rejected and named") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}]})");
  CHECK(d.status.message() == "inputs: missing input 'A'");
}

TEST_CASE("a datatype other than the model's is rejected") {
  CHECK(error_of(DType::FP32, {-1, 4}, "INT8", "[1, 4]", "[1, 2, 3, 4]") ==
        "inputs[0].datatype: expected FP32, got INT8");
}

TEST_CASE("an unknown datatype is rejected") {
  CHECK(error_of(DType::FP32, {-1, 4}, "FLOAT", "[1, 4]", "[1, 2, 3, 4]") ==
        "inputs[0].datatype: unknown datatype 'FLOAT'");
}

TEST_CASE("a shape with a negative or non-integer dimension is rejected") {
  const std::string expected = "inputs[0].shape: expected an array of non-negative integers";
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[-1, 4]", "[]") == expected);
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[1, \"4\"]", "[]") == expected);
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[1, 4.5]", "[]") == expected);
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "4", "[]") == expected);
}

TEST_CASE("a shape that does not match the model's declared shape is rejected") {
  CHECK(error_of(DType::FP32, {-1, 64}, "FP32", "[2, 63]", "[]") ==
        "inputs[0].shape: [2, 63] does not match the model's [-1, 64]");
  CHECK(error_of(DType::FP32, {-1, 64}, "FP32", "[64]", "[]") ==
        "inputs[0].shape: [64] does not match the model's [-1, 64]");
}

TEST_CASE("a batch larger than max_batch_size is rejected") {
  ModelMetadata model = identity_model(DType::FP32, {-1, 1}, 64);
  const Decoded d = decode(model, one_input("FP32", "[300, 1]", "[]"));
  CHECK(d.status.message() == "inputs[0].shape[0]: batch size 300 exceeds max_batch_size 64");
}

TEST_CASE("inputs with different batch sizes are rejected") {
  const Decoded d = decode(two_input_model(), R"({"inputs":[
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[1,2,3,4]},
      {"name":"B","shape":[3,1],"datatype":"INT32","data":[1,2,3]}]})");
  CHECK(d.status.message() == "inputs[1].shape[0]: batch size 3 differs from inputs[0]'s 2");
}

TEST_CASE("too few or too many elements for the shape are rejected with both counts") {
  std::string data127 = "[";
  for (int i = 0; i < 127; ++i) data127 += i ? ",1" : "1";
  data127 += "]";
  CHECK(error_of(DType::FP32, {-1, 64}, "FP32", "[2, 64]", data127) ==
        "inputs[0].data: shape [2, 64] needs 128 elements, got 127");
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[1, 4]", "[[1, 2, 3, 4], [5]]") ==
        "inputs[0].data: shape [1, 4] needs 4 elements, got 5");
}

TEST_CASE("data that is not an array is rejected") {
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[1, 4]", "\"1,2,3,4\"") ==
        "inputs[0].data: expected an array, got string");
}

TEST_CASE("a string among numbers is rejected with its flat index") {
  CHECK(error_of(DType::FP32, {-1, 4}, "FP32", "[2, 4]", R"([[1, 2, 3, 4], [5, "6", 7, 8]])") ==
        "inputs[0].data[5]: expected a number, got string");
  CHECK(error_of(DType::Int32, {-1, 4}, "INT32", "[1, 4]", "[1, null, 3, 4]") ==
        "inputs[0].data[1]: expected a number, got null");
}

TEST_CASE("a BOOL input with a number is rejected as not a boolean") {
  CHECK(error_of(DType::Bool, {-1, 2}, "BOOL", "[1, 2]", "[true, 1]") ==
        "inputs[0].data[1]: expected a boolean, got number");
}

TEST_CASE("a BYTES input with a number is rejected as not a string") {
  CHECK(error_of(DType::Bytes, {-1}, "BYTES", "[2]", R"(["a", 2])") ==
        "inputs[0].data[1]: expected a string, got number");
}

TEST_CASE("an INT8 value of 300 is rejected as out of range") {
  CHECK(error_of(DType::Int8, {-1, 4}, "INT8", "[1, 4]", "[0, 1, 2, 300]") ==
        "inputs[0].data[3]: 300 is out of range for INT8");
}

TEST_CASE("INT8 rejects 128 and -129") {
  CHECK(error_of(DType::Int8, {-1, 1}, "INT8", "[1, 1]", "[128]") ==
        "inputs[0].data[0]: 128 is out of range for INT8");
  CHECK(error_of(DType::Int8, {-1, 1}, "INT8", "[1, 1]", "[-129]") ==
        "inputs[0].data[0]: -129 is out of range for INT8");
}

TEST_CASE("UINT8 rejects negative values") {
  CHECK(error_of(DType::UInt8, {-1, 1}, "UINT8", "[1, 1]", "[-1]") ==
        "inputs[0].data[0]: -1 is out of range for UINT8");
}

TEST_CASE("UINT64 rejects 2^64 and negative values") {
  CHECK(error_of(DType::UInt64, {-1, 1}, "UINT64", "[1, 1]", "[18446744073709551616]") ==
        "inputs[0].data[0]: 18446744073709551616 is out of range for UINT64");
  CHECK(error_of(DType::UInt64, {-1, 1}, "UINT64", "[1, 1]", "[-1]") ==
        "inputs[0].data[0]: -1 is out of range for UINT64");
}

TEST_CASE("INT64 rejects values just beyond its range") {
  CHECK(error_of(DType::Int64, {-1, 1}, "INT64", "[1, 1]", "[9223372036854775808]") ==
        "inputs[0].data[0]: 9223372036854775808 is out of range for INT64");
  CHECK(error_of(DType::Int64, {-1, 1}, "INT64", "[1, 1]", "[-9223372036854775809]") ==
        "inputs[0].data[0]: -9223372036854775809 is out of range for INT64");
}

TEST_CASE("an integer input given a fraction is rejected as not an integer") {
  CHECK(error_of(DType::Int32, {-1, 2}, "INT32", "[1, 2]", "[1, 1.5]") ==
        "inputs[0].data[1]: expected an integer, got 1.5");
  CHECK(error_of(DType::Int32, {-1, 2}, "INT32", "[1, 2]", "[1, 2e3]") ==
        "inputs[0].data[1]: expected an integer, got 2e3");
}

TEST_CASE("an FP32 value beyond the float range is rejected as out of range") {
  CHECK(error_of(DType::FP32, {-1, 1}, "FP32", "[1, 1]", "[1e39]") ==
        "inputs[0].data[0]: 1e+39 is out of range for FP32");
  CHECK(error_of(DType::FP32, {-1, 1}, "FP32", "[1, 1]", "[-3.5e38]") ==
        "inputs[0].data[0]: -3.5e+38 is out of range for FP32");
}

TEST_CASE("an FP16 value beyond 65504 after rounding is rejected as out of range") {
  CHECK(error_of(DType::FP16, {-1, 1}, "FP16", "[1, 1]", "[65520]") ==
        "inputs[0].data[0]: 65520 is out of range for FP16");
  const Decoded ok =
      decode(identity_model(DType::FP16, {-1, 1}), one_input("FP16", "[1, 1]", "[65519]"));
  REQUIRE(ok.status.ok());
  CHECK(half_to_float(*reinterpret_cast<const std::uint16_t*>(
            ok.request.inputs[0].bytes().data())) == 65504.0f);
}

TEST_CASE("an FP64 value beyond the double range is rejected as out of range") {
  CHECK(error_of(DType::FP64, {-1, 1}, "FP64", "[1, 1]", "[1e400]") ==
        "inputs[0].data[0]: 1e400 is out of range for FP64");
}

TEST_CASE("a malformed number is rejected as invalid") {
  CHECK(error_of(DType::FP32, {-1, 1}, "FP32", "[1, 1]", "[01]") ==
        "inputs[0].data[0]: invalid number '01'");
  CHECK(error_of(DType::Int32, {-1, 1}, "INT32", "[1, 1]", "[-]") ==
        "inputs[0].data[0]: invalid number '-'");
}

TEST_CASE("a shape whose element count overflows is rejected before allocating") {
  CHECK(error_of(DType::FP32, {-1, -1, -1}, "FP32", "[1, 4294967296, 4294967296]", "[]") ==
        "inputs[0].shape: [1, 4294967296, 4294967296] has more than 2147483648 elements");
  CHECK(error_of(DType::FP32, {-1, -1, -1}, "FP32", "[1, 8, 9223372036854775807]", "[]") ==
        "inputs[0].shape: [1, 8, 9223372036854775807] has more than 2147483648 elements");
  CHECK(error_of(DType::FP32, {-1, -1, -1}, "FP32", "[1, 65536, 65536]", "[]") ==
        "inputs[0].shape: [1, 65536, 65536] has more than 2147483648 elements");
}

TEST_CASE("a shape needing more elements than the body can hold is rejected before allocating") {
  CHECK(error_of(DType::FP32, {-1, -1}, "FP32", "[1, 1000000000]", "[1]") ==
        "inputs[0].data: shape [1, 1000000000] needs 1000000000 elements, more than the "
        "request body holds");
}

TEST_CASE("data nested deeper than 64 levels is rejected") {
  const std::string data = std::string(100, '[') + "1" + std::string(100, ']');
  CHECK(error_of(DType::FP32, {-1, 1}, "FP32", "[1, 1]", data) ==
        "inputs[0].data: nested deeper than 64 levels");
}

// ---- binary tensor data extension ------------------------------------------------------------

namespace {

// A binary request: `json`, then `binary` right after it in one buffer (as the HTTP body holds
// them), with padding after the whole body.
Decoded decode_binary(const ModelMetadata& model, std::string_view json, std::string_view binary,
                      InputSink* sink = nullptr) {
  std::string body;
  body.reserve(json.size() + binary.size() + kJsonPadding);
  body.assign(json);
  body.append(binary);
  const auto bytes = std::as_bytes(std::span(body.data() + json.size(), binary.size()));
  OipDecoder decoder;
  Decoded result;
  const std::string_view head(body.data(), json.size());
  result.status = sink ? decoder.decode_infer(head, body.capacity(), model, result.request, *sink,
                                              bytes)
                       : decoder.decode_infer(head, body.capacity(), model, result.request, bytes);
  return result;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

}  // namespace

TEST_CASE("binary inputs take their elements from the bytes after the JSON, in input order") {
  // B (INT32) is listed first, so its block comes first; A is JSON.
  const std::string json = R"({"inputs":[
      {"name":"B","shape":[2,1],"datatype":"INT32","parameters":{"binary_data_size":8}},
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[1,2,3,4]}]})";
  const Decoded d = decode_binary(two_input_model(), json, raw<std::int32_t>({7, -9}));
  REQUIRE_MESSAGE(d.status.ok(), d.status.message());
  CHECK(std::vector<std::int32_t>(d.request.inputs[1].values<std::int32_t>().begin(),
                                  d.request.inputs[1].values<std::int32_t>().end()) ==
        std::vector<std::int32_t>{7, -9});
  CHECK(d.request.inputs[0].values<float>()[3] == 4.0f);

  const std::string both = R"({"inputs":[
      {"name":"A","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}},
      {"name":"B","shape":[1,1],"datatype":"INT32","parameters":{"binary_data_size":4}}]})";
  const ModelMetadata pair = two_input_model();
  RecordingSink sink(pair);
  const Decoded s = decode_binary(pair, both, raw<float>({1.5f, -2.0f}) + raw<std::int32_t>({3}), &sink);
  REQUIRE_MESSAGE(s.status.ok(), s.status.message());
  REQUIRE(sink.calls == 1);
  float a[2];
  std::memcpy(a, sink.buffers[0].data(), sizeof a);
  CHECK(a[0] == 1.5f);
  CHECK(a[1] == -2.0f);
  std::int32_t b;
  std::memcpy(&b, sink.buffers[1].data(), sizeof b);
  CHECK(b == 3);
}

TEST_CASE("binary BYTES and BOOL inputs are decoded and checked") {
  const std::string strings = std::string("\x02\0\0\0hi", 6) + std::string("\0\0\0\0", 4) +
                              std::string("\x03\0\0\0abc", 7);
  const Decoded d = decode_binary(identity_model(DType::Bytes, {-1}),
                                  R"({"inputs":[{"name":"INPUT0","shape":[3],"datatype":"BYTES",
                                      "parameters":{"binary_data_size":17}}]})",
                                  strings);
  REQUIRE_MESSAGE(d.status.ok(), d.status.message());
  CHECK(d.request.inputs[0].strings() == std::vector<std::string>{"hi", "", "abc"});

  const Decoded overrun = decode_binary(
      identity_model(DType::Bytes, {-1}),
      R"({"inputs":[{"name":"INPUT0","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":6}}]})",
      std::string("\x09\0\0\0hi", 6));
  CHECK(overrun.status.message() ==
        "inputs[0]: binary BYTES element 0: length 9 runs past the input's 6 bytes");

  const Decoded flags = decode_binary(
      identity_model(DType::Bool, {-1, 2}),
      R"({"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"BOOL","parameters":{"binary_data_size":2}}]})",
      std::string("\x01\x02", 2));
  CHECK(flags.status.message() == "inputs[0]: binary BOOL element 1 is 2, expected 0 or 1");
}

TEST_CASE("binary sizes that do not fit the shape or the body are rejected by field") {
  const ModelMetadata model = identity_model();
  auto input = [](std::string_view size) {
    return R"({"inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":)" +
           std::string(size) + "}}]}";
  };
  CHECK(decode_binary(model, input("12"), std::string(12, '\0')).status.message() ==
        "inputs[0].parameters.binary_data_size: 12 bytes, but shape [1, 4] of FP32 needs 16");
  CHECK(decode_binary(model, input("16"), std::string(8, '\0')).status.message() ==
        "inputs[0].parameters.binary_data_size: 16 bytes from offset 0 run past the 8 bytes the "
        "request carries after its JSON");
  CHECK(decode_binary(model, input("16"), std::string(20, '\0')).status.message() ==
        "binary data: the request carries 20 bytes after its JSON, but the inputs' "
        "binary_data_size add up to 16");
  CHECK(decode_binary(model, input("-1"), std::string(16, '\0')).status.message() ==
        "inputs[0].parameters.binary_data_size: expected a non-negative integer, got number");
  CHECK(decode(model, input("16")).status.message() ==
        "inputs[0].parameters.binary_data_size: binary tensor data needs the Inference-Header-"
        "Content-Length header (the JSON's length), with the data after the JSON");
  CHECK(decode_binary(model, R"({"inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32",
        "data":[1,2,3,4],"parameters":{"binary_data_size":16}}]})", std::string(16, '\0'))
            .status.message() ==
        "inputs[0]: has both data and parameters.binary_data_size (one or the other)");
  CHECK(decode_binary(model, one_input("FP32", "[1, 4]", "[1, 2, 3, 4]"), std::string(4, '\0'))
            .status.message() ==
        "binary data: the request carries 4 bytes after its JSON, but the inputs' "
        "binary_data_size add up to 0");
}

TEST_CASE("outputs are asked for as binary per output or for all by binary_data_output") {
  const std::string data = R"("inputs":[{"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]},
      {"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}])";
  Decoded d = decode(two_input_model(), "{" + data + R"(,"parameters":{"binary_data_output":true},
      "outputs":[{"name":"PRODUCT","parameters":{"binary_data":false}},{"name":"SUM"}]})");
  REQUIRE_MESSAGE(d.status.ok(), d.status.message());
  CHECK(d.request.binary_outputs == std::vector<std::uint8_t>{1, 0});  // SUM, PRODUCT
  d = decode(two_input_model(),
             "{" + data + R"(,"outputs":[{"name":"PRODUCT","parameters":{"binary_data":true}}]})");
  REQUIRE(d.status.ok());
  CHECK(d.request.binary_outputs == std::vector<std::uint8_t>{0, 1});
  d = decode(two_input_model(), "{" + data + "}");
  REQUIRE(d.status.ok());
  CHECK(d.request.binary_outputs.empty());  // all JSON
  d = decode(two_input_model(),
             "{" + data + R"(,"outputs":[{"name":"SUM","parameters":{"binary_data":1}}]})");
  CHECK(d.status.message() == "outputs[0].parameters.binary_data: expected a boolean, got number");
}

TEST_CASE("every truncation or corruption of a valid body is rejected without crashing") {
  const ModelMetadata model = two_input_model();
  const std::string valid = R"({"id":"a\"b","parameters":{"k":1},"inputs":[
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[[1.5,-2e3],[3,4]]},
      {"data":[7,8],"name":"B","shape":[2,1],"datatype":"INT32"}],"outputs":[{"name":"SUM"}]})";
  OipDecoder decoder;
  InferRequest request;
  for (std::size_t n = 0; n < valid.size(); ++n) {
    std::string body = valid.substr(0, n);
    body.reserve(body.size() + kJsonPadding);
    const Status status = decoder.decode_infer(body, body.capacity(), model, request);
    CHECK_FALSE(status.ok());
  }
  // Replace each byte by characters that break structure, types or escapes. Some edits leave
  // a valid request (a digit for a digit, a space for a space); every other one is refused as
  // invalid, with a message.
  std::size_t refused = 0, edits = 0;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    for (char c : std::string_view("]}\"\\,:0x-{[ \x01\xff")) {
      std::string body = valid;
      body[i] = c;
      body.reserve(body.size() + kJsonPadding);
      const Status status = decoder.decode_infer(body, body.capacity(), model, request);
      ++edits;
      if (status.ok()) continue;
      ++refused;
      CAPTURE(body);
      CHECK(status.code() == Errc::invalid_argument);
      CHECK_FALSE(status.message().empty());
    }
  }
  CHECK(refused > edits * 3 / 4);
  std::string body = valid;
  body.reserve(body.size() + kJsonPadding);
  CHECK(decoder.decode_infer(body, body.capacity(), model, request).ok());
}

// ---- decoding into an InputSink
// ------------------------------------------------------------------

TEST_CASE("with a sink, elements of every fixed-size datatype land in the sink's buffers") {
  for (DType dtype :
       {DType::Bool, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Int8,
        DType::Int16, DType::Int32, DType::Int64, DType::FP16, DType::FP32, DType::FP64}) {
    CAPTURE(to_string(dtype));
    const ModelMetadata model = identity_model(dtype);
    const std::string json =
        one_input(to_string(dtype), "[1, 4]",
                  dtype == DType::Bool ? "[true, false, true, true]" : "[1, 2, 3, 4]");
    const Decoded reference = decode(model, json);
    REQUIRE(reference.status.ok());
    RecordingSink sink(model);
    const Decoded d = decode_into(sink, model, json);
    REQUIRE(d.status.ok());
    const auto expected = reference.request.inputs[0].bytes();
    const auto row = sink.row(0);
    CHECK(std::equal(row.begin(), row.end(), expected.begin(), expected.end()));
    CHECK(sink.guards_intact());
    CHECK(d.request.inputs.empty());  // no BYTES input: no tensors at all
  }
  const ModelMetadata model = identity_model();
  RecordingSink sink(model);
  REQUIRE(decode_into(sink, model, one_input("FP32", "[1, 4]", "[1.5, -2, 3e2, 0]")).status.ok());
  CHECK(sink.values<float>(0) == std::vector<float>{1.5f, -2.0f, 300.0f, 0.0f});
}

TEST_CASE("with a sink, shapes and buffers follow metadata order whatever the request order") {
  const ModelMetadata model = two_input_model();
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, R"({"inputs":[
      {"data":[7,8],"name":"B","shape":[2,1],"datatype":"INT32"},
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4]]}]})");
  REQUIRE(d.status.ok());
  CHECK(sink.shapes == std::vector<Shape>{{2, 2}, {2, 1}});
  CHECK(sink.values<float>(0) == std::vector<float>{1, 2, 3, 4});
  CHECK(sink.values<std::int32_t>(1) == std::vector<std::int32_t>{7, 8});
}

TEST_CASE("request parameters after the inputs in the body are still given to allocate") {
  const ModelMetadata model = identity_model();
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, R"({"inputs":[{"name":"INPUT0","shape":[1,4],
      "datatype":"FP32","data":[1,2,3,4]}],"parameters":{"priority":3,"timeout":250}})");
  REQUIRE(d.status.ok());
  REQUIRE(sink.parameters.size() == 2);
  CHECK(sink.parameters[0].first == "priority");
  CHECK(std::get<std::int64_t>(sink.parameters[0].second) == 3);
  CHECK(sink.parameters[1].first == "timeout");
  CHECK(std::get<std::int64_t>(sink.parameters[1].second) == 250);
  CHECK(d.request.parameters == sink.parameters);
}

TEST_CASE("allocate is called once, and only after every input has been validated") {
  const ModelMetadata model = two_input_model();
  const std::string a = R"({"name":"A","shape":[1,2],"datatype":"FP32","data":[1,2]})";
  {
    RecordingSink sink(model);
    REQUIRE(decode_into(sink, model,
                        R"({"inputs":[)" + a +
                            R"(,{"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}]})")
                .status.ok());
    CHECK(sink.calls == 1);
  }
  // Each is invalid only after a valid first input, or in a field that comes after the inputs.
  const std::pair<std::string, std::string> invalid[] = {
      {R"({"inputs":[)" + a + R"(,{"name":"FOO","shape":[1,1],"datatype":"INT32","data":[3]}]})",
       "inputs[1].name: model 'pair' has no input 'FOO'"},
      {R"({"inputs":[)" + a + R"(,{"name":"B","shape":[1,1],"datatype":"INT8","data":[3]}]})",
       "inputs[1].datatype: expected INT32, got INT8"},
      {R"({"inputs":[)" + a + R"(,{"data":[3],"name":"B","shape":[1,2],"datatype":"INT32"}]})",
       "inputs[1].shape: [1, 2] does not match the model's [-1, 1]"},
      {R"({"inputs":[)" + a + R"(,{"name":"B","shape":[2,1],"datatype":"INT32","data":[3,4]}]})",
       "inputs[1].shape[0]: batch size 2 differs from inputs[0]'s 1"},
      {R"({"inputs":[)" + a + R"(,{"name":"B","shape":[1,1],"datatype":"INT32","data":"3"}]})",
       "inputs[1].data: expected an array, got string"},
      {R"({"inputs":[)" + a + R"(]})", "inputs: missing input 'B'"},
      {R"({"inputs":[)" + a +
           R"(,{"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}],"outputs":[{"name":"X"}]})",
       "outputs[0].name: model 'pair' has no output 'X'"},
      {R"({"inputs":[)" + a +
           R"(,{"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}],"parameters":[1]})",
       "parameters: expected an object, got array"},
  };
  for (const auto& [json, message] : invalid) {
    CAPTURE(json);
    RecordingSink sink(model);
    const Decoded d = decode_into(sink, model, json);
    CHECK(d.status.message() == message);
    CHECK(sink.calls == 0);
  }
  RecordingSink sink(model);
  const Decoded malformed = decode_into(
      sink, model,
      R"({"inputs":[)" + a +
          R"(,{"name":"B","shape":[1,1],"datatype":"INT32","data":[3]}],"junk":[1,}]})");
  CHECK(malformed.status.message().starts_with("invalid JSON: "));
  CHECK(sink.calls == 0);
}

TEST_CASE("an allocate error is returned unchanged") {
  const ModelMetadata model = identity_model();
  RecordingSink sink(model, Status(Errc::unavailable, "queue full"));
  const Decoded d = decode_into(sink, model, one_input("FP32", "[1, 4]", "[1, 2, 3, 4]"));
  CHECK(d.status.code() == Errc::unavailable);
  CHECK(d.status.message() == "queue full");
  CHECK(sink.calls == 1);
}

TEST_CASE("with a sink, too many elements give the count message and never pass the buffer") {
  const ModelMetadata model = identity_model();
  RecordingSink sink(model);
  const Decoded d =
      decode_into(sink, model, one_input("FP32", "[1, 4]", "[[1, 2, 3, 4], [5, 6, 7, 8, 9]]"));
  CHECK(d.status.message() == "inputs[0].data: shape [1, 4] needs 4 elements, got 9");
  CHECK(sink.guards_intact());
  CHECK(sink.values<float>(0) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("with a sink, too few elements give the count message") {
  const ModelMetadata model = identity_model(DType::FP32, {-1, 64});
  std::string data127 = "[";
  for (int i = 0; i < 127; ++i) data127 += i ? ",1" : "1";
  data127 += "]";
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, one_input("FP32", "[2, 64]", data127));
  CHECK(d.status.message() == "inputs[0].data: shape [2, 64] needs 128 elements, got 127");
  CHECK(sink.guards_intact());
}

TEST_CASE("with a sink, an element error is found while decoding, after allocate") {
  const ModelMetadata model = identity_model(DType::Int8);
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, one_input("INT8", "[1, 4]", R"([1, "2", 3, 4])"));
  CHECK(d.status.message() == "inputs[0].data[1]: expected a number, got string");
  CHECK(sink.calls == 1);
  CHECK(sink.guards_intact());
}

TEST_CASE("with a sink, BYTES inputs still land in the request's tensors") {
  ModelMetadata model;
  model.name = "tagger";
  model.max_batch_size = 8;
  model.inputs = {{"TEXT", DType::Bytes, {-1}}, {"SCORE", DType::FP32, {-1, 2}}};
  model.outputs = {{"TAGS", DType::Bytes, {-1}}};
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, R"({"inputs":[
      {"name":"TEXT","shape":[2],"datatype":"BYTES","data":["a","b\"c"]},
      {"name":"SCORE","shape":[2,2],"datatype":"FP32","data":[1,2,3,4]}]})");
  REQUIRE(d.status.ok());
  CHECK(sink.shapes == std::vector<Shape>{{2}, {2, 2}});
  CHECK(sink.buffers[0].empty());
  CHECK(d.request.inputs[0].shape() == Shape{2});
  CHECK(d.request.inputs[0].strings() == std::vector<std::string>{"a", "b\"c"});
  CHECK(sink.values<float>(1) == std::vector<float>{1, 2, 3, 4});
  CHECK(d.request.inputs[1].bytes().empty());
}

TEST_CASE("with a sink, a reused request keeps no stale tensor for sink-written inputs") {
  const ModelMetadata model = identity_model();
  std::string body = one_input("FP32", "[1, 4]", "[1, 2, 3, 4]");
  body.reserve(body.size() + kJsonPadding);
  OipDecoder decoder;
  InferRequest request;
  REQUIRE(decoder.decode_infer(body, body.capacity(), model, request).ok());
  REQUIRE(request.inputs[0].bytes().size() == 16);
  RecordingSink sink(model);
  REQUIRE(decoder.decode_infer(body, body.capacity(), model, request, sink).ok());
  CHECK(request.inputs.empty());
  CHECK(sink.values<float>(0) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("with a sink, a zero-sized batch allocates empty rows and decodes") {
  const ModelMetadata model = identity_model();
  RecordingSink sink(model);
  const Decoded d = decode_into(sink, model, one_input("FP32", "[0, 4]", "[]"));
  REQUIRE(d.status.ok());
  CHECK(sink.shapes == std::vector<Shape>{{0, 4}});
  CHECK(sink.row(0).empty());
}

TEST_CASE("with a sink, no truncation or corruption of a valid body writes past a buffer") {
  const ModelMetadata model = two_input_model();
  const std::string valid = R"({"id":"a\"b","parameters":{"k":1},"inputs":[
      {"name":"A","shape":[2,2],"datatype":"FP32","data":[[1.5,-2e3],[3,4]]},
      {"data":[7,8],"name":"B","shape":[2,1],"datatype":"INT32"}],"outputs":[{"name":"SUM"}]})";
  OipDecoder decoder;
  InferRequest request;
  const auto decode_once = [&](std::string body) {
    body.reserve(body.size() + kJsonPadding);
    RecordingSink sink(model);
    const Status status = decoder.decode_infer(body, body.capacity(), model, request, sink);
    CHECK(sink.calls <= 1);
    CHECK(sink.guards_intact());
    return status;
  };
  for (std::size_t n = 0; n < valid.size(); ++n) CHECK_FALSE(decode_once(valid.substr(0, n)).ok());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    for (char c : std::string_view("]}\"\\,:0x-{[ \x01\xff")) {
      std::string body = valid;
      body[i] = c;
      (void)decode_once(body);
    }
  }
  CHECK(decode_once(valid).ok());
}
