#include "infer_codec.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "coinfer/core/json_writer.hpp"
#include "../input_checks.hpp"

namespace coinfer::grpc_codec {
namespace {

using inference::InferParameter;
using inference::InferTensorContents;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

std::string input_path(int index, std::string_view field = {}) {
  return input_checks::input_path(static_cast<std::size_t>(index), field);
}

Status read_parameter(const std::string& key, const InferParameter& p, std::string_view where,
                      ParameterValue& out) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kBoolParam: out = p.bool_param(); return {};
    case InferParameter::kInt64Param: out = p.int64_param(); return {};
    case InferParameter::kStringParam: out = p.string_param(); return {};
    case InferParameter::kDoubleParam: out = p.double_param(); return {};
    case InferParameter::kUint64Param:
      if (p.uint64_param() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Status::invalid(std::string(where) + "." + key + ": " +
                               std::to_string(p.uint64_param()) + " is out of range");
      }
      out = static_cast<std::int64_t>(p.uint64_param());
      return {};
    case InferParameter::PARAMETER_CHOICE_NOT_SET: break;
  }
  return Status::invalid(std::string(where) + "." + key + ": no value");
}

// Elements of one input from its typed contents: `field` must hold exactly `count` values of
// the datatype, each within the element type's range.
template <class T, class Repeated>
Status copy_typed(const Repeated& field, std::int64_t count, std::byte* destination,
                  const std::string& path) {
  if (static_cast<std::int64_t>(field.size()) != count) {
    return Status::invalid(path + ": " + std::to_string(field.size()) +
                           " elements, the shape needs " + std::to_string(count));
  }
  T* out = reinterpret_cast<T*>(destination);
  for (int k = 0; k < field.size(); ++k) {
    const auto value = field.Get(k);
    if constexpr (std::is_integral_v<T>) {
      if (!std::in_range<T>(value)) {
        return Status::invalid(path + "[" + std::to_string(k) + "]: " + std::to_string(value) +
                               " is out of range for " + std::string(to_string(dtype_of<T>())));
      }
    }
    const T element = static_cast<T>(value);
    std::memcpy(out + k, &element, sizeof(T));
  }
  return {};
}

// The typed contents of a fixed-size input into its destination.
Status copy_contents(const InferTensorContents& c, DType dtype, std::int64_t count,
                     std::byte* destination, const std::string& path) {
  switch (dtype) {
    case DType::Bool: {
      if (static_cast<std::int64_t>(c.bool_contents_size()) != count) {
        return Status::invalid(path + ".bool_contents: " + std::to_string(c.bool_contents_size()) +
                               " elements, the shape needs " + std::to_string(count));
      }
      for (int k = 0; k < c.bool_contents_size(); ++k) {
        destination[k] = std::byte{c.bool_contents(k) ? std::uint8_t{1} : std::uint8_t{0}};
      }
      return {};
    }
    case DType::Int8: return copy_typed<std::int8_t>(c.int_contents(), count, destination, path + ".int_contents");
    case DType::Int16: return copy_typed<std::int16_t>(c.int_contents(), count, destination, path + ".int_contents");
    case DType::Int32: return copy_typed<std::int32_t>(c.int_contents(), count, destination, path + ".int_contents");
    case DType::Int64: return copy_typed<std::int64_t>(c.int64_contents(), count, destination, path + ".int64_contents");
    case DType::UInt8: return copy_typed<std::uint8_t>(c.uint_contents(), count, destination, path + ".uint_contents");
    case DType::UInt16: return copy_typed<std::uint16_t>(c.uint_contents(), count, destination, path + ".uint_contents");
    case DType::UInt32: return copy_typed<std::uint32_t>(c.uint_contents(), count, destination, path + ".uint_contents");
    case DType::UInt64: return copy_typed<std::uint64_t>(c.uint64_contents(), count, destination, path + ".uint64_contents");
    case DType::FP32: return copy_typed<float>(c.fp32_contents(), count, destination, path + ".fp32_contents");
    case DType::FP64: return copy_typed<double>(c.fp64_contents(), count, destination, path + ".fp64_contents");
    case DType::FP16:
      return Status::invalid(path + ": FP16 has no typed contents field; send it in raw_input_contents");
    case DType::Bytes: break;
  }
  return Status::invalid(path + ": BYTES elements go in bytes_contents");  // unreachable
}

