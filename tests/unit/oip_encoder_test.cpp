#include "coinfer/protocol/oip_encoder.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/half.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/protocol/oip_decoder.hpp"

using namespace coinfer;

namespace {

// Names moved in, not assigned from literals: GCC 12 at -O3 warns falsely on
// std::string = "literal" (-Wrestrict, GCC PR 105329).
InferResponse response_for(std::string model_name, std::string model_version) {
  InferResponse r;
  r.model_name = std::move(model_name);
  r.model_version = std::move(model_version);
  return r;
}

template <class T>
Tensor make_tensor(Shape shape, const std::vector<T>& values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  REQUIRE(t.values<T>().size() == values.size());
  std::copy(values.begin(), values.end(), t.values<T>().begin());
  return t;
}

// The response for one output named OUTPUT0 holding `t`.
std::string encode_one(Tensor t) {
  InferResponse r = response_for("m", "1");
  const TensorSpec spec{"OUTPUT0", t.dtype(), t.shape()};
  r.outputs.push_back(std::move(t));
  std::string out;
  encode_infer_response(r, std::span(&spec, 1), {}, out);
  return out;
}

// The text between "data":[ and the closing ] of the only output.
std::string_view data_of(std::string_view response) {
  const std::size_t begin = response.find("\"data\":[");
  REQUIRE(begin != std::string_view::npos);
  const std::size_t first = begin + 8;
  const std::size_t end = response.rfind("]}]}");
  REQUIRE(end != std::string_view::npos);
  return response.substr(first, end - first);
}

std::vector<std::string_view> split(std::string_view list) {
  std::vector<std::string_view> items;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    items.push_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

}  // namespace

TEST_CASE("an inference response has the Open Inference Protocol layout") {
  InferResponse r = response_for("identity", "1");
  r.outputs.push_back(make_tensor<float>({1, 3}, {1.0f, -2.5f, 0.1f}));
  const std::vector<TensorSpec> specs{{"OUTPUT0", DType::FP32, {-1, 3}}};
  std::string out;
  encode_infer_response(r, specs, {}, out);
  CHECK(out == R"({"model_name":"identity","model_version":"1","outputs":[{"name":"OUTPUT0",)"
               R"("datatype":"FP32","shape":[1,3],"data":[1,-2.5,0.1]}]})");
}

TEST_CASE("the response carries id and parameters only when present") {
  InferResponse r = response_for("identity", "2");
  r.id = "req-\"7\"";
  r.parameters = {{"flag", true}, {"n", std::int64_t{-3}}, {"x", 0.25}, {"s", std::string("v")}};
  r.outputs.push_back(make_tensor<std::int32_t>({2}, {7, -8}));
  const std::vector<TensorSpec> specs{{"OUT", DType::Int32, {-1}}};
  std::string out;
  encode_infer_response(r, specs, {}, out);
  CHECK(out == R"({"model_name":"identity","model_version":"2","id":"req-\"7\"",)"
               R"("parameters":{"flag":true,"n":-3,"x":0.25,"s":"v"},"outputs":[{"name":"OUT",)"
               R"("datatype":"INT32","shape":[2],"data":[7,-8]}]})");
}

TEST_CASE("only the selected outputs are written, in the order selected") {
  InferResponse r = response_for("pair", "1");
  r.outputs.push_back(make_tensor<float>({1}, {1.0f}));
  r.outputs.push_back(make_tensor<float>({1}, {2.0f}));
  r.outputs.push_back(make_tensor<float>({1}, {3.0f}));
  const std::vector<TensorSpec> specs{
      {"A", DType::FP32, {-1}}, {"B", DType::FP32, {-1}}, {"C", DType::FP32, {-1}}};
  const std::vector<std::size_t> selected{2, 0};
  std::string out;
  encode_infer_response(r, specs, selected, out);
  CHECK(out == R"({"model_name":"pair","model_version":"1","outputs":[)"
               R"({"name":"C","datatype":"FP32","shape":[1],"data":[3]},)"
               R"({"name":"A","datatype":"FP32","shape":[1],"data":[1]}]})");
}

TEST_CASE("encoders append to the caller's buffer instead of replacing it") {
  std::string out = "prefix:";
  encode_error("x", out);
  CHECK(out == R"(prefix:{"error":"x"})");
}

