#include "coinfer/protocol/oip_decoder.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "coinfer/core/half.hpp"
#include "input_checks.hpp"

namespace coinfer {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING);

namespace od = simdjson::ondemand;

namespace {

// Nesting of "data" arrays (and of ignored values); deeper than any real tensor rank, shallow
// enough for the stack.
constexpr int kMaxDataDepth = 64;

// ---- error messages (built only on failure) ------------------------------------------------

std::string_view type_name(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return "array";
    case od::json_type::object:
      return "object";
    case od::json_type::number:
      return "number";
    case od::json_type::string:
      return "string";
    case od::json_type::boolean:
      return "boolean";
    case od::json_type::null:
      return "null";
  }
  return "invalid value";
}

Status json_error(simdjson::error_code error) {
  return Status::invalid(std::string("invalid JSON: ") + simdjson::error_message(error));
}

std::string indexed(std::string_view base, std::size_t index) {
  std::string path(base);
  path += '[';
  path += std::to_string(index);
  path += ']';
  return path;
}

using input_checks::input_path;

// "<path>: expected an array, got object", or the JSON error if the value is not even that.
Status wrong_type(std::string path, std::string_view expected, od::value& value) {
  od::json_type type;
  if (auto error = value.type().get(type)) return json_error(error);
  return Status::invalid(std::move(path) + ": expected " + std::string(expected) + ", got " +
                         std::string(type_name(type)));
}

std::string_view trimmed_token(od::value& value) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  return token;
}

std::string format_double(double value) {
  char buffer[32];
  return {buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr};
}

// Walks a value the request does not use, so that malformed JSON under an unknown key is still
// rejected (On Demand would otherwise skip it unchecked).
Status skip_value(od::value& value, int depth = 0) {
  if (depth > kMaxDataDepth) return json_error(simdjson::DEPTH_ERROR);
  od::json_type type;
  if (auto error = value.type().get(type)) return json_error(error);
  switch (type) {
    case od::json_type::array: {
      od::array array;
      if (auto error = value.get_array().get(array)) return json_error(error);
      for (auto element : array) {
        od::value v;
        if (auto error = element.get(v)) return json_error(error);
        if (Status status = skip_value(v, depth + 1); !status) return status;
      }
      return {};
    }
    case od::json_type::object: {
      od::object object;
      if (auto error = value.get_object().get(object)) return json_error(error);
      for (auto field : object) {
        std::string_view key;
        if (auto error = field.unescaped_key().get(key)) return json_error(error);
        od::value v;
        if (auto error = field.value().get(v)) return json_error(error);
        if (Status status = skip_value(v, depth + 1); !status) return status;
      }
      return {};
    }
    case od::json_type::number:
      return value.get_double().error() ? json_error(simdjson::NUMBER_ERROR) : Status{};
    case od::json_type::string:
      if (auto error = value.get_string().error()) return json_error(error);
      return {};
    case od::json_type::boolean:
      if (auto error = value.get_bool().error()) return json_error(error);
      return {};
    case od::json_type::null: {
      bool is_null = false;
      if (auto error = value.is_null().get(is_null)) return json_error(error);
      return is_null ? Status{} : json_error(simdjson::N_ATOM_ERROR);
    }
  }
  return json_error(simdjson::TAPE_ERROR);
}

// ---- element decoding ----------------------------------------------------------------------

// How each datatype's elements are stored in Tensor::bytes() (or strings() for BYTES): Bool as
// one byte 0/1, FP16 as binary16 bits.
template <DType D>
auto storage_type() {
  if constexpr (D == DType::Bool || D == DType::UInt8) return std::uint8_t{};
  if constexpr (D == DType::UInt16 || D == DType::FP16) return std::uint16_t{};
  if constexpr (D == DType::UInt32) return std::uint32_t{};
  if constexpr (D == DType::UInt64) return std::uint64_t{};
  if constexpr (D == DType::Int8) return std::int8_t{};
  if constexpr (D == DType::Int16) return std::int16_t{};
  if constexpr (D == DType::Int32) return std::int32_t{};
  if constexpr (D == DType::Int64) return std::int64_t{};
  if constexpr (D == DType::FP32) return float{};
  if constexpr (D == DType::FP64) return double{};
  if constexpr (D == DType::Bytes) return std::string{};
}
template <DType D>
using Storage = decltype(storage_type<D>());

template <DType D>
constexpr bool kIsInteger =
    D == DType::UInt8 || D == DType::UInt16 || D == DType::UInt32 || D == DType::UInt64 ||
    D == DType::Int8 || D == DType::Int16 || D == DType::Int32 || D == DType::Int64;

