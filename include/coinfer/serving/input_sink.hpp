#pragma once

#include <cstddef>
#include <span>

#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/serving/infer_request.hpp"

namespace coinfer {

// Where a protocol decoder writes a request's input elements. The decoder validates every
// input's name, datatype and shape first, then asks the sink once for the destinations, then
// decodes the data straight into them. A batcher's sink hands out the request's rows of a
// staging buffer, so elements go from the JSON text to the batch without a copy.
class InputSink {
 public:
  virtual ~InputSink() = default;
  // `shapes`: one per model input, in metadata order. `parameters`: the request's.
  // Fills `destinations[i]` with element_count(shapes[i]) × element_size bytes for every input
  // whose dtype has a fixed size (Bytes inputs stay in the request's tensors). An error (for
  // example a full queue) ends decoding with that status.
  virtual Status allocate(std::span<const Shape> shapes, const Parameters& parameters,
                          std::span<std::span<std::byte>> destinations) = 0;
};

}  // namespace coinfer