TEST_CASE("random FP32 values survive encoding bit-exactly") {
  std::mt19937 rng(12345);
  std::vector<float> values;
  while (values.size() < 20000) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isfinite(f)) values.push_back(f);
  }
  values.push_back(std::numeric_limits<float>::max());
  values.push_back(std::numeric_limits<float>::denorm_min());
  values.push_back(-0.0f);
  const auto n = static_cast<std::int64_t>(values.size());
  const std::string out = encode_one(make_tensor<float>({n}, values));
  const std::vector<std::string_view> items = split(data_of(out));
  REQUIRE(items.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    float parsed = 0;
    const auto [end, errc] =
        std::from_chars(items[i].data(), items[i].data() + items[i].size(), parsed);
    REQUIRE(errc == std::errc{});
    REQUIRE(end == items[i].data() + items[i].size());
    REQUIRE(std::bit_cast<std::uint32_t>(parsed) == std::bit_cast<std::uint32_t>(values[i]));
  }
}

TEST_CASE("random FP64 values survive encoding bit-exactly") {
  std::mt19937_64 rng(6789);
  std::vector<double> values;
  while (values.size() < 20000) {
    const double d = std::bit_cast<double>(static_cast<std::uint64_t>(rng()));
    if (std::isfinite(d)) values.push_back(d);
  }
  values.push_back(std::numeric_limits<double>::lowest());
  values.push_back(std::numeric_limits<double>::denorm_min());
  const auto n = static_cast<std::int64_t>(values.size());
  const std::string out = encode_one(make_tensor<double>({n}, values));
  const std::vector<std::string_view> items = split(data_of(out));
  REQUIRE(items.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    double parsed = 0;
    const auto [end, errc] =
        std::from_chars(items[i].data(), items[i].data() + items[i].size(), parsed);
    REQUIRE(errc == std::errc{});
    REQUIRE(end == items[i].data() + items[i].size());
    REQUIRE(std::bit_cast<std::uint64_t>(parsed) == std::bit_cast<std::uint64_t>(values[i]));
  }
}

TEST_CASE("encoded FP32 values decode back to the same bits through the OIP decoder") {
  std::mt19937 rng(424242);
  std::vector<float> values;
  while (values.size() < 4096) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isfinite(f)) values.push_back(f);
  }
  const std::string encoded = encode_one(make_tensor<float>({4096}, values));
  std::string body = R"({"inputs":[{"name":"X","shape":[4096],"datatype":"FP32","data":[)" +
                     std::string(data_of(encoded)) + "]}]}";
  body.reserve(body.size() + kJsonPadding);
  ModelMetadata model;
  model.name = "echo";
  model.inputs = {{"X", DType::FP32, {4096}}};
  OipDecoder decoder;
  InferRequest request;
  REQUIRE(decoder.decode_infer(body, body.capacity(), model, request).ok());
  const auto decoded = request.inputs[0].values<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    REQUIRE(std::bit_cast<std::uint32_t>(decoded[i]) == std::bit_cast<std::uint32_t>(values[i]));
  }
}

TEST_CASE("encoded FP64 values, large ones included, decode back through the OIP decoder") {
  // Doubles whose shortest form would be a 20-digit integer are written in scientific form:
  // simdjson refuses integers past 64 bits.
  std::mt19937_64 rng(97531);
  std::vector<double> values = {-1.4757395258967641e+20, 1.8446744073709552e+19, 1e15,
                                9.999999999999998e14, 123456789012345678.0};
  while (values.size() < 4096) {
    const double d = std::bit_cast<double>(static_cast<std::uint64_t>(rng()));
    if (std::isfinite(d)) values.push_back(d);
  }
  const std::string encoded = encode_one(make_tensor<double>({4096}, values));
  std::string body = R"({"inputs":[{"name":"X","shape":[4096],"datatype":"FP64","data":[)" +
                     std::string(data_of(encoded)) + "]}]}";
  body.reserve(body.size() + kJsonPadding);
  ModelMetadata model;
  model.name = "echo";
  model.inputs = {{"X", DType::FP64, {4096}}};
  OipDecoder decoder;
  InferRequest request;
  const Status status = decoder.decode_infer(body, body.capacity(), model, request);
  INFO(status.message());
  REQUIRE(status.ok());
  const auto decoded = request.inputs[0].values<double>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    REQUIRE(std::bit_cast<std::uint64_t>(decoded[i]) == std::bit_cast<std::uint64_t>(values[i]));
  }
}