// Magnitudes from these on round to infinity in the narrower type (halfway between its largest
// finite value and the next power of two, where ties-to-even goes up).
constexpr double kFloatOverflow = 0x1.ffffffp127;
constexpr double kHalfOverflow = 65520.0;

// What the fast path reports back besides simdjson's own errors.
enum class Read { ok, mismatch, out_of_range };

// Fast path for one element: one simdjson getter and a range check. On Read::mismatch the
// value was not consumed (simdjson getters leave a value alone when its type does not fit), so
// the caller can look at it again; on Read::out_of_range `number` holds its text.
template <DType D>
Read read_element(od::value& value, Storage<D>& out, std::string& number) {
  using T = Storage<D>;
  if constexpr (D == DType::Bool) {
    bool b;
    if (value.get_bool().get(b)) return Read::mismatch;
    out = b ? 1 : 0;
  } else if constexpr (D == DType::Bytes) {
    std::string_view s;
    if (value.get_string().get(s)) return Read::mismatch;
    out.assign(s);
  } else if constexpr (D == DType::UInt64) {
    if (value.get_uint64().get(out)) return Read::mismatch;
  } else if constexpr (kIsInteger<D>) {
    std::int64_t x;
    if (value.get_int64().get(x)) return Read::mismatch;
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
      number = std::to_string(x);
      return Read::out_of_range;
    }
    out = static_cast<T>(x);
  } else {  // FP16, FP32, FP64
    double d;
    if (value.get_double().get(d)) return Read::mismatch;
    if constexpr (D == DType::FP64) {
      out = d;
    } else if constexpr (D == DType::FP32) {
      if (std::fabs(d) >= kFloatOverflow) {
        number = format_double(d);
        return Read::out_of_range;
      }
      out = static_cast<float>(d);
    } else {
      if (std::fabs(d) >= kHalfOverflow) {
        number = format_double(d);
        return Read::out_of_range;
      }
      out = float_to_half(static_cast<float>(d));
    }
  }
  return Read::ok;
}

// Decodes a (possibly nested) "data" array into `data[0, count)` in row-major order, counting
// every element so that a count mismatch can say how many came.
template <DType D>
class DataDecoder {
 public:
  DataDecoder(Storage<D>* data, std::size_t count, std::size_t input)
      : data_(data), count_(count), input_(input) {}

  std::size_t decoded() const noexcept { return index_; }

  Status decode(od::array& array, int depth) {
    if (depth > kMaxDataDepth) {
      return Status::invalid(input_path(input_, "data") + ": nested deeper than " +
                             std::to_string(kMaxDataDepth) + " levels");
    }
    Storage<D> scratch{};  // past the expected count, elements are checked but not kept
    for (auto element : array) {
      od::value value;
      if (auto error = element.get(value)) return json_error(error);
      Storage<D>& slot = index_ < count_ ? data_[index_] : scratch;
      const Read read = read_element<D>(value, slot, number_);
      if (read == Read::ok) [[likely]] {
        ++index_;
        continue;
      }
      if (read == Read::out_of_range) return out_of_range(number_);
      od::json_type type;
      if (auto error = value.type().get(type)) return json_error(error);
      if (type == od::json_type::array) {
        od::array inner;
        if (auto error = value.get_array().get(inner)) return json_error(error);
        if (Status status = decode(inner, depth + 1); !status) return status;
        continue;
      }
      return mismatch(value, type);
    }
    return {};
  }

 private:
  std::string element_path() const { return indexed(input_path(input_, "data"), index_); }

  Status out_of_range(std::string_view number) const {
    return Status::invalid(element_path() + ": " + std::string(number) + " is out of range for " +
                           std::string(to_string(D)));
  }

  // The slow path: say why `value`, which the fast path could not read, is wrong.
  Status mismatch(od::value& value, od::json_type type) {
    constexpr od::json_type expected_type = D == DType::Bool    ? od::json_type::boolean
                                            : D == DType::Bytes ? od::json_type::string
                                                                : od::json_type::number;
    if (type != expected_type) {
      constexpr std::string_view expected = D == DType::Bool    ? "a boolean"
                                            : D == DType::Bytes ? "a string"
                                                                : "a number";
      return Status::invalid(element_path() + ": expected " + std::string(expected) + ", got " +
                             std::string(type_name(type)));
    }
    if constexpr (D == DType::Bool || D == DType::Bytes) {
      // The right type, yet unreadable: a malformed atom or string escape.
      if constexpr (D == DType::Bool) {
        return json_error(value.get_bool().error());
      } else {
        return json_error(value.get_string().error());
      }
    } else {
      const std::string_view token = trimmed_token(value);
      double d;
      const auto [end, errc] = std::from_chars(token.data(), token.data() + token.size(), d);
      const bool well_formed = end == token.data() + token.size() && token.front() != '+';
      if (well_formed && errc == std::errc::result_out_of_range) return out_of_range(token);
      if (!well_formed || errc != std::errc{} || value.get_double().error()) {
        return Status::invalid(element_path() + ": invalid number '" + std::string(token) + "'");
      }
      // A well-formed number that the integer getter refused: a fraction or exponent, or an
      // integer beyond 64 bits (or negative, for UINT64).
      if constexpr (kIsInteger<D>) {
        if (token.find_first_of(".eE") != std::string_view::npos) {
          return Status::invalid(element_path() + ": expected an integer, got " +
                                 std::string(token));
        }
      }
      return out_of_range(token);
    }
  }

