// The HTTP request reader: the real HttpServer (src/net/http_server.cpp: Beast's parser with
// the server's header and body limits, the session loop, routing, the OIP and OpenAI handlers,
// WebSocket upgrades) over a loopback connection, all on the fuzzer's thread.
//
// Input: the bytes a client sends on one connection (one request, several pipelined, an
// upgrade followed by masked WebSocket frames, or garbage). They are written, the server runs
// until it has nothing left to do with them, then the client half-closes and reads until the
// server closes. The server must close every connection once its peer has gone, answer only with
// HTTP responses, and send JSON where it says application/json.
#include <boost/beast/http.hpp>

#include "loopback.hpp"

using namespace coinfer;
using coinfer::fuzz::check;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

// The first response must be a whole HTTP response; its body JSON when it says so.
void check_first_response(std::string_view answer, bool head_request) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.header_limit(1 << 20);
  parser.body_limit(1 << 26);
  parser.skip(head_request);
  boost::beast::error_code ec;
  parser.put(asio::buffer(answer.data(), answer.size()), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec) fuzz::fail("the server's answer is not an HTTP response: " + ec.message());
  const auto& response = parser.get();
  if (response.result() == http::status::switching_protocols || head_request) return;
  if (response[http::field::content_type] == "application/json") {
    check(fuzz::is_json(response.body()), "an application/json body is JSON");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::Harness* harness = new fuzz::Harness;  // reachable: not a leak
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string answer = fuzz::exchange(*harness, input);
  fuzz::print_answer("answer", answer);
  if (!answer.empty()) {
    check(answer.starts_with("HTTP/1.1 ") || answer.starts_with("HTTP/1.0 "),
          "the server answers with HTTP responses");
    check_first_response(answer, input.starts_with("HEAD "));
  }
  return 0;
}