// Raw BYTES elements, each after a 4-byte little-endian length, into `strings`.
Status split_raw_bytes(std::string_view raw, std::vector<std::string>& strings,
                       const std::string& path) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < strings.size(); ++k) {
    std::uint32_t length = 0;
    if (raw.size() - at < 4) {
      return Status::invalid(path + ": BYTES element " + std::to_string(k) +
                             ": no room for its 4-byte length");
    }
    std::memcpy(&length, raw.data() + at, 4);  // little-endian, as x86 and Arm hosts
    at += 4;
    if (length > raw.size() - at) {
      return Status::invalid(path + ": BYTES element " + std::to_string(k) + ": length " +
                             std::to_string(length) + " runs past its " +
                             std::to_string(raw.size()) + " bytes");
    }
    strings[k].assign(raw.data() + at, length);
    at += length;
  }
  if (at != raw.size()) {
    return Status::invalid(path + ": " + std::to_string(raw.size() - at) +
                           " bytes left after its last BYTES element");
  }
  return {};
}

void append_raw_bytes(const std::vector<std::string>& strings, std::string& out) {
  for (const std::string& s : strings) {
    const auto length = static_cast<std::uint32_t>(s.size());
    char prefix[4];
    std::memcpy(prefix, &length, 4);
    out.append(prefix, 4);
    out += s;
  }
}

}  // namespace

Status read_parameters(const ParameterMap& in, std::string_view where, Parameters& out) {
  out.clear();
  out.reserve(in.size());
  for (const auto& [key, value] : in) {
    if (key.starts_with("triton_")) continue;
    ParameterValue v;
    if (Status s = read_parameter(key, value, where, v); !s.ok()) return s;
    out.emplace_back(key, std::move(v));
  }
  // The map's order is unspecified: sorted, so that equal requests have equal parameters
  // (the response cache keys on them).
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return {};
}

