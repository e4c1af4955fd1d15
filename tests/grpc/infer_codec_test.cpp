// grpc_codec: ModelInferRequest <-> coinfer's requests, and generate messages, without a server.
#include <doctest/doctest.h>

#include <cstring>

#include "infer_codec.hpp"

namespace coinfer {
namespace {

using inference::ModelInferRequest;

ModelMetadata int8_model() {
  ModelMetadata m;
  m.name = "t";
  m.max_batch_size = 8;
  m.inputs = {{"INPUT0", DType::Int8, {-1, -1}}, {"TEXT", DType::Bytes, {-1}}};
  m.outputs = {{"INPUT0", DType::Int8, {-1, -1}}, {"TEXT", DType::Bytes, {-1}}};
  return m;
}

// INPUT0 [1, 3] INT8 with typed contents, TEXT [1] as raw bytes or typed.
ModelInferRequest int8_request(std::vector<int> values) {
  ModelInferRequest r;
  r.set_model_name("t");
  auto* x = r.add_inputs();
  x->set_name("INPUT0");
  x->set_datatype("INT8");
  x->add_shape(1);
  x->add_shape(static_cast<std::int64_t>(values.size()));
  for (int v : values) x->mutable_contents()->add_int_contents(v);
  auto* t = r.add_inputs();
  t->set_name("TEXT");
  t->set_datatype("BYTES");
  t->add_shape(1);
  t->mutable_contents()->add_bytes_contents("hello");
  return r;
}

Status decode(const ModelInferRequest& r, InferRequest& out,
              std::chrono::microseconds deadline = {}) {
  grpc_codec::InferDecoder decoder(r, deadline);
  return decoder.decode(int8_model(), out, nullptr);
}

TEST_CASE("grpc codec: typed contents are range-checked and counted against the shape") {
  InferRequest out;
  REQUIRE(decode(int8_request({1, -2, 127}), out).ok());
  REQUIRE(out.inputs.size() == 2);
  const auto values = out.inputs[0].values<std::int8_t>();
  CHECK(std::vector<int>(values.begin(), values.end()) == std::vector<int>{1, -2, 127});
  CHECK(out.inputs[1].strings() == std::vector<std::string>{"hello"});

  CHECK(decode(int8_request({1, 300, 3}), out).message() ==
        "inputs[0].contents.int_contents[1]: 300 is out of range for INT8");
  ModelInferRequest short_by_one = int8_request({1, 2, 3});
  short_by_one.mutable_inputs(0)->mutable_contents()->mutable_int_contents()->RemoveLast();
  CHECK(decode(short_by_one, out).message() ==
        "inputs[0].contents.int_contents: 2 elements, the shape needs 3");
  ModelInferRequest wrong = int8_request({1, 2, 3});
  wrong.mutable_inputs(0)->set_datatype("INT16");
  CHECK(decode(wrong, out).message() == "inputs[0].datatype: expected INT8, got INT16");
  ModelInferRequest missing = int8_request({1});
  missing.mutable_inputs()->RemoveLast();
  CHECK(decode(missing, out).message() == "inputs: model 't' needs input 'TEXT'");
}

TEST_CASE("grpc codec: raw contents are one entry per input, of exactly the shape's bytes") {
  ModelInferRequest r = int8_request({1, 2, 3});
  r.mutable_inputs(0)->clear_contents();
  r.mutable_inputs(1)->clear_contents();
  r.add_raw_input_contents(std::string("\x05\xfb\x07", 3));
  const std::uint32_t length = 2;
  std::string text(reinterpret_cast<const char*>(&length), 4);
  r.add_raw_input_contents(text + "hi");
  InferRequest out;
  REQUIRE(decode(r, out).ok());
  CHECK(out.inputs[0].values<std::int8_t>()[1] == -5);
  CHECK(out.inputs[1].strings() == std::vector<std::string>{"hi"});

  ModelInferRequest long_by_one = r;
  long_by_one.mutable_raw_input_contents(0)->push_back('\0');
  CHECK(decode(long_by_one, out).message() ==
        "raw_input_contents[0]: 4 bytes, the shape [1, 3] of INT8 needs 3");
  ModelInferRequest one_entry = r;
  one_entry.mutable_raw_input_contents()->RemoveLast();
  CHECK(decode(one_entry, out).message() ==
        "raw_input_contents: 1 entries for 2 inputs (one per input, in the order of inputs)");
  ModelInferRequest both = r;
  both.mutable_inputs(0)->mutable_contents()->add_int_contents(1);
  CHECK(decode(both, out).message() ==
        "inputs[0].contents: given beside raw_input_contents (one or the other)");
  ModelInferRequest cut = r;
  cut.mutable_raw_input_contents(1)->pop_back();
  CHECK(decode(cut, out).message() ==
        "raw_input_contents[1]: BYTES element 0: length 2 runs past its 5 bytes");
}

TEST_CASE("grpc codec: the deadline becomes a shorter timeout, and triton_ parameters are skipped") {
  InferRequest out;
  ModelInferRequest r = int8_request({1});
  (*r.mutable_parameters())["triton_enable_empty_final_response"].set_bool_param(true);
  REQUIRE(decode(r, out, std::chrono::microseconds(5000)).ok());
  REQUIRE(out.parameters.size() == 1);
  CHECK(out.parameters[0].first == "timeout");
  CHECK(std::get<std::int64_t>(out.parameters[0].second) == 5000);

  (*r.mutable_parameters())["timeout"].set_int64_param(9000);  // longer than the deadline
  REQUIRE(decode(r, out, std::chrono::microseconds(5000)).ok());
  REQUIRE(find_parameter(out.parameters, "timeout") != nullptr);
  CHECK(std::get<std::int64_t>(*find_parameter(out.parameters, "timeout")) == 5000);
  (*r.mutable_parameters())["timeout"].set_int64_param(2000);  // shorter: kept
  REQUIRE(decode(r, out, std::chrono::microseconds(5000)).ok());
  CHECK(std::get<std::int64_t>(*find_parameter(out.parameters, "timeout")) == 2000);
  (*r.mutable_parameters())["empty"];
  CHECK(decode(r, out).message() == "parameters.empty: no value");
}

TEST_CASE("grpc codec: outputs come back raw, the requested ones in the order asked") {
  const ModelMetadata model = int8_model();
  ModelInferRequest r = int8_request({4, 5});
  r.add_outputs()->set_name("TEXT");
  InferRequest request;
  REQUIRE(decode(r, request).ok());
  inference::ModelInferResponse response;
  grpc_codec::encode_infer(model, request, request.inputs, response);
  REQUIRE(response.outputs_size() == 1);
  CHECK(response.outputs(0).name() == "TEXT");
  CHECK(response.raw_output_contents(0) == std::string("\x05\0\0\0hello", 9));

  r.add_outputs()->set_name("NOPE");
  CHECK(decode(r, request).message() == "outputs[1].name: model 't' has no output 'NOPE'");
}

TEST_CASE("grpc codec: a language model's request becomes the JSON generate message") {
  ModelInferRequest r;
  r.set_model_name("smollm2");
  auto* text = r.add_inputs();
  text->set_name("text_input");
  text->set_datatype("BYTES");
  text->add_shape(1);
  text->mutable_contents()->add_bytes_contents("Say \"hi\"");
  auto* stream = r.add_inputs();
  stream->set_name("stream");
  stream->set_datatype("BOOL");
  stream->add_shape(1);
  stream->mutable_contents()->add_bool_contents(true);
  auto* sampling = r.add_inputs();
  sampling->set_name("sampling_parameters");
  sampling->set_datatype("BYTES");
  sampling->add_shape(1);
  sampling->mutable_contents()->add_bytes_contents(R"({"top_k": 5})");
  auto& p = *r.mutable_parameters();
  p["max_tokens"].set_int64_param(16);
  p["temperature"].set_double_param(0.5);
  p["stop"].set_string_param(R"(["\n", "."])");  // a JSON array: taken as one
  p["ignore_eos"].set_bool_param(false);
  p["timeout"].set_int64_param(1'500'000);  // µs, as every OIP request's
  p["triton_enable_empty_final_response"].set_bool_param(true);
  std::string json;
  REQUIRE(grpc_codec::generate_message(r, json).ok());
  CHECK(json == R"({"text_input":"Say \"hi\"","stream":true,"parameters":{"top_k": 5},)"
                R"("ignore_eos":false,"max_tokens":16,"stop":["\n", "."],"temperature":0.5,)"
                R"("timeout":1.5})");

