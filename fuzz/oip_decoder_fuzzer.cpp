// The OIP v2 request decoder (OipDecoder::decode_infer), JSON and binary tensor data.
//
// Input: an infer request body. Bytes before the first NUL are the JSON; the bytes after it,
// if any, are the binary tensor data (as if Inference-Header-Content-Length gave the JSON's
// length), laid out right after the JSON in one buffer with the padding after both, as the
// server holds a body. Each input is decoded against every model below, through the request's
// own tensors and through an InputSink (as the batcher's), with one decoder reused throughout
// (as each I/O thread reuses its own). A decoded request must match its model: every tensor
// of the declared type and a matching shape, holding exactly its elements.
#include <algorithm>
#include <vector>

#include "fuzz_support.hpp"

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
    m.outputs = {{"OUTPUT0", dtype, {-1, -1}}};
    models.push_back(std::move(m));
  }
  ModelMetadata text;
  text.name = "text";
  text.max_batch_size = 8;
  text.inputs = {{"text", DType::Bytes, {-1}}};
  text.outputs = {{"embedding", DType::FP32, {-1, 4}}};
  models.push_back(text);
  ModelMetadata pair;
  pair.name = "pair";
  pair.max_batch_size = 8;
  pair.inputs = {{"A", DType::FP32, {-1, 2}}, {"B", DType::Int32, {-1, 1}}};
  pair.outputs = {{"SUM", DType::FP32, {-1, 2}}, {"PRODUCT", DType::FP32, {-1, 2}}};
  models.push_back(pair);
  ModelMetadata fixed;  // no batch dimension
  fixed.name = "fixed";
  fixed.inputs = {{"INPUT0", DType::FP32, {2, 3}}};
  fixed.outputs = {{"OUTPUT0", DType::FP32, {2, 3}}, {"OUTPUT1", DType::FP32, {2}}};
  models.push_back(fixed);
  ModelMetadata mixed;
  mixed.name = "mixed";
  mixed.max_batch_size = 4;
  mixed.inputs = {
      {"T", DType::Bytes, {-1, -1}}, {"X", DType::FP16, {-1, 2}}, {"M", DType::Bool, {-1, -1, 2}}};
  mixed.outputs = {{"Y", DType::FP16, {-1, 2}}, {"Z", DType::Bytes, {-1}}};
  models.push_back(mixed);
  return models;
}

bool all_bool(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(),
                     [](std::byte b) { return b == std::byte{0} || b == std::byte{1}; });
}

// `sink`: decoded into a sink, where a model without BYTES inputs leaves request.inputs empty.
void check_request(const ModelMetadata& model, const InferRequest& request, bool sink = false) {
  for (std::size_t index : request.requested_outputs) {
    check(index < model.outputs.size(), "requested output index within the model's outputs");
  }
  check(request.binary_outputs.empty() || request.binary_outputs.size() == model.outputs.size(),
        "binary_outputs: one flag per model output");
  const bool any_bytes = std::any_of(model.inputs.begin(), model.inputs.end(),
                                     [](const TensorSpec& spec) { return spec.dtype == DType::Bytes; });
  if (sink && !any_bytes) {
    check(request.inputs.empty(), "no tensors when every input went to the sink");
  } else {
    check(request.inputs.size() == model.inputs.size(), "one tensor per model input");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<ModelMetadata> models = make_models();
  static OipDecoder decoder;
  static InferRequest reused;  // the tensors' storage is reused, as resize() promises

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t json_size = std::min(input.find('\0'), input.size());
  std::string body(input.substr(0, json_size));
  if (json_size < input.size()) body.append(input.substr(json_size + 1));
  const fuzz::PaddedBuffer buffer(body);
  const std::string_view json = buffer.view().substr(0, json_size);
  const auto binary = std::as_bytes(std::span(buffer.data() + json_size, body.size() - json_size));

  for (const ModelMetadata& model : models) {
    // Into the request's own tensors.
    if (decoder.decode_infer(json, buffer.capacity(), model, reused, binary).ok()) {
      check_request(model, reused);
      for (std::size_t m = 0; m < model.inputs.size(); ++m) {
        const Tensor& t = reused.inputs[m];
        const TensorSpec& spec = model.inputs[m];
        check(t.dtype() == spec.dtype, "input tensor of the model's type");
        check(shape_matches(spec.shape, t.shape()), "input tensor shape fits the model");
        const auto count = static_cast<std::size_t>(element_count(t.shape()));
        if (spec.dtype == DType::Bytes) {
          check(t.strings().size() == count, "BYTES: one string per element");
        } else {
          check(t.bytes().size() == count * element_size(spec.dtype), "bytes per element");
          if (spec.dtype == DType::Bool) check(all_bool(t.bytes()), "BOOL elements are 0 or 1");
        }
      }
    }

    // Into a sink's destinations, as the batcher's.
    InferRequest request;
    ExactSink sink(model, {});
    const Status status =
        decoder.decode_infer(json, buffer.capacity(), model, request, sink, binary);
    check(sink.calls <= 1, "allocate is called at most once");
    if (status.ok()) {
      check(sink.calls == 1, "a decoded request allocated its destinations");
      check_request(model, request, /*sink=*/true);
      for (std::size_t m = 0; m < model.inputs.size(); ++m) {
        const TensorSpec& spec = model.inputs[m];
        const auto count = static_cast<std::size_t>(element_count(sink.shapes[m]));
        if (spec.dtype == DType::Bytes) {
          check(request.inputs[m].strings().size() == count, "BYTES: one string per element");
          check(request.inputs[m].shape() == sink.shapes[m], "BYTES tensor has the sink's shape");
        } else {
          check(request.inputs.empty() ||
                    (request.inputs[m].bytes().empty() && request.inputs[m].shape().empty()),
                "sink-written inputs leave the request's tensor empty");
          if (spec.dtype == DType::Bool) {
            check(all_bool({sink.blocks[m].get(), count}), "BOOL elements are 0 or 1");
          }
        }
      }
    }

    // A sink that refuses (a full queue): its status comes back unchanged.
    InferRequest refused;
    ExactSink full(model, Status(Errc::unavailable, "queue full"));
    const Status refusal =
        decoder.decode_infer(json, buffer.capacity(), model, refused, full, binary);
    check(!refusal.ok(), "a refused allocation fails the request");
    if (full.calls == 1) {
      check(refusal.code() == Errc::unavailable && refusal.message() == "queue full",
            "the sink's error is returned unchanged");
    }
  }
  return 0;
}