  Storage<D>* data_;
  std::size_t count_;
  std::size_t input_;
  std::size_t index_ = 0;
  std::string number_;
};

// Decodes `array` into `count` elements at `data` (Storage<D> for the input's datatype), then
// checks that exactly `count` came. Never writes past `count`, whatever the array holds.
template <DType D>
Status decode_data_as(od::array& array, void* data, const Shape& shape, std::size_t input,
                      std::size_t count) {
  DataDecoder<D> decoder(static_cast<Storage<D>*>(data), count, input);
  if (Status status = decoder.decode(array, 0); !status) return status;
  if (decoder.decoded() != count) {
    return Status::invalid(input_path(input, "data") + ": shape " + to_string(shape) + " needs " +
                           std::to_string(count) + " elements, got " +
                           std::to_string(decoder.decoded()));
  }
  return {};
}

Status decode_data(od::array& array, DType dtype, void* data, const Shape& shape, std::size_t input,
                   std::size_t count) {
  switch (dtype) {
    case DType::Bool:
      return decode_data_as<DType::Bool>(array, data, shape, input, count);
    case DType::UInt8:
      return decode_data_as<DType::UInt8>(array, data, shape, input, count);
    case DType::UInt16:
      return decode_data_as<DType::UInt16>(array, data, shape, input, count);
    case DType::UInt32:
      return decode_data_as<DType::UInt32>(array, data, shape, input, count);
    case DType::UInt64:
      return decode_data_as<DType::UInt64>(array, data, shape, input, count);
    case DType::Int8:
      return decode_data_as<DType::Int8>(array, data, shape, input, count);
    case DType::Int16:
      return decode_data_as<DType::Int16>(array, data, shape, input, count);
    case DType::Int32:
      return decode_data_as<DType::Int32>(array, data, shape, input, count);
    case DType::Int64:
      return decode_data_as<DType::Int64>(array, data, shape, input, count);
    case DType::FP16:
      return decode_data_as<DType::FP16>(array, data, shape, input, count);
    case DType::FP32:
      return decode_data_as<DType::FP32>(array, data, shape, input, count);
    case DType::FP64:
      return decode_data_as<DType::FP64>(array, data, shape, input, count);
    case DType::Bytes:
      return decode_data_as<DType::Bytes>(array, data, shape, input, count);
  }
  return Status(Errc::internal, "unhandled datatype");
}

// ---- the request ---------------------------------------------------------------------------

// `path()` names the value in an error; it is called only then (no string per field read).
template <class Path>
Status decode_string(od::value& value, Path&& path, std::string_view& out) {
  if (value.get_string().get(out)) {
    od::json_type type;
    if (auto error = value.type().get(type)) return json_error(error);
    if (type == od::json_type::string) return json_error(value.get_string().error());
    return Status::invalid(std::string(path()) + ": expected a string, got " +
                           std::string(type_name(type)));
  }
  return {};
}

Status decode_parameters(od::value& value, std::string_view path, Parameters& out) {
  od::object object;
  if (value.get_object().get(object)) return wrong_type(std::string(path), "an object", value);
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return json_error(error);
    od::value v;
    if (auto error = field.value().get(v)) return json_error(error);
    od::json_type type;
    if (auto error = v.type().get(type)) return json_error(error);
    ParameterValue parameter;
    switch (type) {
      case od::json_type::boolean: {
        bool b;
        if (auto error = v.get_bool().get(b)) return json_error(error);
        parameter = b;
        break;
      }
      case od::json_type::number: {
        std::int64_t i;
        double d;
        if (!v.get_int64().get(i)) {
          parameter = i;
        } else if (auto error = v.get_double().get(d)) {
          return json_error(error);
        } else {
          parameter = d;
        }
        break;
      }
      case od::json_type::string: {
        std::string_view s;
        if (auto error = v.get_string().get(s)) return json_error(error);
        parameter = std::string(s);
        break;
      }
      default:
        return Status::invalid(std::string(path) + "." + std::string(key) +
                               ": expected a boolean, number or string, got " +
                               std::string(type_name(type)));
    }
    out.emplace_back(std::string(key), std::move(parameter));
  }
  return {};
}

