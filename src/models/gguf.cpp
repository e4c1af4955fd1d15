#include "coinfer/models/gguf.hpp"

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "coinfer/core/half.hpp"

namespace coinfer {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr std::uint64_t kMaxStringBytes = 1ull << 30;
constexpr std::uint64_t kMaxArrayElements = 1ull << 28;
constexpr std::uint32_t kMaxDims = 4;

template <class T>
T load(const std::byte* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

std::string offset_text(std::uint64_t offset) { return "offset " + std::to_string(offset); }

// Reads the header sequentially; every read is bounds-checked and names where it failed.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::string_view origin)
      : bytes_(bytes), origin_(origin) {}

  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t left() const noexcept { return bytes_.size() - offset_; }

  template <class T>
  Status read(T& out, std::string_view what) {
    if (bytes_.size() - offset_ < sizeof(T)) return truncated(what);
    out = load<T>(bytes_.data() + offset_);
    offset_ += sizeof(T);
    return {};
  }

  Status read_string(std::string& out, std::string_view what) {
    std::uint64_t length = 0;
    if (auto s = read(length, what); !s.ok()) return s;
    if (length > kMaxStringBytes || length > bytes_.size() - offset_) {
      return error(std::string(what) + ": string of " + std::to_string(length) +
                   " bytes runs past the end of the file");
    }
    out.assign(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
    offset_ += length;
    return {};
  }

  Status error(std::string message) const {
    return Status::invalid(origin_ + ": " + message + " (at " + offset_text(offset_) + ")");
  }
  Status truncated(std::string_view what) const {
    return error("file ends inside " + std::string(what));
  }

 private:
  std::span<const std::byte> bytes_;
  std::string origin_;
  std::uint64_t offset_ = 0;
};

bool is_integer_type(GgufType type) noexcept {
  switch (type) {
    case GgufType::uint8:
    case GgufType::int8:
    case GgufType::uint16:
    case GgufType::int16:
    case GgufType::uint32:
    case GgufType::int32:
    case GgufType::uint64:
    case GgufType::int64:
    case GgufType::boolean:
      return true;
    default:
      return false;
  }
}

// One scalar of an integer or float type.
Status read_scalar(Reader& r, GgufType type, std::int64_t& integer, double& number,
                   const std::string& what) {
  switch (type) {
    case GgufType::uint8: {
      std::uint8_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::int8: {
      std::int8_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::uint16: {
      std::uint16_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::int16: {
      std::int16_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::uint32: {
      std::uint32_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::int32: {
      std::int32_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::uint64: {
      std::uint64_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return r.error(what + ": uint64 value " + std::to_string(v) + " is out of range");
      }
      integer = static_cast<std::int64_t>(v);
      return {};
    }
    case GgufType::int64: {
      std::int64_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      integer = v;
      return {};
    }
    case GgufType::boolean: {
      std::uint8_t v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      if (v > 1) return r.error(what + ": bool value " + std::to_string(v) + " is not 0 or 1");
      integer = v;
      return {};
    }
    case GgufType::float32: {
      float v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      number = v;
      return {};
    }
    case GgufType::float64: {
      double v{};
      if (auto s = r.read(v, what); !s.ok()) return s;
      number = v;
      return {};
    }
    default:
      return r.error(what + ": type " + std::to_string(static_cast<std::uint32_t>(type)) +
                     " is not a scalar type");
  }
}

Status read_value(Reader& r, const std::string& key, GgufValue& value) {
  std::uint32_t type = 0;
  if (auto s = r.read(type, key + " type"); !s.ok()) return s;
  if (type > static_cast<std::uint32_t>(GgufType::float64)) {
    return r.error("metadata '" + key + "': unknown value type " + std::to_string(type));
  }
  value.type = static_cast<GgufType>(type);
  const std::string what = "metadata '" + key + "'";
  if (value.type == GgufType::string) return r.read_string(value.string, what);
  if (value.type != GgufType::array) {
    return read_scalar(r, value.type, value.integer, value.number, what);
  }
  std::uint32_t element = 0;
  std::uint64_t count = 0;
  if (auto s = r.read(element, what + " element type"); !s.ok()) return s;
  if (auto s = r.read(count, what + " length"); !s.ok()) return s;
  if (element > static_cast<std::uint32_t>(GgufType::float64)) {
    return r.error(what + ": unknown array element type " + std::to_string(element));
  }
  value.element = static_cast<GgufType>(element);
  if (value.element == GgufType::array) return r.error(what + ": arrays of arrays are not read");
  // Every element takes bytes of the file (a string at least its 8-byte length, a scalar at
  // least 1): a count the rest of the file cannot hold is refused before anything is
  // allocated for it.
  const std::uint64_t least = value.element == GgufType::string ? 8 : 1;
  if (count > kMaxArrayElements || count > r.left() / least) {
    return r.error(what + ": array of " + std::to_string(count) +
                   " elements is longer than the file");
  }
  if (value.element == GgufType::string) {
    value.strings.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      if (auto s = r.read_string(value.strings[i], what + "[" + std::to_string(i) + "]"); !s.ok())
        return s;
    }
    return {};
  }
  const bool integer = is_integer_type(value.element);
  if (integer) {
    value.integers.resize(count);
  } else {
    value.numbers.resize(count);
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    std::int64_t n = 0;
    double x = 0;
    if (auto s = read_scalar(r, value.element, n, x, what); !s.ok()) return s;
    if (integer) {
      value.integers[i] = n;
    } else {
      value.numbers[i] = x;
    }
  }
  return {};
}

// Bytes of `elements` values of `type`, or nullopt when the row is not whole blocks.
std::optional<std::uint64_t> tensor_bytes(std::uint32_t type, const std::vector<std::int64_t>& dims) {
  const std::uint64_t block = ggml_block_elements(type);
  if (block == 0 || dims.empty() || dims[0] % static_cast<std::int64_t>(block) != 0) {
    return std::nullopt;
  }
  std::uint64_t elements = 1;
  for (auto d : dims) {
    if (d < 0) return std::nullopt;
    const auto ud = static_cast<std::uint64_t>(d);
    if (ud != 0 && elements > std::numeric_limits<std::uint64_t>::max() / 16 / ud) return std::nullopt;
    elements *= ud;
  }
  return elements / block * ggml_block_bytes(type);
}

void append_bytes(std::vector<std::byte>& out, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + size);
}
template <class T>
void append(std::vector<std::byte>& out, T value) {
  append_bytes(out, &value, sizeof value);
}
void append_string(std::vector<std::byte>& out, std::string_view s) {
  append<std::uint64_t>(out, s.size());
  append_bytes(out, s.data(), s.size());
}

}  // namespace

// --- types ---------------------------------------------------------------------------------

std::string_view to_string(GgufType type) noexcept {
  switch (type) {
    case GgufType::uint8: return "uint8";
    case GgufType::int8: return "int8";
    case GgufType::uint16: return "uint16";
    case GgufType::int16: return "int16";
    case GgufType::uint32: return "uint32";
    case GgufType::int32: return "int32";
    case GgufType::float32: return "float32";
    case GgufType::boolean: return "bool";
    case GgufType::string: return "string";
    case GgufType::array: return "array";
    case GgufType::uint64: return "uint64";
    case GgufType::int64: return "int64";
    case GgufType::float64: return "float64";
  }
  return "unknown";
}

std::string ggml_type_name(std::uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32: return "F32";
    case GgmlType::f16: return "F16";
    case GgmlType::q4_0: return "Q4_0";
    case GgmlType::q4_1: return "Q4_1";
    case GgmlType::q8_0: return "Q8_0";
  }
  return "type " + std::to_string(type);
}

bool GgufValue::is_integer() const noexcept { return is_integer_type(type); }

std::int64_t GgufTensor::elements() const noexcept {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

std::size_t ggml_block_elements(std::uint32_t type) noexcept {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
    case GgmlType::f16:
      return 1;
    case GgmlType::q4_0:
    case GgmlType::q4_1:
    case GgmlType::q8_0:
      return 32;
  }
  return 0;
}

std::size_t ggml_block_bytes(std::uint32_t type) noexcept {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32: return 4;
    case GgmlType::f16: return 2;
    case GgmlType::q4_0: return 2 + 16;
    case GgmlType::q4_1: return 2 + 2 + 16;
    case GgmlType::q8_0: return 2 + 32;
  }
  return 0;
}

void ggml_dequantize(std::uint32_t type, const std::byte* blocks, std::size_t count, float* out) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
      std::memcpy(out, blocks, count * sizeof(float));
      return;
    case GgmlType::f16:
      for (std::size_t i = 0; i < count; ++i) out[i] = half_to_float(load<std::uint16_t>(blocks + 2 * i));
      return;
    case GgmlType::q8_0:
      for (std::size_t b = 0; b < count / 32; ++b, blocks += 34, out += 32) {
        const float d = half_to_float(load<std::uint16_t>(blocks));
        const auto* q = reinterpret_cast<const std::int8_t*>(blocks + 2);
        for (int j = 0; j < 32; ++j) out[j] = d * static_cast<float>(q[j]);
      }
      return;
    case GgmlType::q4_0:
      for (std::size_t b = 0; b < count / 32; ++b, blocks += 18, out += 32) {
        const float d = half_to_float(load<std::uint16_t>(blocks));
        const auto* q = reinterpret_cast<const std::uint8_t*>(blocks + 2);
        for (int j = 0; j < 16; ++j) {
          out[j] = d * static_cast<float>((q[j] & 0x0F) - 8);
          out[j + 16] = d * static_cast<float>((q[j] >> 4) - 8);
        }
      }
      return;
    case GgmlType::q4_1:
      for (std::size_t b = 0; b < count / 32; ++b, blocks += 20, out += 32) {
        const float d = half_to_float(load<std::uint16_t>(blocks));
        const float m = half_to_float(load<std::uint16_t>(blocks + 2));
        const auto* q = reinterpret_cast<const std::uint8_t*>(blocks + 4);
        for (int j = 0; j < 16; ++j) {
          out[j] = d * static_cast<float>(q[j] & 0x0F) + m;
          out[j + 16] = d * static_cast<float>(q[j] >> 4) + m;
        }
      }
      return;
  }
}