Status InferDecoder::decode(const ModelMetadata& model, InferRequest& out, InputSink* sink) {
  const ModelInferRequest& r = request_;
  out.id = r.id();
  out.requested_outputs.clear();
  out.binary_outputs.clear();
  if (Status s = read_parameters(r.parameters(), "parameters", out.parameters); !s.ok()) return s;
  if (deadline_.count() > 0) {
    auto it = std::find_if(out.parameters.begin(), out.parameters.end(),
                           [](const auto& p) { return p.first == "timeout"; });
    if (it == out.parameters.end()) {
      out.parameters.emplace_back("timeout", static_cast<std::int64_t>(deadline_.count()));
    } else if (const auto* t = std::get_if<std::int64_t>(&it->second);
               t && (*t == 0 || *t > deadline_.count())) {
      it->second = static_cast<std::int64_t>(deadline_.count());
    }
  }

  for (int i = 0; i < r.outputs_size(); ++i) {
    const std::string& name = r.outputs(i).name();
    std::size_t m = 0;
    while (m < model.outputs.size() && model.outputs[m].name != name) ++m;
    if (m == model.outputs.size()) {
      return Status::invalid("outputs[" + std::to_string(i) + "].name: model '" + model.name +
                             "' has no output '" + name + "'");
    }
    if (std::find(out.requested_outputs.begin(), out.requested_outputs.end(), m) !=
        out.requested_outputs.end()) {
      return Status::invalid("outputs[" + std::to_string(i) + "].name: duplicate output '" +
                             name + "'");
    }
    out.requested_outputs.push_back(m);
  }

  const bool raw = r.raw_input_contents_size() > 0;
  if (raw && r.raw_input_contents_size() != r.inputs_size()) {
    return Status::invalid("raw_input_contents: " + std::to_string(r.raw_input_contents_size()) +
                           " entries for " + std::to_string(r.inputs_size()) +
                           " inputs (one per input, in the order of inputs)");
  }
  // Pass 1: every input matched to a model input, its datatype and shape checked.
  std::vector<int> supplied_by(model.inputs.size(), -1);
  std::vector<Shape> shapes(model.inputs.size());
  input_checks::BatchDimension batch;
  for (int i = 0; i < r.inputs_size(); ++i) {
    const auto& input = r.inputs(i);
    std::size_t m = 0;
    while (m < model.inputs.size() && model.inputs[m].name != input.name()) ++m;
    if (m == model.inputs.size()) {
      return Status::invalid(input_path(i, "name") + ": model '" + model.name +
                             "' has no input '" + input.name() + "'");
    }
    if (supplied_by[m] >= 0) {
      return Status::invalid(input_path(i, "name") + ": duplicate input '" + input.name() + "'");
    }
    supplied_by[m] = i;
    Shape shape(input.shape().begin(), input.shape().end());
    std::int64_t count = 0;
    if (Status s = input_checks::check_input(model, model.inputs[m], static_cast<std::size_t>(i),
                                             input.datatype(), shape, batch, count);
        !s.ok()) {
      return s;
    }
    // The elements must be in the message: each takes at least one byte (BOOL packed, BYTES
    // a 4-byte length), so a shape larger than the message is refused before allocating.
    const std::size_t held = raw ? r.raw_input_contents(i).size() : input.contents().ByteSizeLong();
    if (static_cast<std::uint64_t>(count) > held && count > 0) {
      return Status::invalid(input_path(i, "shape") + ": " + to_string(shape) + " needs " +
                             std::to_string(count) + " elements, more than its " +
                             (raw ? "raw_input_contents" : "contents") + " hold");
    }
    if (raw && input.has_contents()) {
      return Status::invalid(input_path(i, "contents") +
                             ": given beside raw_input_contents (one or the other)");
    }
    shapes[m] = std::move(shape);
  }
  for (std::size_t m = 0; m < model.inputs.size(); ++m) {
    if (supplied_by[m] < 0) {
      return Status::invalid("inputs: model '" + model.name + "' needs input '" +
                             model.inputs[m].name + "'");
    }
  }

  // The destinations, once: a batch's rows (sink) or the request's own tensors.
  const bool any_bytes = std::any_of(model.inputs.begin(), model.inputs.end(),
                                     [](const TensorSpec& s) { return s.dtype == DType::Bytes; });
  out.inputs.clear();
  if (!sink || any_bytes) out.inputs.resize(model.inputs.size());
  std::vector<std::span<std::byte>> destinations(model.inputs.size());
  if (sink) {
    if (Status s = sink->allocate(shapes, out.parameters, destinations); !s.ok()) return s;
  } else {
    for (std::size_t m = 0; m < model.inputs.size(); ++m) {
      if (model.inputs[m].dtype == DType::Bytes) continue;
      out.inputs[m].resize(model.inputs[m].dtype, shapes[m]);
      destinations[m] = out.inputs[m].bytes();
    }
  }

  // Pass 2: the elements.
  for (std::size_t m = 0; m < model.inputs.size(); ++m) {
    const int i = supplied_by[m];
    const DType dtype = model.inputs[m].dtype;
    const std::int64_t count = element_count(shapes[m]);
    const std::string path = raw ? "raw_input_contents[" + std::to_string(i) + "]"
                                 : input_path(i, "contents");
    if (dtype == DType::Bytes) {
      out.inputs[m].resize(DType::Bytes, shapes[m]);
      auto& strings = out.inputs[m].strings();
      if (raw) {
        if (Status s = split_raw_bytes(r.raw_input_contents(i), strings, path); !s.ok()) return s;
        continue;
      }
      const auto& field = r.inputs(i).contents().bytes_contents();
      if (static_cast<std::int64_t>(field.size()) != count) {
        return Status::invalid(path + ".bytes_contents: " + std::to_string(field.size()) +
                               " elements, the shape needs " + std::to_string(count));
      }
      for (int k = 0; k < field.size(); ++k) strings[static_cast<std::size_t>(k)] = field.Get(k);
      continue;
    }
    const std::span<std::byte> destination = destinations[m];
    if (!raw) {
      if (Status s = copy_contents(r.inputs(i).contents(), dtype, count, destination.data(), path);
          !s.ok()) {
        return s;
      }
      continue;
    }
    const std::string& bytes = r.raw_input_contents(i);
    if (bytes.size() != destination.size()) {
      return Status::invalid(path + ": " + std::to_string(bytes.size()) + " bytes, the shape " +
                             to_string(shapes[m]) + " of " + std::string(to_string(dtype)) +
                             " needs " + std::to_string(destination.size()));
    }
    if (dtype == DType::Bool) {
      for (std::size_t k = 0; k < bytes.size(); ++k) {
        const auto b = static_cast<unsigned char>(bytes[k]);
        if (b > 1) {
          return Status::invalid(path + ": BOOL element " + std::to_string(k) + " is " +
                                 std::to_string(b) + ", expected 0 or 1");
        }
      }
    }
    if (!bytes.empty()) std::memcpy(destination.data(), bytes.data(), bytes.size());
  }
  return {};
}

