#include "coinfer/offline/npy.hpp"

#include <cerrno>
#include <cstring>
#include <limits>
#include <unistd.h>

namespace coinfer::offline {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;

Status fail_at(std::uint64_t offset, const std::string& what) {
  return Status::invalid("npy: offset " + std::to_string(offset) + ": " + what);
}

std::string_view descr_of(DType dtype) {
  switch (dtype) {
    case DType::FP32: return "<f4";
    case DType::FP64: return "<f8";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    default: return {};
  }
}

// The header dict, a Python literal: {'key': value, ...} with string, bool and tuple values.
class DictParser {
 public:
  DictParser(std::string_view text, std::uint64_t base) : text_(text), base_(base) {}

  Status parse(NpyHeader& out) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    if (!take('{')) return error("expected '{' to open the header dict");
    while (true) {
      skip_space();
      if (take('}')) break;
      std::string key;
      if (auto status = string_literal(key); !status.ok()) return status;
      skip_space();
      if (!take(':')) return error("expected ':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        std::string descr;
        const std::uint64_t at = offset();
        if (auto status = string_literal(descr); !status.ok()) return status;
        if (descr == "<f4" || descr == "|f4") out.dtype = DType::FP32;
        else if (descr == "<f8") out.dtype = DType::FP64;
        else if (descr == "<i4") out.dtype = DType::Int32;
        else if (descr == "<i8") out.dtype = DType::Int64;
        else {
          return fail_at(at, "'descr' '" + descr +
                                 "' is not supported (little-endian '<f4', '<f8', '<i4', '<i8')");
        }
        have_descr = true;
      } else if (key == "fortran_order") {
        const std::uint64_t at = offset();
        if (text_.substr(pos_).starts_with("False")) {
          pos_ += 5;
        } else if (text_.substr(pos_).starts_with("True")) {
          return fail_at(at, "'fortran_order' True is not supported (C order only)");
        } else {
          return error("expected True or False for 'fortran_order'");
        }
        have_order = true;
      } else if (key == "shape") {
        if (auto status = tuple(out.shape); !status.ok()) return status;
        have_shape = true;
      } else {
        return fail_at(offset(), "unknown header key '" + key + "'");
      }
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take('}')) break;
      return error("expected ',' or '}' in the header dict");
    }
    if (!have_descr) return fail_at(base_, "the header has no 'descr'");
    if (!have_order) return fail_at(base_, "the header has no 'fortran_order'");
    if (!have_shape) return fail_at(base_, "the header has no 'shape'");
    return {};
  }

 private:
  std::uint64_t offset() const noexcept { return base_ + pos_; }
  Status error(const std::string& what) const { return fail_at(offset(), what); }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool take(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status string_literal(std::string& out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return error("expected a quoted string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return error("unterminated string");
    out.assign(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return {};
  }
  Status tuple(Shape& out) {
    out.clear();
    if (!take('(')) return error("expected '(' for 'shape'");
    while (true) {
      skip_space();
      if (take(')')) return {};
      const std::uint64_t at = offset();
      std::int64_t value = 0;
      std::size_t digits = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
          return fail_at(at, "a dimension of 'shape' is too large");
        value = value * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) return error("expected a non-negative integer in 'shape'");
      out.push_back(value);
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take(')')) return {};
      return error("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view text_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::string_view bytes, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return v;
}

// The header with its dict padded by spaces so that magic + version + length + dict is
// `total` bytes (a multiple of 64).
std::string header_of_size(DType dtype, const Shape& shape, std::size_t min_total) {
  std::string dict = "{'descr': '";
  dict += descr_of(dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    dict += shape.size() == 1 || i + 1 < shape.size() ? "," : "";
    if (i + 1 < shape.size()) dict += ' ';
  }
  dict += "), }";
  const std::size_t prefix = kMagic.size() + 2 + 2;  // version 1.0: a 2-byte length
  std::size_t total = prefix + dict.size() + 1;
  total = std::max(total, min_total);
  total = (total + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  const auto length = static_cast<std::uint16_t>(dict.size());
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>(length >> 8);
  out += dict;
  return out;
}

}  // namespace

std::uint64_t NpyHeader::row_bytes() const noexcept {
  std::uint64_t n = element_size(dtype);
  for (std::size_t i = 1; i < shape.size(); ++i) n *= static_cast<std::uint64_t>(shape[i]);
  return n;
}

Status parse_npy_header(std::string_view file_start, std::uint64_t file_size, NpyHeader& out) {
  if (file_start.size() < 10 || !file_start.starts_with(kMagic))
    return fail_at(0, "not an .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(file_start[6]);
  if (major < 1 || major > 3)
    return fail_at(6, "format version " + std::to_string(major) + " is not supported (1 to 3)");
  std::uint64_t length_bytes = major == 1 ? 2 : 4;
  if (file_start.size() < 8 + length_bytes) return fail_at(8, "truncated header length");
  const std::uint64_t header_length = read_le(file_start.substr(8), length_bytes);
  const std::uint64_t dict_offset = 8 + length_bytes;
  if (header_length > kMaxHeaderBytes)
    return fail_at(8, "header length " + std::to_string(header_length) + " exceeds " +
                          std::to_string(kMaxHeaderBytes));
  if (file_start.size() < dict_offset + header_length)
    return fail_at(dict_offset, "truncated header (" + std::to_string(header_length) +
                                    " bytes declared)");
  std::string_view dict = file_start.substr(dict_offset, header_length);
  out = {};
  if (auto status = DictParser(dict, dict_offset).parse(out); !status.ok()) return status;
  out.data_offset = dict_offset + header_length;
  if (out.shape.empty()) return fail_at(dict_offset, "a 0-d array has no rows");
  // The array's bytes, checked without overflow: a row's bytes and the rows each bounded
  // (a 0 dimension must not hide a huge one after it).
  constexpr std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() >> 2;
  unsigned __int128 row = element_size(out.dtype);
  for (std::size_t i = 1; i < out.shape.size(); ++i) {
    row *= static_cast<std::uint64_t>(out.shape[i]);
    if (row > limit) return fail_at(dict_offset, "'shape' " + to_string(out.shape) + " is too large");
  }
  const unsigned __int128 total = row * static_cast<std::uint64_t>(out.shape[0]);
  if (static_cast<std::uint64_t>(out.shape[0]) > limit || total > limit)
    return fail_at(dict_offset, "'shape' " + to_string(out.shape) + " is too large");
  const auto bytes = static_cast<std::uint64_t>(total);
  if (file_size < out.data_offset || file_size - out.data_offset < bytes)
    return fail_at(out.data_offset, "the file ends before the array's " + std::to_string(bytes) +
                                        " bytes (" + to_string(out.shape) + ")");
  return {};
}

std::string npy_header(DType dtype, const Shape& shape) { return header_of_size(dtype, shape, 0); }

NpyWriter::~NpyWriter() {
  if (file_) std::fclose(file_);
}

Status NpyWriter::open(const std::filesystem::path& path, DType dtype, Shape row_shape) {
  if (descr_of(dtype).empty())
    return Status::invalid("npy: cannot write " + std::string(to_string(dtype)));
  if (file_) std::fclose(file_);
  path_ = path;
  dtype_ = dtype;
  row_shape_ = std::move(row_shape);
  row_bytes_ = element_size(dtype);
  for (auto d : row_shape_) row_bytes_ *= static_cast<std::uint64_t>(d);
  rows_ = 0;
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return Status::invalid("npy: cannot create " + path.string() + ": " + std::strerror(errno));
  Shape shape{std::numeric_limits<std::int64_t>::max()};
  shape.insert(shape.end(), row_shape_.begin(), row_shape_.end());
  const std::string header = header_of_size(dtype, shape, 0);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size())
    return Status::invalid("npy: cannot write " + path.string() + ": " + std::strerror(errno));
  return {};
}

Status NpyWriter::append(std::span<const std::byte> bytes) {
  if (!file_) return Status::invalid("npy: append before open");
  if (row_bytes_ == 0 || bytes.size() % row_bytes_ != 0)
    return Status::invalid("npy: " + std::to_string(bytes.size()) + " bytes are not whole rows of " +
                           std::to_string(row_bytes_));
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    return Status::invalid("npy: cannot write " + path_.string() + ": " + std::strerror(errno));
  rows_ += static_cast<std::int64_t>(bytes.size() / row_bytes_);
  return {};
}

Status NpyWriter::finish(bool sync) {
  if (!file_) return Status::invalid("npy: finish before open");
  Shape longest{std::numeric_limits<std::int64_t>::max()};
  longest.insert(longest.end(), row_shape_.begin(), row_shape_.end());
  const std::size_t size = header_of_size(dtype_, longest, 0).size();
  Shape shape{rows_};
  shape.insert(shape.end(), row_shape_.begin(), row_shape_.end());
  const std::string header = header_of_size(dtype_, shape, size);
  bool ok = std::fseek(file_, 0, SEEK_SET) == 0 &&
            std::fwrite(header.data(), 1, header.size(), file_) == header.size() &&
            std::fflush(file_) == 0 && (!sync || ::fsync(fileno(file_)) == 0);
  const int error = errno;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  if (!ok) return Status::invalid("npy: cannot write " + path_.string() + ": " + std::strerror(error));
  return {};
}

Status write_npy(const std::filesystem::path& path, DType dtype, const Shape& shape,
                 std::span<const std::byte> bytes) {
  if (shape.empty()) return Status::invalid("npy: a 0-d array has no rows");
  NpyWriter writer;
  if (auto status = writer.open(path, dtype, Shape(shape.begin() + 1, shape.end())); !status.ok())
    return status;
  if (auto status = writer.append(bytes); !status.ok()) return status;
  return writer.finish(false);
}

}  // namespace coinfer::offline
