#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/serving/infer_request.hpp"
#include "coinfer/serving/input_sink.hpp"

namespace coinfer {

// Readable bytes the decoder needs past the end of a body (simdjson's SIMDJSON_PADDING). A
// body without them is copied into the decoder's own padded buffer first (slow path).
inline constexpr std::size_t kJsonPadding = 64;

// Decodes Open Inference Protocol v2 (KServe v2 REST) inference requests, validating them
// against the model's metadata and writing each element straight into its destination: the
// request's tensors, or an InputSink's buffers (a batch's staging rows).
//
// Two passes over one parsed document. Pass 1 reads everything but the inputs' "data" arrays
// (id, parameters, outputs; each input's name, datatype and shape, validated against the
// model), whatever the key order. The destinations are then allocated once, knowing every
// shape and the request's parameters. Pass 2 rewinds the document and decodes each "data"
// array straight into its destination, checking every element and the element count there.
// One per connection or thread, reused: the parser keeps its buffers between requests.
class OipDecoder {
 public:
  OipDecoder();
  ~OipDecoder();
  OipDecoder(OipDecoder&&) noexcept;
  OipDecoder& operator=(OipDecoder&&) noexcept;

  // `body` must be followed by readable memory up to `body_capacity` bytes from its start;
  // with body_capacity >= body.size() + kJsonPadding it is parsed in place.
  //
  // Binary tensor data extension: `binary` holds the bytes after the JSON (a request whose
  // Inference-Header-Content-Length header gave the JSON's length). An input whose
  // "parameters" carry "binary_data_size" has no "data"; its elements come from `binary`,
  // raw little-endian in row-major order (BOOL one byte each, FP16 binary16, BYTES a 4-byte
  // length before each element), inputs' blocks in the order the inputs are listed; the
  // sizes must add up to binary.size(). On success `out`
  // holds one tensor per model input in metadata order and the requested output indices; on
  // failure, an invalid_argument Status whose message names the field ("inputs[0].datatype:
  // expected FP32, got INT8") and `out` in an unspecified state.
  Status decode_infer(std::string_view body, std::size_t body_capacity, const ModelMetadata& model,
                      InferRequest& out, std::span<const std::byte> binary = {});

  // Same validation and errors as the overload above; then, once every input's name,
  // datatype and shape are validated and the request's "parameters" decoded (wherever they
  // come in the body), calls sink.allocate(shapes: one per model input in metadata order,
  // out.parameters, destinations) exactly once, and decodes each fixed-size input's data
  // straight into its destination; BYTES inputs still go to out.inputs. An allocate error is
  // returned unchanged. Element errors (a wrong type, out of range, a count that does not match
  // the shape) can only be found while decoding, so they come after a successful allocate;
  // nothing is ever written past a destination. On success out.inputs has one tensor per model
  // input when the model has a BYTES input (empty, default Tensors for the sink-written
  // ones), and none at all otherwise: a sink-written input's shape is the one given to the sink.
  Status decode_infer(std::string_view body, std::size_t body_capacity, const ModelMetadata& model,
                      InferRequest& out, InputSink& sink, std::span<const std::byte> binary = {});

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace coinfer
