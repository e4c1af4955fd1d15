#include "coinfer/core/json_writer.hpp"

#include <cstdint>

namespace coinfer {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void append_unicode_escape(std::string& out, unsigned char byte) {
  const char escape[6] = {'\\', 'u', '0', '0', kHexDigits[byte >> 4], kHexDigits[byte & 0xf]};
  out.append(escape, sizeof escape);
}

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 if the bytes there are not
// one (stray continuation byte, truncated sequence, overlong form, surrogate, > U+10FFFF).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto continuation = [&](std::size_t k) { return (byte(k) & 0xc0u) == 0x80u; };
  const unsigned char lead = byte(0);
  const std::size_t left = s.size() - i;
  if (lead >= 0xc2 && lead <= 0xdf) {
    return left >= 2 && continuation(1) ? 2 : 0;
  }
  if (lead >= 0xe0 && lead <= 0xef) {
    if (left < 3 || !continuation(1) || !continuation(2)) return 0;
    if (lead == 0xe0 && byte(1) < 0xa0) return 0;   // overlong
    if (lead == 0xed && byte(1) >= 0xa0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    if (left < 4 || !continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (lead == 0xf0 && byte(1) < 0x90) return 0;   // overlong
    if (lead == 0xf4 && byte(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void json_append_string(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  std::size_t run_start = 0;  // s[run_start, i) is copied verbatim when the run ends
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const std::size_t n = utf8_sequence_length(s, i)) {
        i += n;
        continue;
      }
    }
    out.append(s.data() + run_start, i - run_start);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:  // other control characters and bytes that are not valid UTF-8
        append_unicode_escape(out, c);
        break;
    }
    ++i;
    run_start = i;
  }
  out.append(s.data() + run_start, s.size() - run_start);
  out += '"';
}

}  // namespace coinfer
