#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/mapped_file.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer {

// Metadata value types as GGUF numbers them.
enum class GgufType : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

// Tensor element types (ggml's numbering). Only these load; others are named in the error.
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q8_0 = 8,
};

std::string_view to_string(GgufType type) noexcept;
// "Q4_1", or "type 12" for one coinfer does not read.
std::string ggml_type_name(std::uint32_t type);

// One metadata value. Scalars of every integer type read as `integer` (a uint64 above
// INT64_MAX is refused at open), floats as `number`, arrays as `strings`, `integers` or
// `numbers` by their element type (`element`). Arrays of arrays are refused.
struct GgufValue {
  GgufType type = GgufType::uint8;
  GgufType element = GgufType::uint8;  // arrays only
  std::int64_t integer = 0;            // integer types and bool
  double number = 0;                   // float32, float64
  std::string string;
  std::vector<std::string> strings;
  std::vector<std::int64_t> integers;  // integer and bool arrays
  std::vector<double> numbers;         // float arrays

  bool is_integer() const noexcept;
  bool is_float() const noexcept { return type == GgufType::float32 || type == GgufType::float64; }
};

struct GgufTensor {
  std::string name;
  // ggml order: dims[0] is the innermost (contiguous) dimension. A weight [out, in] of a
  // linear layer is dims {in, out}: `rows()` = out, `row_size()` = in.
  std::vector<std::int64_t> dims;
  std::uint32_t type = 0;          // GgmlType value
  std::uint64_t offset = 0;        // from the start of the data section
  std::span<const std::byte> data;  // the tensor's bytes in the mapped file

  std::int64_t elements() const noexcept;
  std::int64_t row_size() const noexcept { return dims.empty() ? 1 : dims[0]; }
  std::int64_t rows() const noexcept { return row_size() == 0 ? 0 : elements() / row_size(); }
};

// A GGUF v2/v3 file (llama.cpp's format), memory-mapped: header, metadata, tensor infos, and
// the data section at the file's `general.alignment` (default 32). open() checks every size,
// offset and block shape up front, so a tensor that is listed can be read; errors name the
// key or tensor and the file offset.
class GgufFile {
 public:
  GgufFile();
  ~GgufFile();
  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;

  static Status open(const std::filesystem::path& path, GgufFile& out);
  // From bytes already in memory (kept by reference: they must outlive the file object).
  static Status parse(std::span<const std::byte> bytes, std::string_view origin, GgufFile& out);

  std::uint32_t version() const noexcept { return version_; }
  std::uint64_t alignment() const noexcept { return alignment_; }
  const std::map<std::string, GgufValue, std::less<>>& metadata() const noexcept {
    return metadata_;
  }
  const std::vector<GgufTensor>& tensors() const noexcept { return tensors_; }

  const GgufValue* find(std::string_view key) const noexcept;
  const GgufTensor* tensor(std::string_view name) const noexcept;

  // Typed lookups: not_found naming the key when absent, invalid_argument naming it and its
  // type when it holds something else.
  Status get(std::string_view key, std::int64_t& out) const;
  Status get(std::string_view key, double& out) const;  // float or integer
  Status get(std::string_view key, std::string& out) const;
  Status get_strings(std::string_view key, const std::vector<std::string>*& out) const;
  Status get_integers(std::string_view key, const std::vector<std::int64_t>*& out) const;

  // The tensor as FP32, row-major [rows, row_size] (ggml order flattened). `out` must hold
  // elements() values.
  Status dequantize(const GgufTensor& tensor, std::span<float> out) const;
  // Rows [first, first + count) only (e.g. one token's embedding).
  Status dequantize_rows(const GgufTensor& tensor, std::int64_t first, std::int64_t count,
                         std::span<float> out) const;

  // The file's pages leave this process's resident memory; tensors read later page back in
  // (see MappedFile::release_resident_pages).
  void release_resident_pages() const noexcept { mapping_.release_resident_pages(); }

 private:
  MappedFile mapping_;  // open()'s file; empty for a file parse() made from bytes
  std::string origin_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// Block layouts: bytes per block of `block_elements(type)` values.
std::size_t ggml_block_elements(std::uint32_t type) noexcept;  // 0 when unknown
std::size_t ggml_block_bytes(std::uint32_t type) noexcept;

// Dequantizes `count` values (a multiple of the block size) of `type` from `blocks`.
void ggml_dequantize(std::uint32_t type, const std::byte* blocks, std::size_t count, float* out);
// Quantizes as ggml does (Q8_0: scale max|x|/127; Q4_1: min and (max-min)/15 per 32 values;
// F16: round to nearest). For writing test files.
void ggml_quantize(std::uint32_t type, const float* values, std::size_t count,
                   std::vector<std::byte>& out);

// Writes GGUF v3 files (tests and fixtures: small models written by the test itself).
class GgufWriter {
 public:
  void set(std::string key, std::string value);
  void set(std::string key, const char* value) { set(std::move(key), std::string(value)); }
  void set_uint32(std::string key, std::uint32_t value);
  void set_int32(std::string key, std::int32_t value);
  void set_uint64(std::string key, std::uint64_t value);
  void set_float32(std::string key, float value);
  void set_float64(std::string key, double value);
  void set_bool(std::string key, bool value);
  void set_strings(std::string key, std::vector<std::string> values);
  void set_int32s(std::string key, std::vector<std::int32_t> values);
  void set_float32s(std::string key, std::vector<float> values);
  // `dims` in ggml order (innermost first); `values` row-major, quantized to `type`.
  void add_tensor(std::string name, std::vector<std::int64_t> dims, GgmlType type,
                  std::span<const float> values);
  // Raw bytes as given (for malformed-file tests).
  void add_raw_tensor(std::string name, std::vector<std::int64_t> dims, std::uint32_t type,
                      std::vector<std::byte> bytes);
  void set_alignment(std::uint32_t alignment) { alignment_ = alignment; }

  std::vector<std::byte> bytes() const;
  Status write(const std::filesystem::path& path) const;

 private:
  struct Entry {
    std::string key;
    std::vector<std::byte> encoded;  // type tag + value
  };
  struct Tensor {
    std::string name;
    std::vector<std::int64_t> dims;
    std::uint32_t type;
    std::vector<std::byte> bytes;
  };
  std::vector<Entry> metadata_;
  std::vector<Tensor> tensors_;
  std::uint32_t alignment_ = 32;
};

}  // namespace coinfer