void encode_infer(const ModelMetadata& model, const InferRequest& request,
                  const std::vector<Tensor>& outputs, ModelInferResponse& out) {
  out.set_model_name(model.name);
  out.set_model_version(model.version);
  out.set_id(request.id);
  auto encode = [&](std::size_t m) {
    const Tensor& tensor = outputs[m];
    auto* o = out.add_outputs();
    o->set_name(model.outputs[m].name);
    o->set_datatype(std::string(to_string(tensor.dtype())));
    for (std::int64_t d : tensor.shape()) o->add_shape(d);
    std::string* raw = out.add_raw_output_contents();
    if (tensor.dtype() == DType::Bytes) {
      append_raw_bytes(tensor.strings(), *raw);
    } else {
      const auto bytes = tensor.bytes();
      raw->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  };
  if (request.requested_outputs.empty()) {
    for (std::size_t m = 0; m < outputs.size() && m < model.outputs.size(); ++m) encode(m);
  } else {
    for (std::size_t m : request.requested_outputs) encode(m);
  }
}

void encode_metadata(const ModelMetadata& model, inference::ModelMetadataResponse& out) {
  out.set_name(model.name);
  out.add_versions(model.version);
  out.set_platform(model.platform);
  auto tensor = [](const TensorSpec& spec, auto* t) {
    t->set_name(spec.name);
    t->set_datatype(std::string(to_string(spec.dtype)));
    for (std::int64_t d : spec.shape) t->add_shape(d);
  };
  for (const TensorSpec& spec : model.inputs) tensor(spec, out.add_inputs());
  for (const TensorSpec& spec : model.outputs) tensor(spec, out.add_outputs());
}

namespace {
inference::DataType config_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return inference::TYPE_BOOL;
    case DType::UInt8: return inference::TYPE_UINT8;
    case DType::UInt16: return inference::TYPE_UINT16;
    case DType::UInt32: return inference::TYPE_UINT32;
    case DType::UInt64: return inference::TYPE_UINT64;
    case DType::Int8: return inference::TYPE_INT8;
    case DType::Int16: return inference::TYPE_INT16;
    case DType::Int32: return inference::TYPE_INT32;
    case DType::Int64: return inference::TYPE_INT64;
    case DType::FP16: return inference::TYPE_FP16;
    case DType::FP32: return inference::TYPE_FP32;
    case DType::FP64: return inference::TYPE_FP64;
    case DType::Bytes: return inference::TYPE_STRING;
  }
  return inference::TYPE_INVALID;
}
}  // namespace

