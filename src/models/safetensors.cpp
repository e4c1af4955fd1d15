#include "coinfer/models/safetensors.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace coinfer {
namespace {

struct DTypeInfo {
  SafetensorsDType dtype;
  std::string_view name;
  std::size_t size;
  std::optional<DType> coinfer;
};

constexpr std::array<DTypeInfo, 15> kDTypes{{
    {SafetensorsDType::BOOL, "BOOL", 1, DType::Bool},
    {SafetensorsDType::U8, "U8", 1, DType::UInt8},
    {SafetensorsDType::I8, "I8", 1, DType::Int8},
    {SafetensorsDType::U16, "U16", 2, DType::UInt16},
    {SafetensorsDType::I16, "I16", 2, DType::Int16},
    {SafetensorsDType::F16, "F16", 2, DType::FP16},
    {SafetensorsDType::BF16, "BF16", 2, std::nullopt},
    {SafetensorsDType::U32, "U32", 4, DType::UInt32},
    {SafetensorsDType::I32, "I32", 4, DType::Int32},
    {SafetensorsDType::F32, "F32", 4, DType::FP32},
    {SafetensorsDType::U64, "U64", 8, DType::UInt64},
    {SafetensorsDType::I64, "I64", 8, DType::Int64},
    {SafetensorsDType::F64, "F64", 8, DType::FP64},
    {SafetensorsDType::F8_E4M3, "F8_E4M3", 1, std::nullopt},
    {SafetensorsDType::F8_E5M2, "F8_E5M2", 1, std::nullopt},
}};

const DTypeInfo& info(SafetensorsDType dtype) noexcept {
  return kDTypes[static_cast<std::size_t>(dtype)];
}

std::uint64_t read_le64(const std::byte* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

Status bad(std::string_view origin, const std::string& what) {
  return Status::invalid(std::string(origin) + ": " + what);
}

std::string in_quotes(std::string_view s) {
  std::string out(1, '\'');
  out.append(s.data(), s.size());
  out.push_back('\'');
  return out;
}

// Reads one tensor entry {"dtype", "shape", "data_offsets"}; unknown fields are ignored.
Status read_entry(std::string_view origin, std::string_view name, simdjson::dom::element value,
                  SafetensorsTensor& tensor, std::uint64_t& begin, std::uint64_t& end) {
  const std::string where = "tensor " + in_quotes(name);
  simdjson::dom::object entry;
  if (value.get_object().get(entry)) return bad(origin, where + ": entry is not a JSON object");

  std::string_view dtype_name;
  if (entry["dtype"].get_string().get(dtype_name)) {
    return bad(origin, where + ": missing or non-string \"dtype\"");
  }
  const auto dtype = parse_safetensors_dtype(dtype_name);
  if (!dtype) return bad(origin, where + ": unknown dtype " + in_quotes(dtype_name));

  simdjson::dom::array shape;
  if (entry["shape"].get_array().get(shape)) {
    return bad(origin, where + ": missing or non-array \"shape\"");
  }
  std::uint64_t count = 1;
  Shape dims;
  for (simdjson::dom::element dim : shape) {
    std::int64_t d = 0;
    if (dim.get_int64().get(d) || d < 0) {
      return bad(origin, where + ": \"shape\" holds something other than a non-negative integer");
    }
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count)) {
      return bad(origin, where + ": element count overflows");
    }
    dims.push_back(d);
  }
  if (count > static_cast<std::uint64_t>(INT64_MAX)) {  // shapes count elements in int64
    return bad(origin, where + ": element count overflows");
  }

  simdjson::dom::array offsets;
  if (entry["data_offsets"].get_array().get(offsets) || offsets.size() != 2 ||
      offsets.at(0).get_uint64().get(begin) || offsets.at(1).get_uint64().get(end)) {
    return bad(origin, where + ": \"data_offsets\" must be [begin, end], non-negative integers");
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, info(*dtype).size, &bytes)) {
    return bad(origin, where + ": byte size overflows");
  }
  if (end < begin || end - begin != bytes) {
    return bad(origin, where + ": data_offsets [" + std::to_string(begin) + ", " +
                           std::to_string(end) + "] hold " +
                           std::to_string(end < begin ? 0 : end - begin) + " bytes, but " +
                           std::string(dtype_name) + " " + to_string(dims) + " needs " +
                           std::to_string(bytes));
  }
  tensor.name = std::string(name);
  tensor.dtype = *dtype;
  tensor.shape = std::move(dims);
  return {};
}

}  // namespace

std::string_view to_string(SafetensorsDType dtype) noexcept {
  return info(dtype).name;
}

std::optional<SafetensorsDType> parse_safetensors_dtype(std::string_view name) noexcept {
  for (const auto& d : kDTypes) {
    if (d.name == name) return d.dtype;
  }
  return std::nullopt;
}

std::size_t element_size(SafetensorsDType dtype) noexcept {
  return info(dtype).size;
}

std::optional<DType> to_dtype(SafetensorsDType dtype) noexcept {
  return info(dtype).coinfer;
}

