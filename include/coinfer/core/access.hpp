#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer {

struct AuthConfig;

// The lowercase hex SHA-256 of `text`: how API keys are stored and compared.
std::string sha256_hex(std::string_view text);

class Tenant;

// One request's hold on its tenant's concurrency limit, released when destroyed.
class TenantPermit {
 public:
  TenantPermit() = default;
  TenantPermit(TenantPermit&& other) noexcept : tenant_(std::exchange(other.tenant_, nullptr)) {}
  TenantPermit& operator=(TenantPermit&& other) noexcept;
  TenantPermit(const TenantPermit&) = delete;
  TenantPermit& operator=(const TenantPermit&) = delete;
  ~TenantPermit() { release(); }
  void release() noexcept;

 private:
  friend class Tenant;
  const Tenant* tenant_ = nullptr;
};

// Who a request comes from: the tenant its API key belongs to, with what the key may do.
// Its name is the namespace of everything per tenant (a cache's entries, logs, metrics).
// Thread-safe: admit() and the permits it hands out may run on any thread.
class Tenant {
 public:
  Tenant(std::string name, std::vector<std::string> models, std::uint32_t max_concurrent,
         double requests_per_s, std::uint32_t burst);

  const std::string& name() const noexcept { return name_; }
  // Whether the key may use `model` (every model when its config lists none).
  bool may_use(std::string_view model) const noexcept;
  // A Status for a model it may not use (Errc::forbidden, 403), naming both.
  Status forbidden(std::string_view model) const;

  // One request begins: takes a token from the rate bucket (requests_per_s, burst) and a
  // concurrency slot (max_concurrent). On success `permit` holds the slot; otherwise
  // Errc::too_many_requests (429) naming the limit, and retry_after_s() says when to retry.
  Status admit(TenantPermit& permit) const;
  // Seconds a client refused by admit() should wait: one token's worth of the rate, at least 1.
  int retry_after_s() const noexcept { return retry_after_s_; }
  std::uint32_t in_flight() const noexcept { return in_flight_.load(std::memory_order_relaxed); }

 private:
  friend class TenantPermit;
  void release() const noexcept { in_flight_.fetch_sub(1, std::memory_order_acq_rel); }

  std::string name_;
  std::vector<std::string> models_;  // empty: all
  std::uint32_t max_concurrent_;     // 0: no limit
  double requests_per_s_;            // 0: no limit
  double burst_;
  int retry_after_s_;
  mutable std::atomic<std::uint32_t> in_flight_{0};
  mutable std::mutex bucket_mutex_;
  mutable double tokens_;
  mutable std::chrono::steady_clock::time_point refilled_;
};

// API keys (`Authorization: Bearer <key>`) → tenants, from [auth]. Without tenants in the
// config every request is let through with no tenant (auth off). Keys are held only as
// SHA-256 digests; a key is looked up by its digest, so comparison time says nothing about
// how much of a guess was right.
class AccessControl {
 public:
  Status configure(const AuthConfig& config);
  bool enabled() const noexcept { return !tenants_.empty(); }

  // Paths anyone may call without a key (health probes, metrics): [auth] public_paths.
  bool is_public(std::string_view path) const noexcept;
  // The tenant of an `Authorization` header value, or Errc::unauthenticated (401) saying what
  // was wrong: no header, not a Bearer credential, or an unknown key (never echoed).
  Status authenticate(std::string_view authorization, const Tenant*& out) const;

 private:
  std::vector<std::unique_ptr<Tenant>> tenants_;
  std::unordered_map<std::string, const Tenant*> by_digest_;
  std::vector<std::string> public_paths_;
};

}  // namespace coinfer