void encode_config(const ModelMetadata& model, const BatchPolicy& policy, inference::ModelConfig& out) {
  out.set_name(model.name);
  out.set_platform(model.platform);
  out.set_backend("coinfer");
  out.set_max_batch_size(model.max_batch_size);
  const std::size_t skip = model.max_batch_size > 0 ? 1 : 0;  // Triton's dims leave it out
  auto dims = [&](const TensorSpec& spec, auto* t) {
    t->set_name(spec.name);
    t->set_data_type(config_type(spec.dtype));
    for (std::size_t d = std::min(skip, spec.shape.size()); d < spec.shape.size(); ++d) {
      t->add_dims(spec.shape[d]);
    }
  };
  for (const TensorSpec& spec : model.inputs) dims(spec, out.add_input());
  for (const TensorSpec& spec : model.outputs) dims(spec, out.add_output());
  if (model.max_batch_size > 1) {
    auto* batching = out.mutable_dynamic_batching();
    for (int size : policy.preferred_batch_sizes) batching->add_preferred_batch_size(size);
    batching->set_max_queue_delay_microseconds(
        static_cast<std::uint64_t>(policy.max_queue_delay.count()));
  }
}

namespace {

// Whether text is a JSON array or object (as wanted) that can be written into the generate
// message one level down: parsed with one level less than a message may have, so that the
// message holding it parses too.
bool embeddable_json(std::string_view text, simdjson::dom::element_type wanted) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (parser.allocate(text.size(), simdjson::DEFAULT_MAX_DEPTH - 1) ||
      parser.parse(text.data(), text.size()).get(element)) {
    return false;
  }
  return element.type() == wanted;
}

// A string parameter's JSON: the value itself when it is a JSON array or object, else quoted.
void append_string_parameter(std::string_view text, std::string& json) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '[' || text[first] == '{')) {
    if (embeddable_json(text, text[first] == '[' ? simdjson::dom::element_type::ARRAY
                                                 : simdjson::dom::element_type::OBJECT)) {
      json += text;
      return;
    }
  }
  json_append_string(json, text);
}

// The one element of a generate input (BYTES or BOOL), from raw or typed contents.
Status generate_input(const ModelInferRequest& r, int i, DType expected, std::string& bytes,
                      bool& flag) {
  const auto& input = r.inputs(i);
  const std::string path = input_path(i);
  if (input.datatype() != to_string(expected)) {
    return Status::invalid(path + ".datatype: " + input.name() + " is " +
                           std::string(to_string(expected)) + ", got '" + input.datatype() + "'");
  }
  if (element_count(std::span<const std::int64_t>(input.shape().data(), input.shape().size())) != 1) {
    return Status::invalid(path + ".shape: " + input.name() + " holds one element ([1]), got " +
                           to_string(Shape(input.shape().begin(), input.shape().end())));
  }
  if (r.raw_input_contents_size() > 0) {
    if (r.raw_input_contents_size() != r.inputs_size()) {
      return Status::invalid("raw_input_contents: " + std::to_string(r.raw_input_contents_size()) +
                             " entries for " + std::to_string(r.inputs_size()) + " inputs");
    }
    const std::string& raw = r.raw_input_contents(i);
    if (expected == DType::Bool) {
      if (raw.size() != 1 || static_cast<unsigned char>(raw[0]) > 1) {
        return Status::invalid("raw_input_contents[" + std::to_string(i) +
                               "]: expected one BOOL byte (0 or 1)");
      }
      flag = raw[0] == 1;
      return {};
    }
    std::vector<std::string> one(1);
    if (Status s = split_raw_bytes(raw, one, "raw_input_contents[" + std::to_string(i) + "]");
        !s.ok()) {
      return s;
    }
    bytes = std::move(one[0]);
    return {};
  }
  const auto& c = input.contents();
  if (expected == DType::Bool) {
    if (c.bool_contents_size() != 1) {
      return Status::invalid(path + ".contents.bool_contents: expected one element");
    }
    flag = c.bool_contents(0);
    return {};
  }
  if (c.bytes_contents_size() != 1) {
    return Status::invalid(path + ".contents.bytes_contents: expected one element");
  }
  bytes = c.bytes_contents(0);
  return {};
}

}  // namespace

