#include "coinfer/models/model_kind.hpp"

#include <sstream>

namespace coinfer {

const ParameterValue* ModelOptions::take(std::string_view key) {
  seen_.emplace(key);
  return status_.ok() ? find_parameter(config_.options, key) : nullptr;
}

void ModelOptions::fail(std::string_view key, const std::string& message) {
  if (status_.ok()) {
    status_ = Status::invalid("models." + config_.name + "." + std::string(key) + ": " + message);
  }
}

void ModelOptions::integer(std::string_view key, std::int64_t& field, std::int64_t min,
                           std::int64_t max) {
  const ParameterValue* value = take(key);
  if (!value) return;
  const auto* number = std::get_if<std::int64_t>(value);
  if (!number) return fail(key, "expected an integer");
  if (*number < min || *number > max) {
    return fail(key, "must be within " + std::to_string(min) + ".." + std::to_string(max));
  }
  field = *number;
}

void ModelOptions::number(std::string_view key, double& field, double min, double max) {
  const ParameterValue* value = take(key);
  if (!value) return;
  double number = 0;
  if (const auto* real = std::get_if<double>(value)) {
    number = *real;
  } else if (const auto* integer = std::get_if<std::int64_t>(value)) {
    number = static_cast<double>(*integer);
  } else {
    return fail(key, "expected a number");
  }
  if (!(number >= min && number <= max)) {  // NaN fails too
    std::ostringstream range;
    range << "must be within " << min << ".." << max;
    return fail(key, range.str());
  }
  field = number;
}

void ModelOptions::boolean(std::string_view key, bool& field) {
  const ParameterValue* value = take(key);
  if (!value) return;
  const auto* flag = std::get_if<bool>(value);
  if (!flag) return fail(key, "expected true or false");
  field = *flag;
}

void ModelOptions::string(std::string_view key, std::string& field) {
  const ParameterValue* value = take(key);
  if (!value) return;
  const auto* text = std::get_if<std::string>(value);
  if (!text) return fail(key, "expected a string");
  field = *text;
}

void ModelOptions::path(std::string_view key, std::string& field) {
  std::string text;
  string(key, text);
  if (text.empty()) return;
  std::filesystem::path p(text);
  if (p.is_relative() && !config_.base_dir.empty()) p = std::filesystem::path(config_.base_dir) / p;
  field = p.lexically_normal().string();
}

Status ModelOptions::finish() {
  if (!status_.ok()) return status_;
  for (const auto& [key, value] : config_.options) {
    if (!seen_.contains(key)) {
      return Status::invalid("models." + config_.name + "." + key + ": unknown key for kind '" +
                             config_.kind + "'");
    }
  }
  return {};
}

}  // namespace coinfer