// Reads the field `name` of the "parameters" object at `path` with read(value); every other
// field is skipped.
template <class Read>
Status read_parameter(od::value& value, const std::string& path, std::string_view name,
                      Read&& read) {
  od::object object;
  if (value.get_object().get(object)) return wrong_type(path, "an object", value);
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return json_error(error);
    od::value v;
    if (auto error = field.value().get(v)) return json_error(error);
    if (Status status = key == name ? read(v) : skip_value(v); !status) return status;
  }
  return {};
}

Status decode_shape(od::value& value, std::size_t input, Shape& shape) {
  const auto invalid = [&] {
    return Status::invalid(input_path(input, "shape") +
                           ": expected an array of non-negative integers");
  };
  od::array array;
  if (value.get_array().get(array)) return invalid();
  for (auto element : array) {
    od::value v;
    if (auto error = element.get(v)) return json_error(error);
    std::int64_t dim;
    if (v.get_int64().get(dim) || dim < 0) return invalid();
    shape.push_back(dim);
  }
  return {};
}

// Fields of one element of "inputs", as far as they have been read.
struct InputFields {
  std::string_view name;
  std::string_view datatype;
  Shape shape;
  bool has_name = false;
  bool has_datatype = false;
  bool has_shape = false;
  bool binary = false;  // the binary tensor extension: "parameters": {"binary_data_size": n}
  std::uint64_t binary_size = 0;
  bool has_data = false;
  od::json_type data_type = od::json_type::null;  // what "data" held; only an array is valid

  void clear() {
    name = {};
    datatype = {};
    shape.clear();  // keeps its capacity for the next input
    has_name = has_datatype = has_shape = binary = has_data = false;
    binary_size = 0;
  }
};

// What the two passes share, kept by the decoder so that a reused decoder allocates nothing for
// a request shaped like an earlier one. Indexed by model input (m) unless said otherwise.
struct RequestPlan {
  std::vector<std::int64_t> supplied_by;  // request index that supplied model input m; -1: none
  std::vector<std::size_t> model_input;   // by request index: the model input it supplies
  std::vector<Shape> shapes;              // validated shape of model input m
  std::vector<std::span<std::byte>> destinations;  // from the sink; empty for BYTES inputs
  InputFields fields;                              // of the input being read in pass 1
  // Binary tensor data, by request index: where the input's block starts in the bytes after
  // the JSON (kNotBinary: its data is JSON) and how long it is.
  static constexpr std::uint64_t kNotBinary = ~std::uint64_t{0};
  std::vector<std::uint64_t> binary_offset, binary_size;
  std::uint64_t binary_total = 0;
  std::vector<std::int8_t> output_binary;  // by model output: -1 not said, 0 JSON, 1 binary
};

// Allocates the request's own tensors: the destination of the overload without a sink.
class TensorSink final : public InputSink {
 public:
  TensorSink(const ModelMetadata& model, std::vector<Tensor>& tensors)
      : model_(model), tensors_(tensors) {}

  Status allocate(std::span<const Shape> shapes, const Parameters&,
                  std::span<std::span<std::byte>> destinations) override {
    for (std::size_t m = 0; m < shapes.size(); ++m) {
      if (model_.inputs[m].dtype == DType::Bytes) continue;
      // resize keeps the capacity of a reused request's tensor; every element is overwritten
      // by the decoder, or the request fails.
      tensors_[m].resize(model_.inputs[m].dtype, shapes[m]);
      destinations[m] = tensors_[m].bytes();
    }
    return {};
  }

 private:
  const ModelMetadata& model_;
  std::vector<Tensor>& tensors_;
};

// Pass 1 walks the whole document except the inputs' "data" arrays, which it only type-checks:
// it decodes id, parameters and outputs and validates every input's name, datatype and shape
// against the model, wherever each key comes. Then the sink allocates once. Pass 2 rewinds the
// document and decodes each "data" array straight into its destination.
class TwoPassInferDecoder {
 public:
  TwoPassInferDecoder(const ModelMetadata& model, std::size_t body_size,
                      std::span<const std::byte> binary, RequestPlan& plan, InferRequest& out,
                      InputSink& sink)
      : model_(model),
        body_size_(body_size),
        binary_(binary),
        plan_(plan),
        out_(out),
        sink_(sink) {}

