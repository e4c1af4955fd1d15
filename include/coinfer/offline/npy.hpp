#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "coinfer/core/dtype.hpp"
#include "coinfer/core/shape.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer::offline {

// NumPy's .npy format (numpy.lib.format, versions 1.0 to 3.0): the magic "\x93NUMPY", a
// version, a little-endian header length, then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 64), }
// padded with spaces to a multiple of 64 bytes and ended by '\n', then the array's bytes in C
// order. coinfer reads and writes little-endian float32, float64, int32 and int64 ('<f4',
// '<f8', '<i4', '<i8'), C order only.
struct NpyHeader {
  DType dtype = DType::FP32;
  Shape shape;                  // the array's; rows are shape[0]
  std::uint64_t data_offset = 0;  // where the array's bytes start in the file

  // Bytes of one row (the product of the dimensions past the first, times the element size).
  std::uint64_t row_bytes() const noexcept;
};

// Parses the header at the start of `file_start` (at least the whole header; 10 bytes are
// enough to learn its length). Errors name what is wrong and its byte offset ("npy: offset 8:
// header length 70000 exceeds ...", "npy: offset 10: 'descr' '>f4' is not supported ...").
// `file_size` checks that the array's bytes are all there.
Status parse_npy_header(std::string_view file_start, std::uint64_t file_size, NpyHeader& out);

// The header bytes (magic to '\n', padded to 64) for an array of `dtype` and `shape`.
std::string npy_header(DType dtype, const Shape& shape);

// Writes an .npy file row block by row block: the row count is not known until the end, so
// the header is written with room for any count and rewritten by finish(). Not thread-safe.
class NpyWriter {
 public:
  NpyWriter() = default;
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  // `row_shape`: the dimensions past the first ([] for a vector of scalars).
  Status open(const std::filesystem::path& path, DType dtype, Shape row_shape);
  // `bytes`: whole rows, row_bytes() each, in the writer's dtype (little-endian).
  Status append(std::span<const std::byte> bytes);
  // Rewrites the header with the row count, flushes and, with `sync`, fsyncs the file.
  Status finish(bool sync);
  std::int64_t rows() const noexcept { return rows_; }

 private:
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
  DType dtype_ = DType::FP32;
  Shape row_shape_;
  std::uint64_t row_bytes_ = 0;
  std::int64_t rows_ = 0;
};

// Whole small arrays, for tests and tools: writes `bytes` (C order) as an .npy file.
Status write_npy(const std::filesystem::path& path, DType dtype, const Shape& shape,
                 std::span<const std::byte> bytes);

}  // namespace coinfer::offline
