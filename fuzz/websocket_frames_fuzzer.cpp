// WebSocket frames on their own: after a valid upgrade to /v2/ws, the frames a client sends
// reach the real server's session (src/net/websocket_session.cpp, Beast's frame reader with
// the server's message limit) over a loopback connection, as in http_request; here every input
// gets past the handshake, so the fuzzer spends its time on frames.
//
// Input: frames, each described by
//   byte 0: FIN (bit 7), RSV1-3 (bits 4-6), opcode (bits 0-3), as on the wire;
//   byte 1: bit 7 set: sent unmasked (a client must mask: the server refuses); bits 5-6: the
//     length's form (0: 7 bits where it fits, 1: 16 bits, 2: 64 bits, 3: a length one larger
//     than the payload that follows, so the frame is cut short by the next one);
//   byte 2: the payload's length, then that many payload bytes (fewer at the end of the input).
// The payload is masked with a fixed key. The server must answer the upgrade with 101, then send
// only well-formed frames: unmasked, no RSV bits, known opcodes, control frames of at most 125
// bytes and never fragmented, data messages that are whole JSON texts (every /v2/ws reply is
// one), a close frame last with a valid code, and then close the connection.
#include <cstdint>
#include <string>
#include <string_view>

#include "loopback.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

namespace {

constexpr std::string_view kUpgrade =
    "GET /v2/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
constexpr std::uint8_t kMask[4] = {0x37, 0xfa, 0x21, 0x3d};

std::string frames_from(const std::uint8_t* data, std::size_t size) {
  std::string out(kUpgrade);
  std::size_t at = 0;
  while (at + 3 <= size) {
    const std::uint8_t head = data[at], shape = data[at + 1];
    std::size_t length = data[at + 2];
    at += 3;
    length = std::min(length, size - at);
    const bool masked = (shape & 0x80) == 0;
    const int form = (shape >> 5) & 3;
    const std::uint64_t declared = length + (form == 3 ? 1 : 0);
    out.push_back(static_cast<char>(head));
    const char mask_bit = masked ? static_cast<char>(0x80) : 0;
    if ((form == 0 || form == 3) && declared < 126) {
      out.push_back(static_cast<char>(mask_bit | static_cast<char>(declared)));
    } else if (form != 2) {
      out.push_back(static_cast<char>(mask_bit | 126));
      out.push_back(static_cast<char>(declared >> 8));
      out.push_back(static_cast<char>(declared & 0xff));
    } else {
      out.push_back(static_cast<char>(mask_bit | 127));
      for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(declared >> shift));
    }
    if (masked) out.append(reinterpret_cast<const char*>(kMask), 4);
    for (std::size_t i = 0; i < length; ++i) {
      const auto byte = data[at + i];
      out.push_back(static_cast<char>(masked ? byte ^ kMask[i % 4] : byte));
    }
    at += length;
  }
  return out;
}

// The server's frames after the 101: each well formed, data messages whole JSON texts, a close
// frame (if any) last.
void check_server_frames(std::string_view wire) {
  std::string message;
  bool in_message = false, closed = false;
  while (!wire.empty()) {
    check(!closed, "nothing follows the server's close frame");
    check(wire.size() >= 2, "a server frame is whole");
    const auto b0 = static_cast<std::uint8_t>(wire[0]), b1 = static_cast<std::uint8_t>(wire[1]);
    const bool fin = (b0 & 0x80) != 0;
    const int opcode = b0 & 0x0f;
    check((b0 & 0x70) == 0, "a server frame sets no RSV bit");
    check((b1 & 0x80) == 0, "a server frame is not masked");
    std::uint64_t length = b1 & 0x7f;
    std::size_t header = 2;
    if (length == 126 || length == 127) {
      const std::size_t bytes = length == 126 ? 2 : 8;
      check(wire.size() >= 2 + bytes, "a server frame's length is whole");
      length = 0;
      for (std::size_t i = 0; i < bytes; ++i) length = length << 8 | static_cast<std::uint8_t>(wire[2 + i]);
      header += bytes;
    }
    check(wire.size() - header >= length, "a server frame's payload is whole");
    const std::string_view payload = wire.substr(header, static_cast<std::size_t>(length));
    wire.remove_prefix(header + static_cast<std::size_t>(length));
    switch (opcode) {
      case 0x8:
        check(fin && length <= 125, "a close frame is whole and short");
        check(length == 0 || length >= 2, "a close frame has no or a whole code");
        if (length >= 2) {
          const int code = static_cast<std::uint8_t>(payload[0]) << 8 | static_cast<std::uint8_t>(payload[1]);
          // RFC 6455, 7.4: never below 1000, 1004-1006 or 1015, nor 1016-2999. (Beast echoes a
          // client's code of 3000 or more, also above 4999, which the RFC leaves undefined.)
          check(code >= 1000 && !(code >= 1004 && code <= 1006) && code != 1015 &&
                    !(code >= 1016 && code <= 2999),
                "a close frame's code may be sent");
        }
        closed = true;
        break;
      case 0x9:
      case 0xA:
        check(fin && length <= 125, "a ping or pong is whole and short");
        break;
      case 0x1:
      case 0x2:
        check(!in_message, "a new message starts after the last one ended");
        message.assign(payload);
        in_message = !fin;
        if (fin) check(fuzz::is_json(message), "a /v2/ws reply is JSON");
        break;
      case 0x0:
        check(in_message, "a continuation continues a message");
        message.append(payload);
        in_message = !fin;
        if (fin) check(fuzz::is_json(message), "a /v2/ws reply is JSON");
        break;
      default:
        fuzz::fail("a server frame has a known opcode");
    }
  }
  check(!in_message, "the server's last message is whole");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::Harness* harness = new fuzz::Harness;  // reachable: not a leak
  const std::string input = frames_from(data, size);
  const std::string answer = fuzz::exchange(*harness, input);
  fuzz::print_answer("answer", answer);
  check(answer.starts_with("HTTP/1.1 101 "), "the upgrade is answered with 101");
  const std::size_t end = answer.find("\r\n\r\n");
  check(end != std::string::npos, "the 101 response is whole");
  check_server_frames(std::string_view(answer).substr(end + 4));
  return 0;
}
