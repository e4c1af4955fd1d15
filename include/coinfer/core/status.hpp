#pragma once

#include <string>
#include <utility>

namespace coinfer {

// What went wrong, in terms a client can act on. Each maps to one HTTP status.
enum class Errc {
  ok,
  invalid_argument,    // 400: malformed body, input not matching the model
  unauthenticated,     // 401: no API key, or one the server does not know
  forbidden,           // 403: the key may not use this model
  not_found,           // 404: unknown model, version or route
  method_not_allowed,  // 405
  payload_too_large,   // 413
  too_many_requests,   // 429: the key's rate or concurrency limit
  headers_too_large,   // 431
  unavailable,         // 503: queue full, model not ready
  deadline_exceeded,   // 504: request expired before compute
  cancelled,           // client went away; nothing is sent
  internal,            // 500: a bug
};

int http_status(Errc code) noexcept;
// The inverse, for clients: the Errc a server meant by an HTTP status (>= 400).
Errc errc_from_http_status(int status) noexcept;

// Errors are values on hot paths: a Status is either ok or a code plus a message that names
// what was wrong and where ("inputs[0].datatype: expected FP32, got INT8").
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status invalid(std::string message) { return {Errc::invalid_argument, std::move(message)}; }
  static Status not_found(std::string message) { return {Errc::not_found, std::move(message)}; }

  bool ok() const noexcept { return code_ == Errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  Errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  Errc code_ = Errc::ok;
  std::string message_;
};

}  // namespace coinfer
