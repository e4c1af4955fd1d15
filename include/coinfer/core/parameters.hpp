#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace coinfer {

// A request's "parameters" value as the protocols allow it (OIP parameters, OpenAI options).
using ParameterValue = std::variant<bool, std::int64_t, double, std::string>;
using Parameters = std::vector<std::pair<std::string, ParameterValue>>;

// The value of parameter `name`, or null when the request has none.
inline const ParameterValue* find_parameter(const Parameters& parameters, std::string_view name) {
  for (const auto& [key, value] : parameters) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace coinfer
