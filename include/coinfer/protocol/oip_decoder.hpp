#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/serving/infer_request.hpp"

namespace coinfer {

// Readable bytes the decoder needs past the end of a body (simdjson's SIMDJSON_PADDING). A
// body without them is copied into the decoder's own padded buffer first (slow path).
inline constexpr std::size_t kJsonPadding = 64;

// Decodes Open Inference Protocol v2 (KServe v2 REST) inference requests, validating them
// against the model's metadata and writing each element straight into the request's tensors.
// One per connection or thread, reused: the parser keeps its buffers between requests.
class OipDecoder {
 public:
  OipDecoder();
  ~OipDecoder();
  OipDecoder(OipDecoder&&) noexcept;
  OipDecoder& operator=(OipDecoder&&) noexcept;

  // `body` must be followed by readable memory up to `body_capacity` bytes from its start;
  // with body_capacity >= body.size() + kJsonPadding it is parsed in place. On success `out`
  // holds one tensor per model input in metadata order and the requested output indices; on
  // failure, an invalid_argument Status whose message names the field ("inputs[0].datatype:
  // expected FP32, got INT8") and `out` in an unspecified state.
  Status decode_infer(std::string_view body, std::size_t body_capacity, const ModelMetadata& model,
                      InferRequest& out);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace coinfer
