#include "coinfer/client/sigv4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

namespace coinfer::client::sigv4 {
namespace {

using Digest = std::array<unsigned char, 32>;

Digest hmac(std::string_view key, std::string_view data) {
  Digest out{};
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &n);
  return out;
}

std::string_view view(const Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(n * 2, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A header value in canonical form: trimmed, inner runs of spaces as one.
std::string canonical_value(std::string_view value) {
  std::string out;
  bool space = false;
  for (const char c : trim(value)) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The query's parameters sorted by name, then value (byte order of the encoded forms).
std::string canonical_query(std::string_view query) {
  std::vector<std::pair<std::string_view, std::string_view>> params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t eq = param.find('=');
    params.emplace_back(param.substr(0, eq),
                        eq == std::string_view::npos ? std::string_view{} : param.substr(eq + 1));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out.append(name).append("=").append(value);
  }
  return out;
}

}  // namespace

std::string uri_encode(std::string_view text, bool encode_slash) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (c == '/' && !encode_slash)) {
      out += ch;
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d.data());
  return hex(d.data(), d.size());
}

std::string amz_date(std::chrono::system_clock::time_point time) {
  const std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[20];
  std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &tm);
  return out;
}

Signature sign(const Request& request, const Credentials& credentials, std::string_view region,
               std::string_view service, std::string_view amz_date) {
  Signature s;
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(request.headers.size());
  for (const auto& [name, value] : request.headers) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    headers.emplace_back(std::move(lower), canonical_value(value));
  }
  std::sort(headers.begin(), headers.end());
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers.append(name).append(":").append(value).append("\n");
    if (!s.signed_headers.empty()) s.signed_headers += ';';
    s.signed_headers += name;
  }
  s.canonical_request.append(request.method).append("\n");
  s.canonical_request.append(request.path.empty() ? std::string_view("/") : request.path).append("\n");
  s.canonical_request.append(canonical_query(request.query)).append("\n");
  s.canonical_request.append(canonical_headers).append("\n");
  s.canonical_request.append(s.signed_headers).append("\n");
  s.canonical_request.append(request.payload_sha256);

  const std::string_view date = amz_date.substr(0, 8);
  std::string scope;
  scope.append(date).append("/").append(region).append("/").append(service).append("/aws4_request");
  s.string_to_sign.append("AWS4-HMAC-SHA256\n").append(amz_date).append("\n").append(scope);
  s.string_to_sign.append("\n").append(sha256_hex(s.canonical_request));

  const Digest k_date = hmac("AWS4" + credentials.secret_access_key, date);
  const Digest k_region = hmac(view(k_date), region);
  const Digest k_service = hmac(view(k_region), service);
  const Digest k_signing = hmac(view(k_service), "aws4_request");
  const Digest signature = hmac(view(k_signing), s.string_to_sign);
  s.signature = hex(signature.data(), signature.size());
  s.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                    ", SignedHeaders=" + s.signed_headers + ", Signature=" + s.signature;
  return s;
}

}  // namespace coinfer::client::sigv4
