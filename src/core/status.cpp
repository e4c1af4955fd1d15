#include "coinfer/core/status.hpp"

namespace coinfer {

int http_status(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return 200;
    case Errc::invalid_argument:
      return 400;
    case Errc::unauthenticated:
      return 401;
    case Errc::forbidden:
      return 403;
    case Errc::not_found:
      return 404;
    case Errc::method_not_allowed:
      return 405;
    case Errc::payload_too_large:
      return 413;
    case Errc::too_many_requests:
      return 429;
    case Errc::headers_too_large:
      return 431;
    case Errc::unavailable:
      return 503;
    case Errc::deadline_exceeded:
      return 504;
    case Errc::cancelled:
      return 499;
    case Errc::internal:
      return 500;
  }
  return 500;
}

Errc errc_from_http_status(int status) noexcept {
  switch (status) {
    case 400:
      return Errc::invalid_argument;
    case 401:
      return Errc::unauthenticated;
    case 403:
      return Errc::forbidden;
    case 404:
      return Errc::not_found;
    case 405:
      return Errc::method_not_allowed;
    case 413:
      return Errc::payload_too_large;
    case 429:
      return Errc::too_many_requests;
    case 431:
      return Errc::headers_too_large;
    case 503:
      return Errc::unavailable;
    case 504:
      return Errc::deadline_exceeded;
    default:
      return status >= 400 && status < 500 ? Errc::invalid_argument : Errc::internal;
  }
}

}  // namespace coinfer