Status SafetensorsFile::open(const std::filesystem::path& path, SafetensorsFile& out) {
  const std::string origin = path.string();
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return Status::not_found(origin + ": cannot open: " + ec.message());
  if (file_size < 8) {
    return bad(origin, "file is " + std::to_string(file_size) +
                           " bytes, shorter than the 8-byte header length");
  }
  MappedFile mapping;
  if (auto status = MappedFile::open(path, mapping); !status) return status;
  const auto bytes = mapping.bytes();
  return load(bytes, origin, &mapping, out);
}

Status SafetensorsFile::parse(std::span<const std::byte> bytes, std::string_view origin,
                              SafetensorsFile& out) {
  return load(bytes, origin, nullptr, out);
}

Status SafetensorsFile::load(std::span<const std::byte> bytes, std::string_view origin,
                             MappedFile* mapping, SafetensorsFile& out) {
  if (bytes.size() < 8) {
    return bad(origin, "file is " + std::to_string(bytes.size()) +
                           " bytes, shorter than the 8-byte header length");
  }
  const std::uint64_t header_size = read_le64(bytes.data());
  if (header_size > max_header_bytes || header_size > bytes.size() - 8) {
    return bad(origin, "header length " + std::to_string(header_size) + " at offset 0 exceeds " +
                           (header_size > max_header_bytes
                                ? "the " + std::to_string(max_header_bytes) + "-byte cap"
                                : "the file (" + std::to_string(bytes.size()) + " bytes)"));
  }
  SafetensorsFile file;
  const auto data = bytes.subspan(8 + header_size);
  const bool aligned =
      reinterpret_cast<std::uintptr_t>(data.data()) % alignof(std::max_align_t) == 0;
  if (mapping != nullptr && aligned) {
    file.data_ = data;  // in place: the mapping moves into the file below
  } else {
    file.copy_.resize((data.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    if (!data.empty()) std::memcpy(file.copy_.data(), data.data(), data.size());
    file.data_ = {reinterpret_cast<const std::byte*>(file.copy_.data()), data.size()};
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  if (auto status = file.index(header, origin); !status) return status;
  if (mapping != nullptr && aligned) file.mapping_ = std::move(*mapping);
  out = std::move(file);
  return {};
}

Status SafetensorsFile::index(std::string_view header_json, std::string_view origin) {
  const simdjson::padded_string padded(header_json);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(padded).get(root)) {
    return bad(origin,
               std::string("header (offset 8) is not JSON: ") + simdjson::error_message(err));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object)) return bad(origin, "header (offset 8) is not a JSON object");

  struct Placed {
    SafetensorsTensor tensor;
    std::uint64_t begin, end;
  };
  std::vector<Placed> placed;
  for (auto field : object) {
    if (field.key == "__metadata__") {
      simdjson::dom::object meta;
      if (field.value.get_object().get(meta)) return bad(origin, "__metadata__ is not an object");
      for (auto m : meta) {
        std::string_view value;
        if (m.value.get_string().get(value)) {
          return bad(origin, "__metadata__." + std::string(m.key) + " is not a string");
        }
        metadata_.insert_or_assign(std::string(m.key), std::string(value));
      }
      continue;
    }
    Placed p;
    if (auto status = read_entry(origin, field.key, field.value, p.tensor, p.begin, p.end);
        !status) {
      return status;
    }
    placed.push_back(std::move(p));
  }

  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  const std::uint64_t data_start = 8 + header_json.size();  // file offset of the data section
  std::uint64_t previous_end = 0;
  std::string_view previous_name;
  const std::byte* base = data_.data();
  for (auto& p : placed) {
    const std::string range = "data_offsets [" + std::to_string(p.begin) + ", " +
                              std::to_string(p.end) + "] (file offset " +
                              std::to_string(data_start + p.begin) + ")";
    if (p.end > data_.size()) {
      return bad(origin, "tensor " + in_quotes(p.tensor.name) + ": " + range +
                             " ends beyond the data section of " + std::to_string(data_.size()) +
                             " bytes");
    }
    if (p.begin < previous_end) {
      return bad(origin, "tensor " + in_quotes(p.tensor.name) + ": " + range + " overlaps tensor " +
                             in_quotes(previous_name) + ", which ends at " +
                             std::to_string(previous_end));
    }
    p.tensor.data = {base + p.begin, static_cast<std::size_t>(p.end - p.begin)};
    if (!index_.emplace(p.tensor.name, tensors_.size()).second) {
      return bad(origin, "tensor " + in_quotes(p.tensor.name) + " appears twice in the header");
    }
    tensors_.push_back(std::move(p.tensor));
    previous_end = p.end;
    previous_name = tensors_.back().name;
  }
  return {};
}

const SafetensorsTensor* SafetensorsFile::tensor(std::string_view name) const noexcept {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::vector<std::string_view> SafetensorsFile::names() const {
  std::vector<std::string_view> out;
  out.reserve(tensors_.size());
  for (const auto& t : tensors_) out.emplace_back(t.name);
  return out;
}

}  // namespace coinfer