TEST_CASE("every finite FP16 value survives encoding bit-exactly") {
  std::vector<std::uint16_t> finite;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    if (((b >> 10) & 0x1f) != 0x1f) finite.push_back(static_cast<std::uint16_t>(b));
  }
  Tensor t(DType::FP16, {static_cast<std::int64_t>(finite.size())});
  std::memcpy(t.bytes().data(), finite.data(), finite.size() * 2);
  const std::string out = encode_one(std::move(t));
  const std::vector<std::string_view> items = split(data_of(out));
  REQUIRE(items.size() == finite.size());
  for (std::size_t i = 0; i < finite.size(); ++i) {
    float parsed = 0;
    REQUIRE(std::from_chars(items[i].data(), items[i].data() + items[i].size(), parsed).ec ==
            std::errc{});
    REQUIRE(float_to_half(parsed) == finite[i]);
  }
}

TEST_CASE("NaN and infinities are written as null") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(data_of(encode_one(make_tensor<float>({4}, {std::numeric_limits<float>::quiet_NaN(), inf,
                                                    -inf, 1.0f}))) == "null,null,null,1");
  CHECK(data_of(encode_one(make_tensor<double>({2}, {std::nan(""), 2.0}))) == "null,2");
  Tensor half(DType::FP16, {2});
  auto* bits = reinterpret_cast<std::uint16_t*>(half.bytes().data());
  bits[0] = 0x7e00;  // NaN
  bits[1] = 0xfc00;  // -inf
  CHECK(data_of(encode_one(std::move(half))) == "null,null");
}

TEST_CASE("integer extremes are written exactly") {
  CHECK(data_of(encode_one(
            make_tensor<std::int64_t>({2}, {std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max()}))) ==
        "-9223372036854775808,9223372036854775807");
  CHECK(data_of(encode_one(make_tensor<std::uint64_t>(
            {1}, {std::numeric_limits<std::uint64_t>::max()}))) == "18446744073709551615");
  CHECK(data_of(encode_one(make_tensor<std::int8_t>({2}, {-128, 127}))) == "-128,127");
  CHECK(data_of(encode_one(make_tensor<std::uint8_t>({2}, {0, 255}))) == "0,255");
  CHECK(data_of(encode_one(make_tensor<std::uint16_t>({1}, {65535}))) == "65535");
  CHECK(data_of(encode_one(make_tensor<std::int16_t>({1}, {-32768}))) == "-32768");
  CHECK(data_of(encode_one(make_tensor<std::uint32_t>({1}, {4294967295u}))) == "4294967295");
}

TEST_CASE("BOOL elements are written as true and false") {
  Tensor t(DType::Bool, {3});
  t.bytes()[0] = std::byte{1};
  t.bytes()[2] = std::byte{1};
  CHECK(data_of(encode_one(std::move(t))) == "true,false,true");
}

TEST_CASE("an empty tensor is written as an empty data array") {
  const std::string out = encode_one(Tensor(DType::FP32, {0, 4}));
  CHECK(out.find(R"("shape":[0,4],"data":[])") != std::string::npos);
}

TEST_CASE("BYTES elements are written as escaped JSON strings") {
  Tensor t(DType::Bytes, {3});
  t.strings()[0] = "plain";
  t.strings()[1] = "quote\" backslash\\ newline\n tab\t nul" + std::string(1, '\0') + " \x1f";
  t.strings()[2] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // valid UTF-8 is kept as is
  CHECK(data_of(encode_one(std::move(t))) ==
        R"("plain","quote\" backslash\\ newline\n tab\t nul\u0000 \u001f",)"
        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
}

TEST_CASE("bytes that are not valid UTF-8 are escaped as \\u00XX") {
  std::string out;
  // A stray continuation byte, a truncated sequence, an overlong form, a surrogate, 0xff.
  json_append_string(out, "a\x80z \xc3 \xc0\xaf \xed\xa0\x80 \xff \xf4\x90\x80\x80");
  CHECK(out ==
        R"("a\u0080z \u00c3 \u00c0\u00af \u00ed\u00a0\u0080 \u00ff \u00f4\u0090\u0080\u0080")");
}

