#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <vector>

#include "coinfer/cache/semantic_cache.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/serving/cache_directives.hpp"

namespace coinfer {

class Endpoint;
class ModelRepository;

// The pipeline's cache stage: the shared SemanticCache, the embedding endpoint that turns a
// request's text into its vector (through that endpoint's batcher, on the compute threads,
// never on an I/O thread), and the cache's housekeeping thread (expiry, index rebuilds,
// snapshots). The only way into the cache for requests: GenerationEndpoint and Endpoint build
// a CacheKey, call lookup() (or lookup_exact()) before the model and store() after it.
class CacheStage {
 public:
  // From [cache]; `embedder` null: semantic lookups are off (exact only). `verifier` (a
  // cross-encoder endpoint, may be null) scores each semantic candidate against the request.
  CacheStage(const CacheConfig& config, Endpoint* embedder, Endpoint* verifier = nullptr);
  ~CacheStage();  // stops housekeeping and writes the last snapshot

  // The stage for `config`'s models, or null when none has a cache; restores the snapshot
  // (a missing one is fine, a bad one is logged and skipped). An embedding model that is not
  // served turns the semantic models to exact lookups, with a warning.
  static Status create(const Config& config, ModelRepository& repository,
                       std::unique_ptr<CacheStage>& out);

  cache::SemanticCache& cache() noexcept { return *cache_; }
  bool semantic() const noexcept { return embedder_ != nullptr; }

  // One request's state: what was found, and the text's vector (kept to store the answer).
  struct Lookup {
    bool hit = false;
    cache::CacheHit entry;
    float nearest = 0.0f;  // best similarity seen by the semantic lookup
    bool searched_vectors = false;
    std::vector<float> vector;
    // For the X-Cache headers; `stored`: the entry the answer went to (0: none).
    CacheOutcome outcome(std::uint64_t stored = 0) const;
  };

  // Exact lookup, then (mode semantic, key.text not empty) the text's embedding and a
  // similarity lookup. With directives.lookup false it only embeds (to store the answer). An
  // embedding that fails (a text over the embedder's length limit) leaves the request to
  // exact lookups; it never fails the request.
  boost::asio::awaitable<void> lookup(CacheMode mode, const cache::CacheKey& key,
                                      const CacheDirectives& directives, Lookup& out);
  // The exact lookup alone, without suspending: for endpoints whose inputs have no text to
  // embed (numeric tensors). A miss is counted as lookup()'s are.
  bool lookup_exact(const cache::CacheKey& key, const CacheDirectives& directives, Lookup& out);
  // Stores an answer (unless directives say no-store); its entry id, 0 when not stored.
  std::uint64_t store(const cache::CacheKey& key, const CacheDirectives& directives,
                      const Lookup& lookup, std::string payload);

 private:
  boost::asio::awaitable<bool> embed(std::string_view text, std::vector<float>& out);
  // The first of the candidates that the verifier scores at or above its bar, taken as the
  // hit; false when none is (or the verifier fails: no hit).
  boost::asio::awaitable<bool> verify(std::string_view text,
                                      std::vector<cache::CacheHit>& candidates, Lookup& out);

  Endpoint* embedder_;
  Endpoint* verifier_;
  float verifier_threshold_;
  std::size_t verifier_candidates_;
  std::unique_ptr<cache::SemanticCache> cache_;
  std::unique_ptr<cache::CacheMaintenance> maintenance_;
};

}  // namespace coinfer
