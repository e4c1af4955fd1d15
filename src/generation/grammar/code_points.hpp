#pragma once
// Code-point sets for the grammar sources (regex and GBNF classes) and UTF-8 decoding of
// their text.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace coinfer::generation::grammar {

using CodePointRanges = std::vector<std::pair<char32_t, char32_t>>;
constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Sorted, merged.
inline void normalize(CodePointRanges& r) {
  std::ranges::sort(r);
  CodePointRanges out;
  for (const auto& [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  r = std::move(out);
}

inline CodePointRanges complement(CodePointRanges r) {
  normalize(r);
  CodePointRanges out;
  char32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

// Removes [lo, hi] from the ranges.
inline void subtract(CodePointRanges& r, char32_t lo, char32_t hi) {
  CodePointRanges out;
  for (const auto& [a, b] : r) {
    if (b < lo || a > hi) {
      out.emplace_back(a, b);
      continue;
    }
    if (a < lo) out.emplace_back(a, lo - 1);
    if (b > hi) out.emplace_back(hi + 1, b);
  }
  r = std::move(out);
}

// \d, \w, \s as ECMAScript defines them (ASCII digits and word characters; Unicode spaces).
inline CodePointRanges digit_class() { return {{'0', '9'}}; }
inline CodePointRanges word_class() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
inline CodePointRanges space_class() {
  return {{'\t', '\r'}, {' ', ' '},       {0xA0, 0xA0},   {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}

// The code point at text[i] (advancing i); false on invalid UTF-8.
inline bool next_code_point(std::string_view text, std::size_t& i, char32_t& out) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  int length = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
  if (length == 0 || i + static_cast<std::size_t>(length) > text.size()) return false;
  char32_t c = length == 1 ? b0 : b0 & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) return false;
    c = c << 6 | (b & 0x3F);
  }
  static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[length] || c > kMaxCodePoint || (c >= 0xD800 && c <= 0xDFFF)) return false;
  i += static_cast<std::size_t>(length);
  out = c;
  return true;
}

// The code point written as `digits` hex digits at text[i], advancing i past them; null, or
// what is wrong with the escape.
inline const char* read_hex_escape(std::string_view text, std::size_t& i, std::size_t digits,
                                   char32_t& out) {
  if (i + digits > text.size()) return "a short hex escape";
  std::uint32_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + i + digits, value, 16);
  if (ec != std::errc() || ptr != text.data() + i + digits) return "a bad hex escape";
  if (value > kMaxCodePoint || (value >= 0xD800 && value <= 0xDFFF)) {
    return "an escape outside Unicode scalar values";
  }
  i += digits;
  out = value;
  return nullptr;
}

inline void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace coinfer::generation::grammar
