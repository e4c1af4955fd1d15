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
  // The share of semantic hits reported wrong (feedback()) a namespace accepts: past it, the
  // namespace's threshold rises above the wrong hits until the reports above it meet it.
  float target_error_rate = 0.02f;
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

// A namespace's own settings ([cache.namespaces."NAME"] in the config, or PUT
// /v2/cache/namespaces/{name}); unset fields take the cache's.
struct NamespaceSettings {
  float threshold = 0.0f;           // 0: CacheOptions::similarity_threshold
  float target_error_rate = -1.0f;  // < 0: CacheOptions::target_error_rate
};

// What feedback() did.
struct FeedbackResult {
  bool removed = false;              // the entry's answer itself was reported wrong
  float entry_threshold = 0.0f;      // the entry's own bar after the report
  float namespace_threshold = 0.0f;  // the namespace's, after the report
};

// A namespace's settings, what feedback made of them, and the reports.
struct NamespaceState {
  float configured_threshold = 0.0f;  // the setting (or the cache's)
  float threshold = 0.0f;             // in force: the setting, raised by wrong reports
  float target_error_rate = 0.0f;
  std::uint64_t right = 0;  // feedback on hits, since start
  std::uint64_t wrong = 0;
};

struct CacheHit {
  std::uint64_t id = 0;
  HitKind kind = HitKind::exact;
  float similarity = 1.0f;
  std::shared_ptr<const std::string> payload;
  std::string text;  // the entry's request text (candidates() only)
};

// docs/METRICS.md: coinfer_cache_*.
struct CacheMetrics {
  CacheMetrics();
  Counter exact_hits;
  Counter semantic_hits;
  Counter misses;  // counted by the caller, once per request that found nothing
  Counter inserts;
  Counter evictions;             // entry or byte limit (LRU)
  Counter expirations;           // TTL
  Counter invalidations;         // DELETE by id or namespace
  Counter guard_rejections;      // candidates above the threshold that the guards refused
  Counter feedback_right;        // hits reported right (POST /v2/cache/feedback)
  Counter feedback_wrong;        // hits reported wrong
  Counter threshold_rejections;  // candidates above the namespace's bar, below the entry's
  Counter verifier_rejections;   // candidates the verifier model scored below its bar
  Histogram lookup_seconds;      // one exact or semantic lookup, embedding excluded
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
  // Namespaces that can have settings or feedback state (the others use the options).
  static constexpr std::size_t kMaxNamespaces = 65'536;
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
  // The entries lookup() would consider, in its order, up to `max` (with their texts), none
  // taken yet: for a verifier that runs outside the cache's lock. accept() takes one.
  std::size_t candidates(const CacheKey& key, std::span<const float> vector,
                         std::vector<CacheHit>& out, std::size_t max, float* nearest = nullptr);
  // Takes a candidate as the lookup's semantic hit (stamps its use, counts the hit). False
  // when the entry has gone meanwhile.
  bool accept(const CacheHit& candidate);
  // Stores `payload` under `key` (replacing an entry with the same key) and, unless
  // `vector` is empty, its vector; evicts least recently used entries past the limits.
  // Returns the entry's id (ids start at 1), or 0 when the entry alone exceeds max_bytes.
  std::uint64_t insert(const CacheKey& key, std::span<const float> vector, std::string payload);

  // A client's verdict on a hit served from entry `id` (whose namespace starts with
  // `ns_prefix`), at `similarity` (the X-Cache-Similarity it got; < 0: the entry's last
  // hit's, 1 if exact). Wrong at a similarity below 1: the entry's own bar rises above it, and the
  // namespace's threshold rises to the lowest at which the reports above it are wrong no more
  // often than its target error rate. Wrong on an exact hit (or an entry never hit by
  // similarity): the answer itself is wrong, and the entry is removed. Right: recorded.
  // False when there is no such entry (evicted, expired, another tenant's).
  bool feedback(std::uint64_t id, bool correct, float similarity, std::string_view ns_prefix,
                FeedbackResult& out);
  // Replaces namespace `ns`'s settings (its feedback-raised threshold is recomputed). False
  // when kMaxNamespaces namespaces have settings or feedback already.
  bool configure_namespace(std::string_view ns, const NamespaceSettings& settings);
  NamespaceState namespace_state(std::string_view ns) const;

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
  // candidates(); `texts`: copy each entry's text (the verifier's), not for lookup().
  std::size_t find_candidates(const CacheKey& key, std::span<const float> vector,
                              std::vector<CacheHit>& out, std::size_t max, float* nearest,
                              bool texts);
  static constexpr std::size_t kMaxReports = 1'024;
  struct Namespace {
    NamespaceSettings settings;
    bool configured = false;  // settings given (config or API), kept while it has no entries
    float raised = 0.0f;      // the threshold wrong reports call for (0: none)
    // The latest semantic hits reported (similarity, right), a ring of kMaxReports.
    std::vector<std::pair<float, bool>> reports;
    std::size_t next_report = 0;
    std::uint64_t right = 0, wrong = 0;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  using Clock = std::chrono::steady_clock;

  std::uint64_t insert_locked(std::uint64_t id, const CacheKey& key, std::span<const float> vector,
                              std::shared_ptr<const std::string> payload,
                              Clock::time_point expires);
  void remove_locked(std::span<Entry* const> entries);
  void evict_locked();
  Partition& partition_locked(std::string_view ns, std::string_view scope);
  bool expired(const Entry& entry, Clock::time_point now) const noexcept;
  float threshold_locked(std::string_view ns) const;
  float base_threshold(const Namespace& space) const noexcept;
  void relearn(Namespace& space) const;

  CacheOptions options_;
  CacheMetrics metrics_;
  mutable std::shared_mutex mutex_;
  std::mutex rebuild_mutex_;  // one rebuild at a time
  std::list<Entry> lru_;      // most recently used first; owns the entries
  std::unordered_map<std::string_view, Entry*> by_key_;  // views into Entry::key
  std::unordered_map<std::uint64_t, Entry*> by_id_;
  std::unordered_map<std::string, std::shared_ptr<Partition>> partitions_;  // ns \0 scope
  std::deque<std::pair<Clock::time_point, std::uint64_t>> expiry_;  // insertion (= expiry) order
  // Namespaces with settings or feedback (most have neither and use the options).
  std::unordered_map<std::string, Namespace, StringHash, std::equal_to<>> namespaces_;
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