void ggml_quantize(std::uint32_t type, const float* values, std::size_t count,
                   std::vector<std::byte>& out) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
      append_bytes(out, values, count * sizeof(float));
      return;
    case GgmlType::f16:
      for (std::size_t i = 0; i < count; ++i) append<std::uint16_t>(out, float_to_half(values[i]));
      return;
    case GgmlType::q8_0:
      for (std::size_t b = 0; b < count / 32; ++b, values += 32) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(values[j]));
        const float d = amax / 127.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        append<std::uint16_t>(out, float_to_half(d));
        for (int j = 0; j < 32; ++j) append<std::int8_t>(out, static_cast<std::int8_t>(std::lround(values[j] * id)));
      }
      return;
    case GgmlType::q4_0:
      for (std::size_t b = 0; b < count / 32; ++b, values += 32) {
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j) {
          if (std::fabs(values[j]) > amax) {
            amax = std::fabs(values[j]);
            max = values[j];
          }
        }
        const float d = max / -8.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        append<std::uint16_t>(out, float_to_half(d));
        for (int j = 0; j < 16; ++j) {
          const auto lo = static_cast<std::uint8_t>(std::min(15, static_cast<int>(values[j] * id + 8.5f)));
          const auto hi = static_cast<std::uint8_t>(std::min(15, static_cast<int>(values[j + 16] * id + 8.5f)));
          append<std::uint8_t>(out, static_cast<std::uint8_t>(lo | (hi << 4)));
        }
      }
      return;
    case GgmlType::q4_1:
      for (std::size_t b = 0; b < count / 32; ++b, values += 32) {
        float lo = values[0], hi = values[0];
        for (int j = 1; j < 32; ++j) {
          lo = std::min(lo, values[j]);
          hi = std::max(hi, values[j]);
        }
        const float d = (hi - lo) / 15.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        append<std::uint16_t>(out, float_to_half(d));
        append<std::uint16_t>(out, float_to_half(lo));
        for (int j = 0; j < 16; ++j) {
          const auto a = static_cast<std::uint8_t>(std::min(15, static_cast<int>((values[j] - lo) * id + 0.5f)));
          const auto c = static_cast<std::uint8_t>(std::min(15, static_cast<int>((values[j + 16] - lo) * id + 0.5f)));
          append<std::uint8_t>(out, static_cast<std::uint8_t>(a | (c << 4)));
        }
      }
      return;
  }
}

