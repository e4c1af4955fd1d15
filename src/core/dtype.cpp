#include "coinfer/core/dtype.hpp"

#include <array>
#include <utility>

namespace coinfer {
namespace {

constexpr std::array<std::pair<DType, std::string_view>, 13> kNames{{
    {DType::Bool, "BOOL"},
    {DType::UInt8, "UINT8"},
    {DType::UInt16, "UINT16"},
    {DType::UInt32, "UINT32"},
    {DType::UInt64, "UINT64"},
    {DType::Int8, "INT8"},
    {DType::Int16, "INT16"},
    {DType::Int32, "INT32"},
    {DType::Int64, "INT64"},
    {DType::FP16, "FP16"},
    {DType::FP32, "FP32"},
    {DType::FP64, "FP64"},
    {DType::Bytes, "BYTES"},
}};

}  // namespace

std::string_view to_string(DType dtype) noexcept { return kNames[static_cast<std::size_t>(dtype)].second; }

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const auto& [dtype, text] : kNames) {
    if (text == name) return dtype;
  }
  return std::nullopt;
}

std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
      return 1;
    case DType::UInt16:
    case DType::Int16:
    case DType::FP16:
      return 2;
    case DType::UInt32:
    case DType::Int32:
    case DType::FP32:
      return 4;
    case DType::UInt64:
    case DType::Int64:
    case DType::FP64:
      return 8;
    case DType::Bytes:
      return 0;
  }
  return 0;
}

}  // namespace coinfer
