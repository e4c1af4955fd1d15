#include "coinfer/core/access.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "coinfer/core/config.hpp"

namespace coinfer {

std::string sha256_hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * size, '0');
  for (unsigned i = 0; i < size; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  return hex;
}

TenantPermit& TenantPermit::operator=(TenantPermit&& other) noexcept {
  if (this != &other) {
    release();
    tenant_ = std::exchange(other.tenant_, nullptr);
  }
  return *this;
}

void TenantPermit::release() noexcept {
  if (tenant_) std::exchange(tenant_, nullptr)->release();
}

Tenant::Tenant(std::string name, std::vector<std::string> models, std::uint32_t max_concurrent,
               double requests_per_s, std::uint32_t burst)
    : name_(std::move(name)),
      models_(std::move(models)),
      max_concurrent_(max_concurrent),
      requests_per_s_(requests_per_s),
      burst_(burst > 0 ? burst : std::max(1.0, std::ceil(requests_per_s))),
      retry_after_s_(requests_per_s > 0 ? std::max(1, static_cast<int>(std::ceil(1 / requests_per_s)))
                                        : 1),
      tokens_(burst_),
      refilled_(std::chrono::steady_clock::now()) {}

bool Tenant::may_use(std::string_view model) const noexcept {
  return models_.empty() || std::find(models_.begin(), models_.end(), model) != models_.end();
}

Status Tenant::forbidden(std::string_view model) const {
  return {Errc::forbidden,
          "the API key of tenant '" + name_ + "' may not use model '" + std::string(model) + "'"};
}

Status Tenant::admit(TenantPermit& permit) const {
  permit.release();
  if (requests_per_s_ > 0) {
    std::lock_guard lock(bucket_mutex_);
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - refilled_).count();
    refilled_ = now;
    tokens_ = std::min(burst_, tokens_ + elapsed * requests_per_s_);
    if (tokens_ < 1) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", requests_per_s_);  // 0.5 stays 0.5
      return {Errc::too_many_requests,
              "rate limit of tenant '" + name_ + "' reached (" + rate + " requests/s)"};
    }
    tokens_ -= 1;
  }
  const std::uint32_t before = in_flight_.fetch_add(1, std::memory_order_acq_rel);
  if (max_concurrent_ > 0 && before >= max_concurrent_) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return {Errc::too_many_requests, "concurrency limit of tenant '" + name_ + "' reached (" +
                                         std::to_string(max_concurrent_) +
                                         " requests in flight)"};
  }
  permit.tenant_ = this;
  return {};
}

Status AccessControl::configure(const AuthConfig& config) {
  tenants_.clear();
  by_digest_.clear();
  for (const TenantConfig& t : config.tenants) {
    auto tenant = std::make_unique<Tenant>(t.name, t.models, t.max_concurrent, t.requests_per_s,
                                           t.burst);
    if (!by_digest_.emplace(t.key_sha256, tenant.get()).second) {
      return Status::invalid("auth.tenants." + t.name + ": same key as another tenant");
    }
    tenants_.push_back(std::move(tenant));
  }
  public_paths_ = config.public_paths;
  return {};
}

bool AccessControl::is_public(std::string_view path) const noexcept {
  return std::find(public_paths_.begin(), public_paths_.end(), path) != public_paths_.end();
}

Status AccessControl::authenticate(std::string_view authorization, const Tenant*& out) const {
  out = nullptr;
  if (authorization.empty()) {
    return {Errc::unauthenticated, "missing API key: send the header Authorization: Bearer <key>"};
  }
  // RFC 9110: the scheme is case-insensitive, one or more spaces before the credential.
  static constexpr std::string_view kScheme = "bearer";
  const bool bearer =
      authorization.size() > kScheme.size() &&
      std::equal(kScheme.begin(), kScheme.end(), authorization.begin(),
                 [](char a, char b) { return a == (b | 0x20); }) &&
      authorization[kScheme.size()] == ' ';
  if (!bearer) {
    return {Errc::unauthenticated, "Authorization: expected the Bearer scheme (Bearer <key>)"};
  }
  std::string_view key = authorization.substr(kScheme.size());
  while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
  const auto found = by_digest_.find(sha256_hex(key));
  if (key.empty() || found == by_digest_.end()) {
    return {Errc::unauthenticated, "invalid API key"};
  }
  out = found->second;
  return {};
}

}  // namespace coinfer
