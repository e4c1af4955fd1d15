#include "coinfer/net/http_message.hpp"

#include "coinfer/core/json_writer.hpp"

#include <algorithm>
#include <cctype>

namespace coinfer::net {
namespace {

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}


}  // namespace

std::string_view HttpRequest::header(std::string_view name) const noexcept {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return {};
}

std::string_view HttpRequest::param(std::string_view name) const noexcept {
  for (const auto& [key, value] : path_params) {
    if (key == name) return value;
  }
  return {};
}

void HttpResponse::error(int http_status, std::string_view message) {
  status = http_status;
  content_type = "application/json";
  body.clear();
  body += "{\"error\":";
  json_append_string(body, message);
  body += '}';
}

std::string_view to_string(Method method) noexcept {
  switch (method) {
    case Method::get:
      return "GET";
    case Method::head:
      return "HEAD";
    case Method::post:
      return "POST";
    case Method::put:
      return "PUT";
    case Method::delete_:
      return "DELETE";
    case Method::options:
      return "OPTIONS";
    case Method::patch:
      return "PATCH";
    case Method::other:
      break;
  }
  return "OTHER";
}

}  // namespace coinfer::net