Status generate_message(const ModelInferRequest& r, std::string& json) {
  json.clear();
  json += '{';
  bool has_text = false;
  for (int i = 0; i < r.inputs_size(); ++i) {
    const std::string& name = r.inputs(i).name();
    std::string bytes;
    bool flag = false;
    if (name == "text_input" || name == "sampling_parameters") {
      if (Status s = generate_input(r, i, DType::Bytes, bytes, flag); !s.ok()) return s;
      if (name == "text_input") {
        has_text = true;
        json += R"("text_input":)";
        json_append_string(json, bytes);
      } else {
        if (!embeddable_json(bytes, simdjson::dom::element_type::OBJECT)) {
          return Status::invalid(input_path(i) +
                                 ": sampling_parameters must be a JSON object of generate fields");
        }
        json += R"("parameters":)";
        json += bytes;
      }
    } else if (name == "stream") {
      if (Status s = generate_input(r, i, DType::Bool, bytes, flag); !s.ok()) return s;
      json += flag ? R"("stream":true)" : R"("stream":false)";
    } else {
      return Status::invalid(input_path(i, "name") + ": a language model takes text_input, "
                             "stream and sampling_parameters, not '" + name + "'");
    }
    json += ',';
  }
  if (!has_text) return Status::invalid("inputs: text_input (BYTES [1]) missing");
  // Sorted, so that the message (and any error about it) does not depend on the map's order.
  std::vector<const ParameterMap::value_type*> parameters;
  for (const auto& entry : r.parameters()) {
    if (!entry.first.starts_with("triton_")) parameters.push_back(&entry);
  }
  std::sort(parameters.begin(), parameters.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : parameters) {
    const auto& [key, p] = *entry;
    if (key == "text_input" || key == "id" || key == "model_name" || key == "model_version") {
      return Status::invalid("parameters." + key + ": not a generate parameter");
    }
    json_append_string(json, key);
    json += ':';
    switch (p.parameter_choice_case()) {
      case InferParameter::kBoolParam: json += p.bool_param() ? "true" : "false"; break;
      case InferParameter::kInt64Param:
        if (key == "timeout") {  // OIP's microseconds; the generate field is in seconds
          json_append_number(json, static_cast<double>(p.int64_param()) / 1e6);
        } else {
          json_append_number(json, p.int64_param());
        }
        break;
      case InferParameter::kUint64Param:
        if (key == "timeout") {
          json_append_number(json, static_cast<double>(p.uint64_param()) / 1e6);
        } else {
          json += std::to_string(p.uint64_param());
        }
        break;
      case InferParameter::kDoubleParam: json_append_number(json, p.double_param()); break;
      case InferParameter::kStringParam: append_string_parameter(p.string_param(), json); break;
      case InferParameter::PARAMETER_CHOICE_NOT_SET:
        return Status::invalid("parameters." + key + ": no value");
    }
    json += ',';
  }
  json.back() = '}';
  return {};
}

void encode_generate(const ModelInferRequest& request, std::string_view model_version,
                     std::string_view text, const generation::GenerationUpdate* last,
                     ModelInferResponse& out) {
  out.set_model_name(request.model_name());
  out.set_model_version(std::string(model_version));
  out.set_id(request.id());
  auto* o = out.add_outputs();
  o->set_name("text_output");
  o->set_datatype("BYTES");
  o->add_shape(1);
  append_raw_bytes({std::string(text)}, *out.add_raw_output_contents());
  auto& parameters = *out.mutable_parameters();
  parameters["triton_final_response"].set_bool_param(last != nullptr);
  if (last) {
    parameters["finish_reason"].set_string_param(
        last->finish == generation::FinishReason::length ? "length" : "stop");
    parameters["prompt_tokens"].set_int64_param(last->prompt_tokens);
    parameters["completion_tokens"].set_int64_param(last->completion_tokens);
  }
}

}  // namespace coinfer::grpc_codec
