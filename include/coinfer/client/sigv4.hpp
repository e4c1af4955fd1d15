#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coinfer::client::sigv4 {

// AWS Signature Version 4 (HMAC-SHA256 over a canonical form of the request), as S3 and every
// other AWS API take it in the Authorization header.

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials (STS); sent as x-amz-security-token
};

struct Request {
  std::string_view method;  // "GET"
  // The path as sent, already percent-encoded (uri_encode(path, false)); S3 signs it as it
  // is, without encoding it twice.
  std::string_view path;
  // The query as sent (encoded names and values, '&'-separated, any order); empty: none. A
  // name without '=' signs as "name=".
  std::string_view query;
  // Every header to sign, host and x-amz-date included (x-amz-content-sha256 for S3); any
  // case and order. Values are trimmed and inner runs of spaces folded, as the form requires.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view payload_sha256;  // lowercase hex of the body's SHA-256
};

struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;range;x-amz-content-sha256;x-amz-date"
  std::string signature;       // lowercase hex
  std::string authorization;   // the Authorization header's value
};

// `amz_date` is the request's x-amz-date ("20150830T123600Z"); its first 8 characters date
// the credential scope.
Signature sign(const Request& request, const Credentials& credentials, std::string_view region,
               std::string_view service, std::string_view amz_date);

// RFC 3986 percent-encoding as SigV4 defines it: unreserved characters (A-Z a-z 0-9 - _ . ~)
// stay, '/' stays unless `encode_slash`, every other byte is %XX (uppercase hex).
std::string uri_encode(std::string_view text, bool encode_slash);
std::string sha256_hex(std::string_view bytes);
// "20150830T123600Z" (UTC).
std::string amz_date(std::chrono::system_clock::time_point time);

}  // namespace coinfer::client::sigv4
