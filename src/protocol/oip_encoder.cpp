#include "coinfer/protocol/oip_encoder.hpp"

#include <cassert>
#include <cstdint>
#include <cstring>

#include "coinfer/core/half.hpp"
#include "coinfer/core/json_writer.hpp"

namespace coinfer {
namespace {

// Elements are formatted into this stack buffer and appended in blocks: no per-element
// allocation and one bounds check per block instead of per element.
constexpr std::size_t kBlockChars = 4096;

template <class T, class ToJson>
void append_number_list(std::span<const T> values, ToJson to_json, std::string& out) {
  char block[kBlockChars];
  char* cursor = block;
  bool first = true;
  for (const T& value : values) {
    if (static_cast<std::size_t>(block + kBlockChars - cursor) < kMaxJsonNumberChars + 1) {
      out.append(block, cursor);
      cursor = block;
    }
    if (!first) *cursor++ = ',';
    first = false;
    cursor = json_format_number(cursor, to_json(value));
  }
  out.append(block, cursor);
}

template <class T>
void append_number_list(std::span<const T> values, std::string& out) {
  append_number_list(
      values, [](T value) { return value; }, out);
}

void append_bool_list(std::span<const std::byte> values, std::string& out) {
  out.reserve(out.size() + values.size() * 6);
  bool first = true;
  for (std::byte value : values) {
    if (!first) out += ',';
    first = false;
    out += value != std::byte{0} ? "true" : "false";
  }
}

void append_string_list(const std::vector<std::string>& values, std::string& out) {
  bool first = true;
  for (const std::string& value : values) {
    if (!first) out += ',';
    first = false;
    json_append_string(out, value);
  }
}

// A rough size of one formatted element, to reserve the output once per tensor.
std::size_t typical_chars(DType dtype) {
  switch (dtype) {
    case DType::FP32:
    case DType::FP16:
      return 13;
    case DType::FP64:
      return 20;
    case DType::Bool:
      return 6;
    case DType::Bytes:
      return 16;
    default:
      return element_size(dtype) * 3 + 1;
  }
}

void append_data(const Tensor& t, std::string& out) {
  out.reserve(out.size() + static_cast<std::size_t>(t.size()) * typical_chars(t.dtype()) + 2);
  out += '[';
  switch (t.dtype()) {
    case DType::Bool:
      append_bool_list(t.bytes(), out);
      break;
    case DType::UInt8:
      append_number_list(t.values<std::uint8_t>(), out);
      break;
    case DType::UInt16:
      append_number_list(t.values<std::uint16_t>(), out);
      break;
    case DType::UInt32:
      append_number_list(t.values<std::uint32_t>(), out);
      break;
    case DType::UInt64:
      append_number_list(t.values<std::uint64_t>(), out);
      break;
    case DType::Int8:
      append_number_list(t.values<std::int8_t>(), out);
      break;
    case DType::Int16:
      append_number_list(t.values<std::int16_t>(), out);
      break;
    case DType::Int32:
      append_number_list(t.values<std::int32_t>(), out);
      break;
    case DType::Int64:
      append_number_list(t.values<std::int64_t>(), out);
      break;
    case DType::FP16: {
      // Stored as raw binary16 bits; the float holding the same value prints shortest.
      const auto bytes = t.bytes();
      const std::span<const std::uint16_t> bits{
          reinterpret_cast<const std::uint16_t*>(bytes.data()), bytes.size() / 2};
      append_number_list(
          bits, [](std::uint16_t b) { return half_to_float(b); }, out);
      break;
    }
    case DType::FP32:
      append_number_list(t.values<float>(), out);
      break;
    case DType::FP64:
      append_number_list(t.values<double>(), out);
      break;
    case DType::Bytes:
      append_string_list(t.strings(), out);
      break;
  }
  out += ']';
}

void append_shape(const Shape& shape, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    json_append_number(out, shape[i]);
  }
  out += ']';
}

void append_parameters(const Parameters& parameters, std::string& out) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : parameters) {
    if (!first) out += ',';
    first = false;
    json_append_string(out, key);
    out += ':';
    if (const auto* b = std::get_if<bool>(&value)) {
      json_append_bool(out, *b);
    } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
      json_append_number(out, *i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      json_append_number(out, *d);
    } else {
      json_append_string(out, std::get<std::string>(value));
    }
  }
  out += '}';
}

