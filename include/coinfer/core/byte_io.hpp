#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace coinfer {

// Fixed-size values in host byte order (little-endian on every target coinfer builds for)
// appended to and read from byte strings: the response cache's snapshot and payload formats.
template <class T>
void append_raw(std::string& out, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Reads what append_raw wrote, front to back; every read checks what is left first.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  // False (and nothing read) when fewer than sizeof(T) bytes are left.
  template <class T>
  bool get(T& out) noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    if (left() < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return true;
  }
  // The next `n` bytes, as a view into the input; false when fewer are left.
  bool get_bytes(std::size_t n, std::string_view& out) noexcept {
    if (left() < n) return false;
    out = bytes_.substr(offset_, n);
    offset_ += n;
    return true;
  }
  std::size_t offset() const noexcept { return offset_; }
  std::size_t left() const noexcept { return bytes_.size() - offset_; }

 private:
  std::string_view bytes_;
  std::size_t offset_ = 0;
};

}  // namespace coinfer
