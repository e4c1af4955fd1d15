#pragma once
// The Open Inference Protocol's gRPC messages <-> coinfer's requests and responses: no I/O, no
// threads (grpc_service.cpp runs them), so that fuzz/grpc_infer_fuzzer.cpp can feed it bytes.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/serving/endpoint.hpp"
#include "grpc_service.pb.h"

namespace coinfer::grpc_codec {

using ParameterMap = google::protobuf::Map<std::string, inference::InferParameter>;

// A request's parameters as coinfer's (`where`: "parameters", for errors). Keys that begin with
// "triton_" are Triton's own settings for its server (tritonclient sends
// "triton_enable_empty_final_response"), skipped; an empty InferParameter is an error naming it.
Status read_parameters(const ParameterMap& in, std::string_view where, Parameters& out);

// Decodes a ModelInferRequest against the model's metadata, as OipDecoder does a JSON body:
// every input's name, datatype and shape checked (errors name the field: "inputs[0].datatype:
// expected FP32, got INT8"), the sink asked once for the destinations, then the elements
// copied from raw_input_contents (little-endian, BYTES each after a 4-byte length) or from the
// typed `contents` field of the input's datatype, their count checked against the shape.
// `deadline`: what is left of the call's gRPC deadline (0: none); a shorter or missing
// "timeout" parameter becomes it, so that a request whose deadline passes in the queue is
// dropped before compute.
class InferDecoder final : public RequestDecoder {
 public:
  InferDecoder(const inference::ModelInferRequest& request, std::chrono::microseconds deadline)
      : request_(request), deadline_(deadline) {}
  Status decode(const ModelMetadata& model, InferRequest& out, InputSink* sink) override;

 private:
  const inference::ModelInferRequest& request_;
  std::chrono::microseconds deadline_;
};

// A finished request's outputs (the requested ones, else all, in metadata order) into `out`,
// as raw_output_contents (Triton's gRPC server answers so; tritonclient reads either).
void encode_infer(const ModelMetadata& model, const InferRequest& request,
                  const std::vector<Tensor>& outputs, inference::ModelInferResponse& out);

void encode_metadata(const ModelMetadata& model, inference::ModelMetadataResponse& out);
// The model's configuration as Triton reports it: inputs and outputs (dims without the batch
// dimension when it batches), max_batch_size, dynamic batching.
void encode_config(const ModelMetadata& model, const BatchPolicy& policy,
                   inference::ModelConfig& out);

// Language models (Triton's generate models, decoupled): a ModelInferRequest with a BYTES
// input "text_input" ([1]), optionally a BOOL input "stream" and a BYTES input
// "sampling_parameters" (a JSON object, as Triton's vLLM backend takes), and the generate
// fields as request parameters, turned into the JSON generate message
// (triton_generate.hpp's run_generate_message). A string parameter holding a JSON array or
// object is passed as that value (stop, logit_bias, response_format, ...); "timeout" is in
// microseconds, as every OIP request's.
Status generate_message(const inference::ModelInferRequest& request, std::string& json);

// One response of a generation: the text as a BYTES output "text_output" [1], and the
// parameter "triton_final_response" (false on each step's piece, true on the last); the last
// also carries "finish_reason", "prompt_tokens" and "completion_tokens".
void encode_generate(const inference::ModelInferRequest& request, std::string_view model_version,
                     std::string_view text, const generation::GenerationUpdate* last,
                     inference::ModelInferResponse& out);

}  // namespace coinfer::grpc_codec
