#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "coinfer/cache/vector_index.hpp"
#include "coinfer/core/metrics.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer::cache {

struct CacheOptions {
  std::size_t max_entries = 100'000;
  std::size_t max_bytes = 256 * 1024 * 1024;  // payloads, keys, vectors and bookkeeping
  std::chrono::milliseconds ttl{3'600'000};   // 0: entries never expire
  int dimension = 384;                        // of the vectors (the embedding model's)
  float similarity_threshold = 0.86f;         // cosine at or above: a semantic hit
  bool guards = true;                         // agreement checks (agreement.hpp) on candidates
  std::size_t candidates = 8;                 // nearest entries a lookup considers
  IndexOptions index;
  // What made the vectors ("minilm:1"): a snapshot written with another is skipped.
  std::string embedder;
};

// What identifies a cached answer. Entries of different (ns, scope) are in different
// partitions, each with its own vector index, so a lookup cannot reach another namespace's
// (or another model's, or other parameters') entries: isolation by construction, not by a
// filter.
struct CacheKey {
  std::string_view ns;     // a tenant's or a client's namespace (X-Cache-Namespace)
  std::string_view scope;  // model, version, route, every parameter that changes the output,
                           // and the conversation the text is asked in
  std::string_view text;   // the normalized request text: exact key, and what the vector embeds
};

enum class HitKind { exact, semantic };

struct CacheHit {
  std::uint64_t id = 0;
  HitKind kind = HitKind::exact;
  float similarity = 1.0f;
  std::shared_ptr<const std::string> payload;
};

// docs/METRICS.md: coinfer_cache_*.
struct CacheMetrics {
  CacheMetrics();
  Counter exact_hits;
  Counter semantic_hits;
  Counter misses;  // counted by the caller, once per request that found nothing
  Counter inserts;
  Counter evictions;         // entry or byte limit (LRU)
  Counter expirations;       // TTL
  Counter invalidations;     // DELETE by id or namespace
  Counter guard_rejections;  // candidates above the threshold that the guards refused
  Histogram lookup_seconds;  // one exact or semantic lookup, embedding excluded
  Histogram nearest_similarity;
};

// The response cache: every entry has an exact key, and entries inserted with a vector are
// also found by similarity. One store for both, so an entry's payload, key and vector are
// inserted, evicted and invalidated together: no stale vector outlives its answer.
//
// Threads: lookups take a shared lock and run in parallel; inserts, evictions and
// invalidations take it exclusively, briefly (O(dimension) index updates). An index rebuild
// (flat -> IVF, or a retrain) builds off-lock from a copy and replays the writes made
// meanwhile. LRU is approximate: a hit stamps the entry's last use without a write lock, and
// eviction gives a stamped entry at the tail a second chance (moves it to the head).
class SemanticCache {
 public:
  explicit SemanticCache(CacheOptions options);
  ~SemanticCache();
  SemanticCache(const SemanticCache&) = delete;
  SemanticCache& operator=(const SemanticCache&) = delete;

  const CacheOptions& options() const noexcept { return options_; }
  CacheMetrics& metrics() noexcept { return metrics_; }
  const CacheMetrics& metrics() const noexcept { return metrics_; }

  bool lookup_exact(const CacheKey& key, CacheHit& hit);
  // The nearest entries of key's partition whose similarity to `vector` (unit length) is at
  // least the threshold, nearest first; the first whose text agrees with key.text (guards)
  // is the hit. `nearest`, when given, gets the best similarity seen (0 when none).
  bool lookup(const CacheKey& key, std::span<const float> vector, CacheHit& hit,
              float* nearest = nullptr);
  // Stores `payload` under `key` (replacing an entry with the same key) and, unless
  // `vector` is empty, its vector; evicts least recently used entries past the limits.
  // Returns the entry's id (ids start at 1), or 0 when the entry alone exceeds max_bytes.
  std::uint64_t insert(const CacheKey& key, std::span<const float> vector, std::string payload);

  // Removes one entry; with a non-empty `ns_prefix` only when its namespace starts with it
  // (a tenant removes only its own). Whether one was removed.
  bool erase(std::uint64_t id, std::string_view ns_prefix = {});
  // Removes every entry of namespace `ns`; how many.
  std::size_t erase_namespace(std::string_view ns);
  // Removes the entries whose TTL has passed; how many. (A lookup never returns one anyway.)
  std::size_t expire();
  // Rebuilds the vector indexes that want it (VectorIndex::wants_rebuild); how many.
  std::size_t rebuild_indexes();

  // Snapshot: written to a temporary file, flushed and renamed over `path`, so a crash leaves
  // the old snapshot or the new one. load() replaces nothing on error: a truncated, corrupt or
  // foreign file (other format version, dimension or embedder) is an error naming why.
  Status save(const std::filesystem::path& path) const;
  Status load(const std::filesystem::path& path);
  // load() of a snapshot's bytes; `where` prefixes the errors.
  Status restore(std::string_view snapshot, std::string_view where = "cache snapshot: ");

  struct Stats {
    std::size_t entries = 0;
    std::size_t bytes = 0;
    std::size_t vectors = 0;
    std::size_t partitions = 0;
    std::size_t ivf_partitions = 0;
  };
  Stats stats() const;

 private:
  struct Partition;
  struct Entry;
  using Clock = std::chrono::steady_clock;

  std::uint64_t insert_locked(std::uint64_t id, const CacheKey& key, std::span<const float> vector,
                              std::shared_ptr<const std::string> payload,
                              Clock::time_point expires);
  void remove_locked(std::span<Entry* const> entries);
  void evict_locked();
  Partition& partition_locked(std::string_view ns, std::string_view scope);
  bool expired(const Entry& entry, Clock::time_point now) const noexcept;

  CacheOptions options_;
  CacheMetrics metrics_;
  mutable std::shared_mutex mutex_;
  std::mutex rebuild_mutex_;  // one rebuild at a time
  std::list<Entry> lru_;      // most recently used first; owns the entries
  std::unordered_map<std::string_view, Entry*> by_key_;  // views into Entry::key
  std::unordered_map<std::uint64_t, Entry*> by_id_;
  std::unordered_map<std::string, std::shared_ptr<Partition>> partitions_;  // ns \0 scope
  std::deque<std::pair<Clock::time_point, std::uint64_t>> expiry_;  // insertion (= expiry) order
  std::size_t bytes_ = 0;
  std::uint64_t next_id_ = 1;
};

// The cache's metrics and gauges in the Prometheus text format (docs/METRICS.md).
void render_prometheus(const SemanticCache& cache, std::string& out);

// A cache's housekeeping on a thread of its own, off the serving threads: expiry every
// second, index rebuilds, a snapshot every `snapshot_interval` (when a path is given) and a
// last one when stopped.
class CacheMaintenance {
 public:
  CacheMaintenance(SemanticCache& cache, std::filesystem::path snapshot,
                   std::chrono::seconds snapshot_interval);
  ~CacheMaintenance();  // stops, then writes the last snapshot

 private:
  void run();

  SemanticCache& cache_;
  std::filesystem::path snapshot_;
  std::chrono::seconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace coinfer::cache