// --- GgufFile ------------------------------------------------------------------------------

GgufFile::GgufFile() = default;
GgufFile::~GgufFile() = default;
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;

Status GgufFile::open(const std::filesystem::path& path, GgufFile& out) {
  MappedFile mapping;
  if (auto s = MappedFile::open(path, mapping); !s.ok()) return s;
  GgufFile file;
  if (auto s = parse(mapping.bytes(), path.string(), file); !s.ok()) return s;
  file.mapping_ = std::move(mapping);
  out = std::move(file);
  return {};
}

Status GgufFile::parse(std::span<const std::byte> bytes, std::string_view origin, GgufFile& out) {
  GgufFile file;
  file.origin_ = origin;
  Reader r(bytes, origin);
  std::uint32_t magic = 0;
  if (auto s = r.read(magic, "the magic number"); !s.ok()) return s;
  if (magic != kMagic) return Status::invalid(std::string(origin) + ": not a GGUF file (bad magic)");
  if (auto s = r.read(file.version_, "the version"); !s.ok()) return s;
  if (file.version_ < 2 || file.version_ > 3) {
    return Status::invalid(std::string(origin) + ": GGUF version " + std::to_string(file.version_) +
                           " is not supported (2 and 3 are)");
  }
  std::uint64_t tensor_count = 0, kv_count = 0;
  if (auto s = r.read(tensor_count, "the tensor count"); !s.ok()) return s;
  if (auto s = r.read(kv_count, "the metadata count"); !s.ok()) return s;
  // Each entry takes at least 12 bytes: counts beyond the file are malformed, not allocations.
  if (tensor_count > bytes.size() / 12 || kv_count > bytes.size() / 12) {
    return r.error("tensor count " + std::to_string(tensor_count) + " or metadata count " +
                   std::to_string(kv_count) + " exceeds what the file can hold");
  }
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    if (auto s = r.read_string(key, "metadata key " + std::to_string(i)); !s.ok()) return s;
    GgufValue value;
    if (auto s = read_value(r, key, value); !s.ok()) return s;
    if (!file.metadata_.emplace(key, std::move(value)).second) {
      return r.error("metadata key '" + key + "' appears twice");
    }
  }
  if (const auto* a = file.find("general.alignment")) {
    if (!a->is_integer() || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0) {
      return Status::invalid(std::string(origin) + ": general.alignment must be a power of two");
    }
    file.alignment_ = static_cast<std::uint64_t>(a->integer);
  }
  file.tensors_.resize(tensor_count);
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    auto& t = file.tensors_[i];
    const auto info_offset = r.offset();
    if (auto s = r.read_string(t.name, "tensor " + std::to_string(i) + " name"); !s.ok()) return s;
    const std::string what = "tensor '" + t.name + "'";
    std::uint32_t n_dims = 0;
    if (auto s = r.read(n_dims, what + " dimension count"); !s.ok()) return s;
    if (n_dims == 0 || n_dims > kMaxDims) {
      return r.error(what + ": " + std::to_string(n_dims) + " dimensions (1 to 4 are valid)");
    }
    t.dims.resize(n_dims);
    for (auto& d : t.dims) {
      std::uint64_t v = 0;
      if (auto s = r.read(v, what + " dimensions"); !s.ok()) return s;
      if (v > (1ull << 40)) return r.error(what + ": dimension " + std::to_string(v) + " is too large");
      d = static_cast<std::int64_t>(v);
    }
    if (auto s = r.read(t.type, what + " type"); !s.ok()) return s;
    if (auto s = r.read(t.offset, what + " offset"); !s.ok()) return s;
    if (ggml_block_elements(t.type) == 0) {
      return Status::invalid(std::string(origin) + ": " + what + " (info at " +
                             offset_text(info_offset) + ") has element type " +
                             ggml_type_name(t.type) + ", which coinfer does not read");
    }
    if (!file.index_.emplace(t.name, i).second) return r.error(what + " appears twice");
  }
  const std::uint64_t data_start = (r.offset() + file.alignment_ - 1) / file.alignment_ * file.alignment_;
  for (auto& t : file.tensors_) {
    const auto size = tensor_bytes(t.type, t.dims);
    if (!size) {
      return Status::invalid(std::string(origin) + ": tensor '" + t.name + "': rows of " +
                             std::to_string(t.dims[0]) + " values are not whole " +
                             ggml_type_name(t.type) + " blocks");
    }
    if (t.offset % file.alignment_ != 0) {
      return Status::invalid(std::string(origin) + ": tensor '" + t.name + "': data offset " +
                             std::to_string(t.offset) + " is not a multiple of the alignment " +
                             std::to_string(file.alignment_));
    }
    if (data_start > bytes.size() || t.offset > bytes.size() - data_start ||
        *size > bytes.size() - data_start - t.offset) {
      return Status::invalid(std::string(origin) + ": tensor '" + t.name + "': " +
                             std::to_string(*size) + " bytes at data " + offset_text(t.offset) +
                             " (file " + offset_text(data_start + t.offset) +
                             ") run past the end of the file (" + std::to_string(bytes.size()) +
                             " bytes)");
    }
    t.data = bytes.subspan(data_start + t.offset, *size);
  }
  out = std::move(file);
  return {};
}