// The binary tensor data of an output: its raw elements, or for BYTES a 4-byte little-endian
// length before each element.
std::size_t binary_size(const Tensor& t) {
  if (t.dtype() != DType::Bytes) return t.bytes().size();
  std::size_t size = 0;
  for (const std::string& s : t.strings()) size += 4 + s.size();
  return size;
}

void append_binary(const Tensor& t, std::string& out) {
  if (t.dtype() != DType::Bytes) {
    out.append(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
    return;
  }
  for (const std::string& s : t.strings()) {
    const auto length = static_cast<std::uint32_t>(s.size());
    char prefix[4];
    std::memcpy(prefix, &length, 4);  // little-endian, as x86 and Arm hosts
    out.append(prefix, 4);
    out += s;
  }
}

void append_output(const TensorSpec& spec, const Tensor& t, bool binary, std::string& out) {
  out += "{\"name\":";
  json_append_string(out, spec.name);
  out += ",\"datatype\":\"";
  out += to_string(t.dtype());
  out += "\",\"shape\":";
  append_shape(t.shape(), out);
  if (binary) {
    out += ",\"parameters\":{\"binary_data_size\":";
    json_append_number(out, binary_size(t));
    out += "}}";
    return;
  }
  out += ",\"data\":";
  append_data(t, out);
  out += '}';
}

void append_tensor_specs(std::span<const TensorSpec> specs, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (i) out += ',';
    out += "{\"name\":";
    json_append_string(out, specs[i].name);
    out += ",\"datatype\":\"";
    out += to_string(specs[i].dtype);
    out += "\",\"shape\":";
    append_shape(specs[i].shape, out);
    out += '}';
  }
  out += ']';
}

}  // namespace

std::size_t encode_infer_response(const InferResponse& r, std::span<const TensorSpec> output_specs,
                                  std::span<const std::size_t> selected, std::string& out,
                                  std::span<const std::uint8_t> binary_outputs) {
  const std::size_t start = out.size();
  out += "{\"model_name\":";
  json_append_string(out, r.model_name);
  out += ",\"model_version\":";
  json_append_string(out, r.model_version);
  if (!r.id.empty()) {
    out += ",\"id\":";
    json_append_string(out, r.id);
  }
  if (!r.parameters.empty()) {
    out += ",\"parameters\":";
    append_parameters(r.parameters, out);
  }
  out += ",\"outputs\":[";
  const std::size_t count = selected.empty() ? output_specs.size() : selected.size();
  auto index_of = [&](std::size_t k) { return selected.empty() ? k : selected[k]; };
  auto is_binary = [&](std::size_t index) {
    return index < binary_outputs.size() && binary_outputs[index] != 0;
  };
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t index = index_of(k);
    assert(index < output_specs.size() && index < r.outputs.size());
    if (k) out += ',';
    append_output(output_specs[index], r.outputs[index], is_binary(index), out);
  }
  out += "]}";
  const std::size_t json_bytes = out.size() - start;
  for (std::size_t k = 0; k < count; ++k) {
    if (is_binary(index_of(k))) append_binary(r.outputs[index_of(k)], out);
  }
  return json_bytes;
}

void encode_model_metadata(const ModelMetadata& m, std::string& out) {
  out += "{\"name\":";
  json_append_string(out, m.name);
  out += ",\"versions\":[";
  json_append_string(out, m.version);
  out += "],\"platform\":";
  json_append_string(out, m.platform);
  out += ",\"inputs\":";
  append_tensor_specs(m.inputs, out);
  out += ",\"outputs\":";
  append_tensor_specs(m.outputs, out);
  out += '}';
}

void encode_error(std::string_view message, std::string& out) {
  out += "{\"error\":";
  json_append_string(out, message);
  out += '}';
}

void encode_server_metadata(std::string_view name, std::string_view version,
                            std::span<const std::string_view> extensions, std::string& out) {
  out += "{\"name\":";
  json_append_string(out, name);
  out += ",\"version\":";
  json_append_string(out, version);
  out += ",\"extensions\":[";
  for (std::size_t i = 0; i < extensions.size(); ++i) {
    if (i) out += ',';
    json_append_string(out, extensions[i]);
  }
  out += "]}";
}

}  // namespace coinfer