  Status decode(od::document& doc) {
    plan_.output_binary.assign(model_.outputs.size(), -1);
    if (Status status = validate(doc); !status) return status;
    choose_binary_outputs();
    plan_.destinations.assign(model_.inputs.size(), {});
    if (Status status = sink_.allocate(plan_.shapes, out_.parameters, plan_.destinations);
        !status) {
      return status;
    }
    return decode_inputs_data(doc);
  }

 private:
  // ---- pass 1 ----

  Status validate(od::document& doc) {
    od::object root;
    if (auto error = doc.get_object().get(root)) {
      od::json_type type;
      if (doc.type().get(type) || type == od::json_type::object) return json_error(error);
      return Status::invalid("request body: expected a JSON object, got " +
                             std::string(type_name(type)));
    }
    bool has_id = false, has_parameters = false, has_inputs = false, has_outputs = false;
    for (auto field : root) {
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) return json_error(error);
      od::value value;
      if (auto error = field.value().get(value)) return json_error(error);
      Status status;
      if (key == "inputs") {
        if (has_inputs) return Status::invalid("inputs: duplicate key");
        has_inputs = true;
        status = validate_inputs(value);
      } else if (key == "outputs") {
        if (has_outputs) return Status::invalid("outputs: duplicate key");
        has_outputs = true;
        status = decode_outputs(value);
      } else if (key == "id") {
        if (has_id) return Status::invalid("id: duplicate key");
        has_id = true;
        std::string_view id;
        status = decode_string(value, [] { return "id"; }, id);
        out_.id.assign(id);
      } else if (key == "parameters") {
        if (has_parameters) return Status::invalid("parameters: duplicate key");
        has_parameters = true;
        status = decode_parameters(value, "parameters", out_.parameters);
      } else {
        status = skip_value(value);
      }
      if (!status) return status;
    }
    // The root object is done; anything but the end of the input after it is an error.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
      return json_error(simdjson::TRAILING_CONTENT);
    }
    if (!has_inputs) return Status::invalid("inputs: missing");
    return {};
  }

  Status validate_inputs(od::value& value) {
    od::array array;
    if (value.get_array().get(array)) return wrong_type("inputs", "an array", value);
    plan_.supplied_by.assign(model_.inputs.size(), -1);
    plan_.model_input.clear();
    plan_.shapes.resize(model_.inputs.size());
    plan_.binary_offset.clear();
    plan_.binary_size.clear();
    plan_.binary_total = 0;
    std::size_t index = 0;
    for (auto element : array) {
      od::value v;
      if (auto error = element.get(v)) return json_error(error);
      od::object object;
      if (v.get_object().get(object)) return wrong_type(input_path(index), "an object", v);
      if (Status status = validate_input(object, index); !status) return status;
      ++index;
    }
    for (std::size_t m = 0; m < model_.inputs.size(); ++m) {
      if (plan_.supplied_by[m] < 0) {
        return Status::invalid("inputs: missing input '" + model_.inputs[m].name + "'");
      }
    }
    if (plan_.binary_total != binary_.size()) {
      return Status::invalid("binary data: the request carries " + std::to_string(binary_.size()) +
                             " bytes after its JSON, but the inputs' binary_data_size add up to " +
                             std::to_string(plan_.binary_total));
    }
    return {};
  }

  // Reads the fields in the order they come; "data" is left for pass 2.
  Status validate_input(od::object& object, std::size_t index) {
    InputFields& fields = plan_.fields;
    fields.clear();
    for (auto field : object) {
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) return json_error(error);
      od::value value;
      if (auto error = field.value().get(value)) return json_error(error);
      Status status;
      if (key == "name") {
        fields.has_name = true;
        status = decode_string(value, [&] { return input_path(index, "name"); }, fields.name);
      } else if (key == "datatype") {
        fields.has_datatype = true;
        status =
            decode_string(value, [&] { return input_path(index, "datatype"); }, fields.datatype);
      } else if (key == "shape") {
        fields.has_shape = true;
        fields.shape.clear();
        status = decode_shape(value, index, fields.shape);
      } else if (key == "parameters") {
        const std::string path = input_path(index, "parameters");
        status = read_parameter(value, path, "binary_data_size", [&](od::value& v) -> Status {
          fields.binary = true;
          if (v.get_uint64().get(fields.binary_size)) {
            return wrong_type(path + ".binary_data_size", "a non-negative integer", v);
          }
          return {};
        });
      } else if (key == "data") {
        if (fields.has_data) return Status::invalid(input_path(index, "data") + ": duplicate key");
        fields.has_data = true;
        // Skipped unread: pass 2 decodes, and so checks, every element.
        if (auto error = value.type().get(fields.data_type)) return json_error(error);
      } else {
        status = skip_value(value);
      }
      if (!status) return status;
    }
    if (!fields.has_name) return Status::invalid(input_path(index, "name") + ": missing");
    if (!fields.has_datatype) return Status::invalid(input_path(index, "datatype") + ": missing");
    if (!fields.has_shape) return Status::invalid(input_path(index, "shape") + ": missing");
    if (fields.binary && fields.has_data) {
      return Status::invalid(input_path(index) +
                             ": has both data and parameters.binary_data_size (one or the other)");
    }
    if (!fields.binary && !fields.has_data) {
      return Status::invalid(input_path(index, "data") + ": missing");
    }
    const bool binary = fields.binary;
    const std::uint64_t binary_size = fields.binary_size;
    if (Status status = validate_against_model(index, fields); !status) return status;
    plan_.binary_offset.push_back(RequestPlan::kNotBinary);
    plan_.binary_size.push_back(0);
    if (binary) return place_binary(index, binary_size);
    if (fields.data_type != od::json_type::array) {
      return Status::invalid(input_path(index, "data") + ": expected an array, got " +
                             std::string(type_name(fields.data_type)));
    }
    return {};
  }

  // Checks a binary input's size against its shape and gives it the next block of the bytes
  // after the JSON.
  Status place_binary(std::size_t index, std::uint64_t size) {
    const std::string path = input_path(index, "parameters") + ".binary_data_size";
    if (binary_.empty() && size > 0) {
      return Status::invalid(path + ": binary tensor data needs the Inference-Header-Content-" +
                             "Length header (the JSON's length), with the data after the JSON");
    }
    const std::size_t m = plan_.model_input.back();
    const DType dtype = model_.inputs[m].dtype;
    const Shape& shape = plan_.shapes[m];
    const auto count = static_cast<std::uint64_t>(element_count(shape));
    if (dtype == DType::Bytes) {
      if (size < 4 * count) {
        return Status::invalid(path + ": " + std::to_string(size) + " bytes cannot hold " +
                               std::to_string(count) + " BYTES elements (4-byte length each)");
      }
    } else if (const std::uint64_t needed = count * element_size(dtype); size != needed) {
      return Status::invalid(path + ": " + std::to_string(size) + " bytes, but shape " +
                             to_string(shape) + " of " + std::string(to_string(dtype)) +
                             " needs " + std::to_string(needed));
    }
    if (size > binary_.size() - plan_.binary_total) {
      return Status::invalid(path + ": " + std::to_string(size) + " bytes from offset " +
                             std::to_string(plan_.binary_total) + " run past the " +
                             std::to_string(binary_.size()) +
                             " bytes the request carries after its JSON");
    }
    plan_.binary_offset.back() = plan_.binary_total;
    plan_.binary_size.back() = size;
    plan_.binary_total += size;
    return {};
  }

  // Matches the input to a model input and checks its datatype and shape; on success the
  // shape has moved to plan_.shapes[m].
  Status validate_against_model(std::size_t index, InputFields& fields) {
    std::size_t m = 0;
    while (m < model_.inputs.size() && model_.inputs[m].name != fields.name) ++m;
    if (m == model_.inputs.size()) {
      return Status::invalid(input_path(index, "name") + ": model '" + model_.name +
                             "' has no input '" + std::string(fields.name) + "'");
    }
    if (plan_.supplied_by[m] >= 0) {
      return Status::invalid(input_path(index, "name") + ": duplicate input '" +
                             std::string(fields.name) + "'");
    }
    plan_.supplied_by[m] = static_cast<std::int64_t>(index);
    plan_.model_input.push_back(m);
    const TensorSpec& spec = model_.inputs[m];

    std::int64_t count = 0;
    if (Status s = input_checks::check_input(model_, spec, index, fields.datatype, fields.shape,
                                             batch_, count);
        !s.ok()) {
      return s;
    }
    const Shape& shape = fields.shape;
    // Each element takes at least one byte plus a separator (binary data is checked exactly).
    if (!fields.binary && count > 0 && static_cast<std::uint64_t>(count) > body_size_ / 2 + 1) {
      return Status::invalid(input_path(index, "data") + ": shape " + to_string(shape) + " needs " +
                             std::to_string(count) + " elements, more than the request body holds");
    }
    plan_.shapes[m].swap(fields.shape);  // no copy; fields.shape is cleared before its next use
    return {};
  }

  Status decode_outputs(od::value& value) {
    od::array array;
    if (value.get_array().get(array)) return wrong_type("outputs", "an array", value);
    std::size_t index = 0;
    for (auto element : array) {
      od::value v;
      if (auto error = element.get(v)) return json_error(error);
      const std::string path = indexed("outputs", index);
      od::object object;
      if (v.get_object().get(object)) return wrong_type(path, "an object", v);
      std::string_view name;
      bool has_name = false;
      std::int8_t binary = -1;
      for (auto field : object) {
        std::string_view key;
        if (auto error = field.unescaped_key().get(key)) return json_error(error);
        od::value v;
        if (auto error = field.value().get(v)) return json_error(error);
        if (key == "parameters") {
          const Status status =
              read_parameter(v, path + ".parameters", "binary_data", [&](od::value& b) -> Status {
                bool flag = false;
                if (b.get_bool().get(flag)) {
                  return wrong_type(path + ".parameters.binary_data", "a boolean", b);
                }
                binary = flag ? 1 : 0;
                return {};
              });
          if (!status) return status;
          continue;
        }
        if (key != "name") {
          if (Status status = skip_value(v); !status) return status;
          continue;
        }
        if (Status status = decode_string(v, [&] { return path + ".name"; }, name); !status) {
          return status;
        }
        has_name = true;
      }
      if (!has_name) return Status::invalid(path + ".name: missing");
      std::size_t m = 0;
      while (m < model_.outputs.size() && model_.outputs[m].name != name) ++m;
      if (m == model_.outputs.size()) {
        return Status::invalid(path + ".name: model '" + model_.name + "' has no output '" +
                               std::string(name) + "'");
      }
      for (std::size_t previous : out_.requested_outputs) {
        if (previous == m) {
          return Status::invalid(path + ".name: duplicate output '" + std::string(name) + "'");
        }
      }
      out_.requested_outputs.push_back(m);
      plan_.output_binary[m] = binary;
      ++index;
    }
    return {};
  }

  // Each output is sent as binary data when its own "binary_data" says so, else when the
  // request's "binary_data_output" does.
  void choose_binary_outputs() {
    bool all = false;
    for (const auto& [key, value] : out_.parameters) {
      if (key == "binary_data_output" && std::holds_alternative<bool>(value)) {
        all = std::get<bool>(value);
      }
    }
    // Left empty (no allocation) when every output goes as JSON, the common case.
    bool any = all;
    for (std::int8_t own : plan_.output_binary) any = any || own == 1;
    if (!any) return;
    out_.binary_outputs.resize(model_.outputs.size());
    for (std::size_t m = 0; m < model_.outputs.size(); ++m) {
      const std::int8_t own = plan_.output_binary[m];
      out_.binary_outputs[m] = own >= 0 ? static_cast<std::uint8_t>(own) : all;
    }
  }

  // ---- pass 2 ----
  // Pass 1 accepted the document's structure, so only the first "inputs" key and each input's
  // first "data" key are left to find. Strings unescaped in pass 1 are gone after the rewind.

  Status decode_inputs_data(od::document& doc) {
    doc.rewind();
    od::object root;
    if (auto error = doc.get_object().get(root)) return json_error(error);
    for (auto field : root) {
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) return json_error(error);
      if (key != "inputs") continue;
      od::array inputs;
      if (auto error = field.value().get_array().get(inputs)) return json_error(error);
      std::size_t index = 0;
      for (auto element : inputs) {
        Status status;
        if (plan_.binary_offset[index] != RequestPlan::kNotBinary) {
          status = copy_binary(index);  // the element is skipped unread
        } else {
          od::object object;
          if (auto error = element.get_object().get(object)) return json_error(error);
          status = decode_input_data(object, index);
        }
        if (!status) return status;
        ++index;
      }
      return {};
    }
    return json_error(simdjson::NO_SUCH_FIELD);  // unreachable after pass 1
  }

  Status decode_input_data(od::object& object, std::size_t index) {
    for (auto field : object) {
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) return json_error(error);
      if (key != "data") continue;
      od::array array;
      if (auto error = field.value().get_array().get(array)) return json_error(error);
      const std::size_t m = plan_.model_input[index];
      const DType dtype = model_.inputs[m].dtype;
      const Shape& shape = plan_.shapes[m];
      const auto count = static_cast<std::size_t>(element_count(shape));
      void* data;
      if (dtype == DType::Bytes) {
        out_.inputs[m].resize(DType::Bytes, shape);
        data = out_.inputs[m].strings().data();
      } else {
        const std::span<std::byte> destination = plan_.destinations[m];
        assert(destination.size() == count * element_size(dtype) && "InputSink: wrong size");
        data = destination.data();
      }
      return decode_data(array, dtype, data, shape, index, count);
    }
    return json_error(simdjson::NO_SUCH_FIELD);  // unreachable after pass 1
  }

  // A binary input's block into its destination: raw elements (BOOL checked to be 0 or 1),
  // or BYTES elements each after a 4-byte little-endian length.
  Status copy_binary(std::size_t index) {
    const std::size_t m = plan_.model_input[index];
    const DType dtype = model_.inputs[m].dtype;
    const Shape& shape = plan_.shapes[m];
    const std::span<const std::byte> block =
        binary_.subspan(plan_.binary_offset[index], plan_.binary_size[index]);
    const std::string path = input_path(index);
    if (dtype == DType::Bytes) {
      out_.inputs[m].resize(DType::Bytes, shape);
      std::size_t at = 0;
      std::size_t k = 0;
      for (std::string& element : out_.inputs[m].strings()) {
        std::uint32_t length = 0;
        if (block.size() - at < 4) {
          return Status::invalid(path + ": binary BYTES element " + std::to_string(k) +
                                 ": no room for its 4-byte length");
        }
        std::memcpy(&length, block.data() + at, 4);  // little-endian, as x86 and Arm hosts
        at += 4;
        if (length > block.size() - at) {
          return Status::invalid(path + ": binary BYTES element " + std::to_string(k) +
                                 ": length " + std::to_string(length) + " runs past the input's " +
                                 std::to_string(block.size()) + " bytes");
        }
        element.assign(reinterpret_cast<const char*>(block.data() + at), length);
        at += length;
        ++k;
      }
      if (at != block.size()) {
        return Status::invalid(path + ": " + std::to_string(block.size() - at) +
                               " bytes left after its last BYTES element");
      }
      return {};
    }
    const std::span<std::byte> destination = plan_.destinations[m];
    assert(destination.size() == block.size() && "InputSink: wrong size");
    if (dtype == DType::Bool) {
      for (std::size_t k = 0; k < block.size(); ++k) {
        if (std::to_integer<unsigned>(block[k]) > 1) {
          return Status::invalid(path + ": binary BOOL element " + std::to_string(k) + " is " +
                                 std::to_string(std::to_integer<unsigned>(block[k])) +
                                 ", expected 0 or 1");
        }
      }
    }
    if (!block.empty()) std::memcpy(destination.data(), block.data(), block.size());
    return {};
  }

  const ModelMetadata& model_;
  std::size_t body_size_;
  std::span<const std::byte> binary_;
  RequestPlan& plan_;
  InferRequest& out_;
  InputSink& sink_;
  input_checks::BatchDimension batch_;
};

}  // namespace