  p["stop"].set_string_param("[");  // not JSON: the string itself
  REQUIRE(grpc_codec::generate_message(r, json).ok());
  CHECK(json.find(R"("stop":"[")") != std::string::npos);

  // A large double stays a JSON number the server's own parser reads (not a 21-digit integer).
  p["temperature"].set_double_param(-1.4757395258967641e+20);
  REQUIRE(grpc_codec::generate_message(r, json).ok());
  CHECK(json.find(R"("temperature":-1.4757395258967641e+20)") != std::string::npos);

  // JSON nested as deep as a whole message may be cannot go one level down into it.
  // (simdjson's default depth, 1024, is what a message may have.)
  const std::string deep = std::string(1024, '[') + std::string(1024, ']');
  p["stop"].set_string_param(deep);  // a string, then (refused later as a stop sequence)
  REQUIRE(grpc_codec::generate_message(r, json).ok());
  CHECK(json.find(R"("stop":"[[)") != std::string::npos);
  p["stop"].set_string_param(deep.substr(1, deep.size() - 2));  // one level less: taken as JSON
  REQUIRE(grpc_codec::generate_message(r, json).ok());
  CHECK(json.find(R"("stop":[[)") != std::string::npos);
  sampling->mutable_contents()->set_bytes_contents(
      0, R"({"a":)" + deep.substr(1, deep.size() - 2) + "}");
  CHECK(grpc_codec::generate_message(r, json).message() ==
        "inputs[2]: sampling_parameters must be a JSON object of generate fields");
  sampling->mutable_contents()->set_bytes_contents(0, "[1]");
  CHECK(grpc_codec::generate_message(r, json).message() ==
        "inputs[2]: sampling_parameters must be a JSON object of generate fields");
  r.mutable_inputs()->DeleteSubrange(2, 1);
  stream->set_name("image");
  CHECK(grpc_codec::generate_message(r, json).message() ==
        "inputs[1].name: a language model takes text_input, stream and sampling_parameters, "
        "not 'image'");
  r.mutable_inputs()->DeleteSubrange(0, 1);
  r.mutable_inputs()->DeleteSubrange(0, 1);
  CHECK(grpc_codec::generate_message(r, json).message() == "inputs: text_input (BYTES [1]) missing");
}

}  // namespace
}  // namespace coinfer
