#pragma once
// What the protocol adapters share about the response cache: a request's cache headers in,
// the X-Cache headers out.
#include <cstdint>

#include "coinfer/core/status.hpp"
#include "coinfer/net/http_message.hpp"
#include "coinfer/serving/cache_stage.hpp"

namespace coinfer {
class Tenant;
}  // namespace coinfer

namespace coinfer::cache_fields {

// X-Cache-Namespace (1..128 of letters, digits, '-', '_', '.', ':'; default "default"), put
// under "<tenant>/" when the request has a tenant, so tenants never share a namespace; and
// Cache-Control's no-cache (do not look up) and no-store (do not look up or store).
Status read_directives(const net::HttpRequest& req, CacheDirectives& out);

// The namespace `name` means for `req`'s caller (its tenant's prefix added); errors as above.
Status namespace_of(const net::HttpRequest& req, std::string_view name, std::string& out);
// The same for `tenant` (null: auth off), errors naming `field` (a /v2/ws message's
// "cache_namespace").
Status namespace_for(const Tenant* tenant, std::string_view field, std::string_view name,
                     std::string& out);
// Cache-Control's no-cache and no-store (a comma-separated list, case-insensitive) into `out`.
void apply_cache_control(std::string_view control, CacheDirectives& out);

// POST /v2/cache/feedback: {"entry": 17, "correct": false, "similarity"?: 0.93}.
struct Feedback {
  std::uint64_t entry = 0;
  bool correct = false;
  float similarity = -1.0f;  // absent: the entry's last semantic hit
};
Status parse_feedback(std::string_view body, Feedback& out);

// PUT /v2/cache/namespaces/{name}: {"similarity_threshold"?: 0.9, "target_error_rate"?: 0.01}
// (null or absent: the cache's).
Status parse_namespace_settings(std::string_view body, cache::NamespaceSettings& out);

// "hit-exact", "hit-semantic" or "miss", as the X-Cache header says it.
std::string_view outcome_name(const CacheOutcome& outcome) noexcept;

// X-Cache: hit-exact | hit-semantic | miss; X-Cache-Similarity (semantic lookups: the hit's,
// or on a miss the nearest entry's); X-Cache-Entry (a hit's entry, or the one just stored).
// Nothing when the request did not look up (a model without a cache).
void annotate(net::HttpResponse& res, const CacheOutcome& outcome);

}  // namespace coinfer::cache_fields
