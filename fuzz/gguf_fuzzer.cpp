// The GGUF reader (GgufFile::parse, what open() does with a mapped file): the language model's
// weights, tokenizer and settings come from it.
//
// Input: a GGUF file's bytes. A file that parses keeps open()'s promise: every listed tensor's
// bytes lie inside the input and hold its elements, so its first and last rows dequantize; a
// refused file says why.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "coinfer/models/gguf.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy the parser may point into for as long as the file object lives.
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                                     reinterpret_cast<const std::byte*>(data) + size);
  GgufFile file;
  const Status status = GgufFile::parse(bytes, "fuzz.gguf", file);
  if (!status.ok()) {
    check(!status.message().empty(), "a refused GGUF says why");
    return 0;
  }
  const std::byte* begin = bytes.data();
  const std::byte* end = bytes.data() + bytes.size();
  std::vector<float> row;
  for (const GgufTensor& tensor : file.tensors()) {
    check(tensor.data.empty() ||
              (tensor.data.data() >= begin && tensor.data.data() + tensor.data.size() <= end),
          "a tensor's bytes lie inside the file");
    check(file.tensor(tensor.name) == &tensor, "a tensor is found by its name");
    const std::int64_t rows = tensor.rows(), width = tensor.row_size();
    if (rows <= 0 || width <= 0 || width > (1 << 16)) continue;
    row.resize(static_cast<std::size_t>(width));
    check(file.dequantize_rows(tensor, 0, 1, row).ok(), "a listed tensor's first row reads");
    check(file.dequantize_rows(tensor, rows - 1, 1, row).ok(), "a listed tensor's last row reads");
  }
  for (const auto& [key, value] : file.metadata()) {
    check(file.find(key) == &value, "a metadata key is found");
  }
  return 0;
}