TEST_CASE("escaped BYTES decode back to the original text through the OIP decoder") {
  const std::string original =
      "\"\\/\b\f\n\r\t" + std::string(1, '\0') + "\x01 caf\xc3\xa9 \xf0\x9f\x98\x80 end";
  Tensor t(DType::Bytes, {1});
  t.strings()[0] = original;
  const std::string encoded = encode_one(std::move(t));
  std::string body = R"({"inputs":[{"name":"X","shape":[1],"datatype":"BYTES","data":[)" +
                     std::string(data_of(encoded)) + "]}]}";
  body.reserve(body.size() + kJsonPadding);
  ModelMetadata model;
  model.inputs = {{"X", DType::Bytes, {1}}};
  OipDecoder decoder;
  InferRequest request;
  REQUIRE(decoder.decode_infer(body, body.capacity(), model, request).ok());
  CHECK(request.inputs[0].strings()[0] == original);
}

TEST_CASE("model metadata lists name, version, platform and tensor specs") {
  ModelMetadata m;
  m.name = "classifier";
  m.version = "3";
  m.platform = "coinfer";
  m.max_batch_size = 32;
  m.inputs = {{"INPUT0", DType::FP32, {-1, 64}}};
  m.outputs = {{"LOGITS", DType::FP32, {-1, 10}}, {"LABEL", DType::Int64, {-1}}};
  std::string out;
  encode_model_metadata(m, out);
  CHECK(out == R"({"name":"classifier","versions":["3"],"platform":"coinfer",)"
               R"("inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,64]}],)"
               R"("outputs":[{"name":"LOGITS","datatype":"FP32","shape":[-1,10]},)"
               R"({"name":"LABEL","datatype":"INT64","shape":[-1]}]})");
}

TEST_CASE("an error body holds the escaped message") {
  std::string out;
  encode_error("inputs[0].name: model 'm' has no input \"X\"\n", out);
  CHECK(out == R"({"error":"inputs[0].name: model 'm' has no input \"X\"\n"})");
}

TEST_CASE("server metadata lists name, version and extensions") {
  const std::vector<std::string_view> extensions{"model_repository", "statistics"};
  std::string out;
  encode_server_metadata("coinfer", "0.1.0", extensions, out);
  CHECK(out ==
        R"({"name":"coinfer","version":"0.1.0","extensions":["model_repository","statistics"]})");
  out.clear();
  encode_server_metadata("coinfer", "0.1.0", {}, out);
  CHECK(out == R"({"name":"coinfer","version":"0.1.0","extensions":[]})");
}

TEST_CASE("binary outputs carry binary_data_size and follow the JSON in output order") {
  InferResponse r = response_for("m", "1");
  r.outputs.push_back(make_tensor<float>({1, 2}, {1.5f, -2.0f}));
  r.outputs.push_back(make_tensor<std::int64_t>({1}, {7}));
  Tensor strings(DType::Bytes, {2});
  strings.strings()[0] = std::string("ab");
  strings.strings()[1] = std::string();
  r.outputs.push_back(std::move(strings));
  const TensorSpec specs[] = {{"P", DType::FP32, {-1, 2}},
                              {"L", DType::Int64, {-1}},
                              {"S", DType::Bytes, {-1}}};
  const std::size_t selected[] = {2, 1, 0};  // S, L, P
  const std::uint8_t binary[] = {1, 0, 1};   // by model output: P and S binary
  std::string out = "prefix";                // appended to, as the HTTP body is
  const std::size_t json_bytes = encode_infer_response(r, specs, selected, out, binary);
  const std::string_view json = std::string_view(out).substr(6, json_bytes);
  CHECK(json ==
        R"({"model_name":"m","model_version":"1","outputs":[)"
        R"({"name":"S","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":10}},)"
        R"({"name":"L","datatype":"INT64","shape":[1],"data":[7]},)"
        R"({"name":"P","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]})");
  std::string expected_tail("\x02\0\0\0ab\0\0\0\0", 10);  // S first, in the order sent
  const float p[] = {1.5f, -2.0f};
  expected_tail.append(reinterpret_cast<const char*>(p), sizeof p);
  CHECK(out.substr(6 + json_bytes) == expected_tail);

  std::string plain;
  const std::size_t plain_json = encode_infer_response(r, specs, selected, plain);
  CHECK(plain_json == plain.size());  // JSON only
  CHECK(plain.find("binary_data_size") == std::string::npos);
}
