#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace coinfer {

// Element types of the Open Inference Protocol v2 (names as on the wire).
enum class DType : std::uint8_t {
  Bool,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Int8,
  Int16,
  Int32,
  Int64,
  FP16,
  FP32,
  FP64,
  Bytes,
};

// "FP32", "INT64", ... exactly as the protocol spells them.
std::string_view to_string(DType dtype) noexcept;
std::optional<DType> parse_dtype(std::string_view name) noexcept;

// Bytes per element; 0 for Bytes, whose elements have variable length.
std::size_t element_size(DType dtype) noexcept;

// Maps a C++ element type to its DType.
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<std::uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<std::uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<std::uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<std::int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<std::int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<float>() { return DType::FP32; }
template <> constexpr DType dtype_of<double>() { return DType::FP64; }

}  // namespace coinfer