struct OipDecoder::Parser {
  od::parser json;
  // Slow path only: a copy of a body that came without kJsonPadding readable bytes after it.
  std::vector<char> padded_copy;
  RequestPlan plan;

  Status decode(std::string_view body, std::size_t body_capacity, const ModelMetadata& model,
                InferRequest& out, InputSink& sink, std::span<const std::byte> binary) {
    out.id.clear();
    out.parameters.clear();
    out.requested_outputs.clear();
    out.binary_outputs.clear();

    const char* data = body.data();
    if (body_capacity < body.size() + kJsonPadding) {
      padded_copy.resize(body.size() + kJsonPadding);
      if (!body.empty()) std::memcpy(padded_copy.data(), body.data(), body.size());
      data = padded_copy.data();
      body_capacity = padded_copy.size();
    }
    od::document doc;
    if (auto error = json.iterate(data, body.size(), body_capacity).get(doc)) {
      return json_error(error);
    }
    TwoPassInferDecoder decoder(model, body.size(), binary, plan, out, sink);
    return decoder.decode(doc);
  }
};

OipDecoder::OipDecoder() : parser_(std::make_unique<Parser>()) {}
OipDecoder::~OipDecoder() = default;
OipDecoder::OipDecoder(OipDecoder&&) noexcept = default;
OipDecoder& OipDecoder::operator=(OipDecoder&&) noexcept = default;

Status OipDecoder::decode_infer(std::string_view body, std::size_t body_capacity,
                                const ModelMetadata& model, InferRequest& out,
                                std::span<const std::byte> binary) {
  out.inputs.resize(model.inputs.size());
  TensorSink sink(model, out.inputs);
  return parser_->decode(body, body_capacity, model, out, sink, binary);
}

Status OipDecoder::decode_infer(std::string_view body, std::size_t body_capacity,
                                const ModelMetadata& model, InferRequest& out, InputSink& sink,
                                std::span<const std::byte> binary) {
  // Numeric inputs go to the sink; out.inputs holds the BYTES ones (by model input, the
  // others empty), and nothing at all for a model without one (no allocation).
  const bool any_bytes = std::any_of(model.inputs.begin(), model.inputs.end(),
                                     [](const TensorSpec& spec) { return spec.dtype == DType::Bytes; });
  out.inputs.clear();
  if (any_bytes) out.inputs.resize(model.inputs.size());
  return parser_->decode(body, body_capacity, model, out, sink, binary);
}

}  // namespace coinfer
