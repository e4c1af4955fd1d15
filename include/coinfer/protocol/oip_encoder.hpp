#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "coinfer/models/model.hpp"
#include "coinfer/serving/infer_request.hpp"

namespace coinfer {

// Open Inference Protocol v2 (KServe v2 REST) response bodies. Each function appends to
// `out`, a buffer the caller reuses across responses (and clears when it wants a fresh one).

// {"model_name":"m","model_version":"1","id":"x","parameters":{...},"outputs":[{"name":
// "OUTPUT0","datatype":"FP32","shape":[1,64],"data":[...]}]}; "id" and "parameters" only when
// non-empty. `output_specs` are the model's outputs (their names label r.outputs, which are in
// the same order); `selected` lists the indices to send, in that order (empty: all). Data is
// flat, row-major; NaN and infinities are written as null.
//
// Binary tensor data extension: outputs whose entry in `binary_outputs` (by model output) is
// nonzero carry "parameters":{"binary_data_size":N} instead of "data", and their bytes
// follow the JSON in output order (raw little-endian elements; BYTES with a 4-byte length
// before each). Returns the JSON's length: the Inference-Header-Content-Length when anything
// follows it.
std::size_t encode_infer_response(const InferResponse& r, std::span<const TensorSpec> output_specs,
                                  std::span<const std::size_t> selected, std::string& out,
                                  std::span<const std::uint8_t> binary_outputs = {});

// {"name":"m","versions":["1"],"platform":"coinfer","inputs":[{"name":..,"datatype":..,
// "shape":[-1,64]}],"outputs":[...]}
void encode_model_metadata(const ModelMetadata& m, std::string& out);

// {"error":"<message>"}
void encode_error(std::string_view message, std::string& out);

// {"name":"coinfer","version":"0.1.0","extensions":[...]}
void encode_server_metadata(std::string_view name, std::string_view version,
                            std::span<const std::string_view> extensions, std::string& out);

}  // namespace coinfer
