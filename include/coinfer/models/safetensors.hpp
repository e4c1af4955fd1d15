#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/mapped_file.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer {

// Element types as safetensors spells them ("F32", "I64", ...). BF16 and the FP8 types have no
// coinfer DType: they load, and to_dtype() says so.
enum class SafetensorsDType : std::uint8_t {
  BOOL,
  U8,
  I8,
  U16,
  I16,
  F16,
  BF16,
  U32,
  I32,
  F32,
  U64,
  I64,
  F64,
  F8_E4M3,
  F8_E5M2,
};

std::string_view to_string(SafetensorsDType dtype) noexcept;
std::optional<SafetensorsDType> parse_safetensors_dtype(std::string_view name) noexcept;
std::size_t element_size(SafetensorsDType dtype) noexcept;
std::optional<DType> to_dtype(SafetensorsDType dtype) noexcept;

struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype;
  Shape shape;
  // Raw little-endian elements, row-major. The data section starts 16-byte aligned in memory,
  // so a tensor whose data_offsets begin is a multiple of its element size is aligned.
  std::span<const std::byte> data;
};

// A safetensors file, mapped into memory (open(); a data section not 16-byte aligned in the
// file is copied into an aligned buffer) or copied from bytes (parse()): 8-byte little-endian
// header length N, N bytes of
// JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__"?: {str: str}},
// then the data section that the offsets index. open() validates everything up front (sizes,
// bounds, overlaps, dtypes), so a file that opens can be read without further checks.
class SafetensorsFile {
 public:
  static constexpr std::uint64_t max_header_bytes = 100ull << 20;  // 100 MiB

  SafetensorsFile() = default;
  // Tensors point into the file's own buffer: movable, not copyable.
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  SafetensorsFile(SafetensorsFile&&) noexcept = default;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept = default;

  static Status open(const std::filesystem::path& path, SafetensorsFile& out);
  // The same, from bytes already in memory; `origin` names them in error messages.
  static Status parse(std::span<const std::byte> file, std::string_view origin,
                      SafetensorsFile& out);

  // nullptr when the file holds no tensor of that name.
  const SafetensorsTensor* tensor(std::string_view name) const noexcept;
  // Tensor names in the order of their data offsets.
  std::vector<std::string_view> names() const;
  const std::map<std::string, std::string, std::less<>>& metadata() const noexcept {
    return metadata_;
  }

 private:
  // `mapping`: the file `bytes` are, kept when its data section can be used in place.
  static Status load(std::span<const std::byte> bytes, std::string_view origin,
                     MappedFile* mapping, SafetensorsFile& out);
  Status index(std::string_view header_json, std::string_view origin);

  MappedFile mapping_;                  // open()'s file, when the tensors point into it
  std::vector<std::max_align_t> copy_;  // the data section, when copied (16-aligned)
  std::span<const std::byte> data_;     // the data section, mapped or copied
  std::vector<SafetensorsTensor> tensors_;                 // sorted by data offset
  std::map<std::string, std::size_t, std::less<>> index_;  // name -> position in tensors_
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace coinfer