const GgufValue* GgufFile::find(std::string_view key) const noexcept {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::tensor(std::string_view name) const noexcept {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
Status missing(const std::string& origin, std::string_view key) {
  return Status::not_found(origin + ": metadata key '" + std::string(key) + "' is missing");
}
Status wrong_type(const std::string& origin, std::string_view key, const GgufValue& v,
                  std::string_view expected) {
  std::string got(to_string(v.type));
  if (v.type == GgufType::array) got = "array of " + std::string(to_string(v.element));
  return Status::invalid(origin + ": metadata key '" + std::string(key) + "' is " + got +
                         ", expected " + std::string(expected));
}
}  // namespace

Status GgufFile::get(std::string_view key, std::int64_t& out) const {
  const auto* v = find(key);
  if (!v) return missing(origin_, key);
  if (!v->is_integer()) return wrong_type(origin_, key, *v, "an integer");
  out = v->integer;
  return {};
}

Status GgufFile::get(std::string_view key, double& out) const {
  const auto* v = find(key);
  if (!v) return missing(origin_, key);
  if (v->is_float()) {
    out = v->number;
  } else if (v->is_integer()) {
    out = static_cast<double>(v->integer);
  } else {
    return wrong_type(origin_, key, *v, "a number");
  }
  return {};
}

Status GgufFile::get(std::string_view key, std::string& out) const {
  const auto* v = find(key);
  if (!v) return missing(origin_, key);
  if (v->type != GgufType::string) return wrong_type(origin_, key, *v, "a string");
  out = v->string;
  return {};
}

Status GgufFile::get_strings(std::string_view key, const std::vector<std::string>*& out) const {
  const auto* v = find(key);
  if (!v) return missing(origin_, key);
  if (v->type != GgufType::array || v->element != GgufType::string) {
    return wrong_type(origin_, key, *v, "an array of strings");
  }
  out = &v->strings;
  return {};
}

Status GgufFile::get_integers(std::string_view key, const std::vector<std::int64_t>*& out) const {
  const auto* v = find(key);
  if (!v) return missing(origin_, key);
  if (v->type != GgufType::array || !is_integer_type(v->element)) {
    return wrong_type(origin_, key, *v, "an array of integers");
  }
  out = &v->integers;
  return {};
}

Status GgufFile::dequantize(const GgufTensor& tensor, std::span<float> out) const {
  return dequantize_rows(tensor, 0, tensor.rows(), out);
}

Status GgufFile::dequantize_rows(const GgufTensor& tensor, std::int64_t first, std::int64_t count,
                                 std::span<float> out) const {
  const std::int64_t rows = tensor.rows();
  if (first < 0 || count < 0 || first > rows || count > rows - first) {
    return Status::invalid(origin_ + ": tensor '" + tensor.name + "': rows [" +
                           std::to_string(first) + ", " + std::to_string(first + count) +
                           ") are outside its " + std::to_string(rows) + " rows");
  }
  const auto row = static_cast<std::size_t>(tensor.row_size());
  if (out.size() < static_cast<std::size_t>(count) * row) {
    return Status::invalid(origin_ + ": tensor '" + tensor.name + "': output holds " +
                           std::to_string(out.size()) + " values, " +
                           std::to_string(static_cast<std::size_t>(count) * row) + " needed");
  }
  const std::size_t row_bytes = row / ggml_block_elements(tensor.type) * ggml_block_bytes(tensor.type);
  ggml_dequantize(tensor.type, tensor.data.data() + static_cast<std::size_t>(first) * row_bytes,
                  static_cast<std::size_t>(count) * row, out.data());
  return {};
}

// --- GgufWriter ----------------------------------------------------------------------------

namespace {
std::vector<std::byte> tagged(GgufType type) {
  std::vector<std::byte> out;
  append<std::uint32_t>(out, static_cast<std::uint32_t>(type));
  return out;
}
}  // namespace

void GgufWriter::set(std::string key, std::string value) {
  auto e = tagged(GgufType::string);
  append_string(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_uint32(std::string key, std::uint32_t value) {
  auto e = tagged(GgufType::uint32);
  append(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_int32(std::string key, std::int32_t value) {
  auto e = tagged(GgufType::int32);
  append(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_uint64(std::string key, std::uint64_t value) {
  auto e = tagged(GgufType::uint64);
  append(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_float32(std::string key, float value) {
  auto e = tagged(GgufType::float32);
  append(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_float64(std::string key, double value) {
  auto e = tagged(GgufType::float64);
  append(e, value);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_bool(std::string key, bool value) {
  auto e = tagged(GgufType::boolean);
  append<std::uint8_t>(e, value ? 1 : 0);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_strings(std::string key, std::vector<std::string> values) {
  auto e = tagged(GgufType::array);
  append<std::uint32_t>(e, static_cast<std::uint32_t>(GgufType::string));
  append<std::uint64_t>(e, values.size());
  for (const auto& v : values) append_string(e, v);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_int32s(std::string key, std::vector<std::int32_t> values) {
  auto e = tagged(GgufType::array);
  append<std::uint32_t>(e, static_cast<std::uint32_t>(GgufType::int32));
  append<std::uint64_t>(e, values.size());
  for (auto v : values) append(e, v);
  metadata_.push_back({std::move(key), std::move(e)});
}
void GgufWriter::set_float32s(std::string key, std::vector<float> values) {
  auto e = tagged(GgufType::array);
  append<std::uint32_t>(e, static_cast<std::uint32_t>(GgufType::float32));
  append<std::uint64_t>(e, values.size());
  for (auto v : values) append(e, v);
  metadata_.push_back({std::move(key), std::move(e)});
}

void GgufWriter::add_tensor(std::string name, std::vector<std::int64_t> dims, GgmlType type,
                            std::span<const float> values) {
  std::vector<std::byte> bytes;
  ggml_quantize(static_cast<std::uint32_t>(type), values.data(), values.size(), bytes);
  tensors_.push_back({std::move(name), std::move(dims), static_cast<std::uint32_t>(type), std::move(bytes)});
}

void GgufWriter::add_raw_tensor(std::string name, std::vector<std::int64_t> dims,
                                std::uint32_t type, std::vector<std::byte> bytes) {
  tensors_.push_back({std::move(name), std::move(dims), type, std::move(bytes)});
}

std::vector<std::byte> GgufWriter::bytes() const {
  std::vector<std::byte> out;
  append<std::uint32_t>(out, kMagic);
  append<std::uint32_t>(out, 3);
  append<std::uint64_t>(out, tensors_.size());
  const bool custom_alignment = alignment_ != 32;
  append<std::uint64_t>(out, metadata_.size() + (custom_alignment ? 1 : 0));
  if (custom_alignment) {
    append_string(out, "general.alignment");
    append<std::uint32_t>(out, static_cast<std::uint32_t>(GgufType::uint32));
    append<std::uint32_t>(out, alignment_);
  }
  for (const auto& e : metadata_) {
    append_string(out, e.key);
    out.insert(out.end(), e.encoded.begin(), e.encoded.end());
  }
  std::uint64_t offset = 0;
  for (const auto& t : tensors_) {
    append_string(out, t.name);
    append<std::uint32_t>(out, static_cast<std::uint32_t>(t.dims.size()));
    for (auto d : t.dims) append<std::uint64_t>(out, static_cast<std::uint64_t>(d));
    append<std::uint32_t>(out, t.type);
    append<std::uint64_t>(out, offset);
    offset += (t.bytes.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  auto pad = [&] { out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_); };
  pad();
  for (const auto& t : tensors_) {
    out.insert(out.end(), t.bytes.begin(), t.bytes.end());
    pad();
  }
  return out;
}

Status GgufWriter::write(const std::filesystem::path& path) const {
  const auto data = bytes();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!file) return Status(Errc::internal, path.string() + ": cannot write");
  return {};
}

}  // namespace coinfer
