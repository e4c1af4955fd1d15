#include "coinfer/core/status.hpp"

namespace coinfer {

int http_status(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return 200;
    case Errc::invalid_argument:
      return 400;
    case Errc::not_found:
      return 404;
    case Errc::method_not_allowed:
      return 405;
    case Errc::payload_too_large:
      return 413;
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

}  // namespace coinfer
