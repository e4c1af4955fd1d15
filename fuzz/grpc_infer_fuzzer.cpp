// The gRPC infer messages (ModelInfer, and each message of a ModelStreamInfer stream): arbitrary
// bytes parsed as a ModelInferRequest (as gRPC hands the server one), then decoded against each
// model below through grpc_codec::InferDecoder, into the request's own tensors and into an
// exact-size sink (as the batcher's), and turned into a generate message as for a language
// model. A decoded request must match its model (every tensor of the declared type, a matching
// shape, exactly its elements, BOOL 0 or 1); its inputs encoded back as outputs must give one
// raw entry per output of the right size; a generate message must be a JSON object.
#include <algorithm>
#include <vector>

#include "fuzz_support.hpp"
#include "infer_codec.hpp"

using namespace coinfer;
using coinfer::fuzz::check;
using coinfer::fuzz::ExactSink;

namespace {

std::vector<ModelMetadata> make_models() {
  std::vector<ModelMetadata> models;
  for (DType dtype : fuzz::kFixedTypes) {
    ModelMetadata m;
    m.name = "t";
    m.max_batch_size = 8;
    m.inputs = {{"INPUT0", dtype, {-1, -1}}};
    m.outputs = {{"INPUT0", dtype, {-1, -1}}};
    models.push_back(std::move(m));
  }
  ModelMetadata mixed;
  mixed.name = "mixed";
  mixed.max_batch_size = 4;
  mixed.inputs = {
      {"T", DType::Bytes, {-1, -1}}, {"X", DType::FP16, {-1, 2}}, {"M", DType::Bool, {-1, -1, 2}}};
  mixed.outputs = {{"T", DType::Bytes, {-1, -1}}, {"X", DType::FP16, {-1, 2}},
                   {"M", DType::Bool, {-1, -1, 2}}};
  models.push_back(mixed);
  ModelMetadata fixed;  // no batch dimension
  fixed.name = "fixed";
  fixed.inputs = {{"A", DType::FP32, {2, 3}}, {"B", DType::Int8, {1}}};
  fixed.outputs = {{"A", DType::FP32, {2, 3}}, {"B", DType::Int8, {1}}};
  models.push_back(fixed);
  return models;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<ModelMetadata> models = make_models();
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;

  for (const ModelMetadata& model : models) {
    grpc_codec::InferDecoder decoder(request, std::chrono::microseconds(request.id().size()));
    InferRequest own;
    if (decoder.decode(model, own, nullptr).ok()) {
      check(own.inputs.size() == model.inputs.size(), "one tensor per model input");
      for (std::size_t m = 0; m < model.inputs.size(); ++m) {
        const Tensor& t = own.inputs[m];
        check(t.dtype() == model.inputs[m].dtype, "input tensor of the model's type");
        check(shape_matches(model.inputs[m].shape, t.shape()), "input shape fits the model");
        const auto count = static_cast<std::size_t>(element_count(t.shape()));
        if (t.dtype() == DType::Bytes) {
          check(t.strings().size() == count, "BYTES: one string per element");
        } else {
          check(t.bytes().size() == count * element_size(t.dtype()), "bytes per element");
          if (t.dtype() == DType::Bool) {
            check(std::all_of(t.bytes().begin(), t.bytes().end(),
                              [](std::byte b) { return b <= std::byte{1}; }),
                  "BOOL elements are 0 or 1");
          }
        }
      }
      for (std::size_t index : own.requested_outputs) {
        check(index < model.outputs.size(), "requested output within the model's outputs");
      }
      // The inputs as outputs (every model here echoes): one raw entry of the tensor's size.
      inference::ModelInferResponse response;
      grpc_codec::encode_infer(model, own, own.inputs, response);
      const std::size_t expected =
          own.requested_outputs.empty() ? model.outputs.size() : own.requested_outputs.size();
      check(static_cast<std::size_t>(response.outputs_size()) == expected &&
                static_cast<std::size_t>(response.raw_output_contents_size()) == expected,
            "one output and one raw entry per requested output");
    }
    InferRequest sunk;
    ExactSink sink(model, {});
    const Status status = decoder.decode(model, sunk, &sink);
    check(sink.calls <= 1, "allocate is called at most once");
    if (status.ok()) check(sink.calls == 1, "a decoded request allocated its destinations");
  }

  std::string json;
  if (grpc_codec::generate_message(request, json).ok()) {
    check(fuzz::is_json(json) && json.front() == '{', "a generate message is a JSON object");
  }
  return 0;
}
