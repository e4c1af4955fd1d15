#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace coinfer {

// Append-only JSON writing into a caller-owned, reused std::string. The caller writes the
// punctuation ({ } [ ] , :); these helpers write values.

// Longest text json_append_number can produce ("-2.2250738585072014e-308" is 24).
inline constexpr std::size_t kMaxJsonNumberChars = 32;

// `s` as a quoted JSON string. Control characters, '"' and '\\' are escaped; valid UTF-8 is
// copied as is; each byte that is not part of valid UTF-8 is written as \u00XX (its Latin-1
// reading), so the output is always valid JSON.
void json_append_string(std::string& out, std::string_view s);

// Arithmetic types other than bool (which is written with json_append_bool).
template <class T>
concept JsonNumber = (std::integral<T> && !std::same_as<T, bool>) || std::floating_point<T>;

// Integers and floating-point numbers via std::to_chars (shortest round-trip form for
// floating point); NaN and infinities, which JSON cannot express, as null. json_format_number
// writes at most kMaxJsonNumberChars bytes at `first` and returns the end. Floating point of
// magnitude 1e15 or more is written in scientific form: the shortest form of, say,
// -1.4757395258967641e20 is the integer -147573952589676410000, which JSON parsers that keep
// integers in 64 bits (simdjson, the server's own) refuse.
template <JsonNumber T>
char* json_format_number(char* first, T value) noexcept {
  if constexpr (std::floating_point<T>) {
    if (!std::isfinite(value)) {
      std::memcpy(first, "null", 4);
      return first + 4;
    }
    if (std::fabs(value) >= T(1e15)) {
      return std::to_chars(first, first + kMaxJsonNumberChars, value,
                           std::chars_format::scientific)
          .ptr;
    }
  }
  return std::to_chars(first, first + kMaxJsonNumberChars, value).ptr;
}

template <JsonNumber T>
void json_append_number(std::string& out, T value) {
  char buffer[kMaxJsonNumberChars];
  out.append(buffer, json_format_number(buffer, value));
}

inline void json_append_bool(std::string& out, bool value) {
  out += value ? "true" : "false";
}

}  // namespace coinfer
