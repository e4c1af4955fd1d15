// The safetensors reader (SafetensorsFile::parse, what open() does after reading the file).
//
// Input: a whole file: 8-byte little-endian header length, the JSON header, the data section.
// A file that parses keeps its promise: every tensor it names is found by name, holds exactly
// its elements' bytes inside the data section, and no two tensors overlap.
#include <vector>

#include "coinfer/models/safetensors.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SafetensorsFile file;
  if (!SafetensorsFile::parse(std::as_bytes(std::span(data, size)), "fuzz", file)) return 0;

  const std::byte* previous_end = nullptr;
  unsigned checksum = 0;  // every byte of every tensor is read: ASan checks the bounds
  for (std::string_view name : file.names()) {
    const SafetensorsTensor* tensor = file.tensor(name);
    check(tensor != nullptr && tensor->name == name, "every listed tensor is found by name");
    const std::int64_t count = element_count(tensor->shape);
    check(count >= 0, "shape has no negative dimension");
    check(tensor->data.size() == static_cast<std::size_t>(count) * element_size(tensor->dtype),
          "data holds exactly the elements' bytes");
    check(!previous_end || tensor->data.empty() || tensor->data.data() >= previous_end,
          "tensors are in data order and do not overlap");
    if (!tensor->data.empty()) previous_end = tensor->data.data() + tensor->data.size();
    for (std::byte b : tensor->data) checksum += std::to_integer<unsigned>(b);
    (void)to_dtype(tensor->dtype);
    (void)to_string(tensor->dtype);
  }
  for (const auto& [key, value] : file.metadata()) checksum += key.size() + value.size();
  static volatile unsigned sink;
  sink = checksum;
  (void)sink;
  return 0;
}
