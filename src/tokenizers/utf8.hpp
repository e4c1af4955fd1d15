#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.
namespace coinfer::utf8 {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

inline bool is_continuation(unsigned char byte) noexcept {
  return (byte & 0xC0) == 0x80;
}

// Decodes the code point at text[at]; returns its length in bytes, or 0 if the bytes there are
// not valid UTF-8.
inline std::size_t decode(std::string_view text, std::size_t at, char32_t& cp) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const std::size_t left = text.size() - at;
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if (b0 < 0xC2) return 0;  // a continuation byte, or an overlong two-byte form
  if (b0 < 0xE0) {
    if (left < 2 || !is_continuation(byte(1))) return 0;
    cp = (char32_t(b0 & 0x1F) << 6) | (byte(1) & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    if (left < 3) return 0;
    const unsigned char b1 = byte(1);
    const unsigned char low = b0 == 0xE0 ? 0xA0 : 0x80;   // no overlongs
    const unsigned char high = b0 == 0xED ? 0x9F : 0xBF;  // no surrogates
    if (b1 < low || b1 > high || !is_continuation(byte(2))) return 0;
    cp = (char32_t(b0 & 0x0F) << 12) | (char32_t(b1 & 0x3F) << 6) | (byte(2) & 0x3F);
    return 3;
  }
  if (b0 < 0xF5) {
    if (left < 4) return 0;
    const unsigned char b1 = byte(1);
    const unsigned char low = b0 == 0xF0 ? 0x90 : 0x80;   // no overlongs
    const unsigned char high = b0 == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    if (b1 < low || b1 > high || !is_continuation(byte(2)) || !is_continuation(byte(3))) return 0;
    cp = (char32_t(b0 & 0x07) << 18) | (char32_t(b1 & 0x3F) << 12) |
         (char32_t(byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
    return 4;
  }
  return 0;
}

// The byte offset of the first invalid sequence in `text`, or npos if it is all valid UTF-8.
inline std::size_t find_invalid(std::string_view text) noexcept {
  std::size_t at = 0;
  while (at < text.size()) {
    // Eight ASCII bytes at a time: the common case for English text.
    while (at + 8 <= text.size()) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        word |= std::uint64_t(static_cast<unsigned char>(text[at + i])) << (8 * i);
      }
      if (word & 0x8080808080808080ull) break;
      at += 8;
    }
    if (at == text.size()) break;
    char32_t cp;
    const std::size_t length = decode(text, at, cp);
    if (length == 0) return at;
    at += length;
  }
  return npos;
}

inline void append(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    const char bytes[2] = {static_cast<char>(0xC0 | (cp >> 6)),
                           static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(bytes, 2);
  } else if (cp < 0x10000) {
    const char bytes[3] = {static_cast<char>(0xE0 | (cp >> 12)),
                           static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                           static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(bytes, 3);
  } else {
    const char bytes[4] = {
        static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
        static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(bytes, 4);
  }
}

// Code points in `text`, counting each byte that starts one (text is valid UTF-8).
inline std::size_t length(std::string_view text) noexcept {
  std::size_t count = 0;
  for (char c : text) count += !is_continuation(static_cast<unsigned char>(c));
  return count;
}

}  // namespace coinfer::utf8
