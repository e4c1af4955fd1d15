#include "coinfer/cache/semantic_cache.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "coinfer/cache/agreement.hpp"
#include "coinfer/core/byte_io.hpp"

namespace coinfer::cache {

struct SemanticCache::Partition {
  Partition(std::string k, int dimension, IndexOptions options)
      : key(std::move(k)), index(dimension, options) {}
  struct Write {
    std::uint64_t id;
    std::vector<float> vector;  // empty: a removal
  };
  std::string key;  // ns \0 scope
  VectorIndex index;
  std::size_t entries = 0;
  std::atomic<bool> rebuilding{false};
  std::vector<Write> log;  // writes made while a rebuild runs, replayed into the new index
  bool dead = false;       // erased from partitions_
};

// Memory: one list node per entry holding its key (ns \0 scope \0 text) and a shared
// payload; its vector lives in its partition's index only.
struct SemanticCache::Entry {
  std::uint64_t id = 0;
  std::string key;
  std::uint32_t ns_size = 0;
  std::uint32_t scope_size = 0;
  std::shared_ptr<const std::string> payload;
  Partition* partition = nullptr;  // when it has a vector
  Clock::time_point expires = Clock::time_point::max();
  std::atomic<std::int64_t> last_used{0};  // steady ns; hits stamp it under the shared lock
  std::int64_t stamp = 0;                  // last_used when last placed at the head
  std::list<Entry>::iterator self;
  std::size_t bytes = 0;
  float min_similarity = 0.0f;  // its own bar, raised by wrong reports (written exclusively)
  std::atomic<float> last_similarity{-1.0f};  // of its last hit (1: exact, -1: none)

  std::string_view ns() const { return std::string_view(key).substr(0, ns_size); }
  std::string_view scope() const { return std::string_view(key).substr(ns_size + 1, scope_size); }
  std::string_view text() const { return std::string_view(key).substr(ns_size + scope_size + 2); }
};

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void make_key(std::string& out, std::string_view a, std::string_view b) {
  out.assign(a);
  out += '\0';
  out += b;
}

void make_key(std::string& out, const CacheKey& key) {
  make_key(out, key.ns, key.scope);
  out += '\0';
  out += key.text;
}

class LookupTimer {
 public:
  explicit LookupTimer(Histogram& histogram) : histogram_(histogram), start_(Clock::now()) {}
  ~LookupTimer() {
    histogram_.observe(std::chrono::duration<double>(Clock::now() - start_).count());
  }

 private:
  Histogram& histogram_;
  Clock::time_point start_;
};

}  // namespace

CacheMetrics::CacheMetrics()
    : lookup_seconds({1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2}),
      nearest_similarity({0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 0.99, 1.0}) {}

SemanticCache::SemanticCache(CacheOptions options) : options_(std::move(options)) {}
SemanticCache::~SemanticCache() = default;

bool SemanticCache::expired(const Entry& entry, Clock::time_point now) const noexcept {
  return entry.expires <= now;
}

bool SemanticCache::lookup_exact(const CacheKey& key, CacheHit& hit) {
  LookupTimer timer(metrics_.lookup_seconds);
  thread_local std::string buffer;
  make_key(buffer, key);
  std::shared_lock lock(mutex_);
  const auto it = by_key_.find(buffer);
  if (it == by_key_.end()) return false;
  Entry& entry = *it->second;
  if (expired(entry, Clock::now())) return false;
  entry.last_used.store(now_ns(), std::memory_order_relaxed);
  entry.last_similarity.store(1.0f, std::memory_order_relaxed);
  hit = {entry.id, HitKind::exact, 1.0f, entry.payload, {}};
  metrics_.exact_hits.add();
  return true;
}

bool SemanticCache::lookup(const CacheKey& key, std::span<const float> vector, CacheHit& hit,
                           float* nearest) {
  thread_local std::vector<CacheHit> found;
  if (find_candidates(key, vector, found, 1, nearest, false) == 0) return false;
  if (!accept(found.front())) return false;
  hit = std::move(found.front());
  return true;
}

std::size_t SemanticCache::candidates(const CacheKey& key, std::span<const float> vector,
                                      std::vector<CacheHit>& out, std::size_t max,
                                      float* nearest) {
  return find_candidates(key, vector, out, max, nearest, true);
}

std::size_t SemanticCache::find_candidates(const CacheKey& key, std::span<const float> vector,
                                           std::vector<CacheHit>& out, std::size_t max,
                                           float* nearest, bool texts) {
  LookupTimer timer(metrics_.lookup_seconds);
  out.clear();
  if (nearest) *nearest = 0.0f;
  if (vector.size() != static_cast<std::size_t>(options_.dimension) || max == 0) return 0;
  thread_local std::string buffer;
  make_key(buffer, key.ns, key.scope);
  const std::size_t k = std::max<std::size_t>(1, options_.candidates);
  thread_local std::vector<float> similarities;
  thread_local std::vector<std::uint64_t> ids;
  similarities.resize(k);
  ids.resize(k);
  std::shared_lock lock(mutex_);
  const auto partition = partitions_.find(buffer);
  if (partition == partitions_.end()) return 0;
  const std::size_t found =
      partition->second->index.search(vector, k, similarities.data(), ids.data());
  if (found > 0) {
    metrics_.nearest_similarity.observe(similarities[0]);
    if (nearest) *nearest = similarities[0];
  }
  const auto now = Clock::now();
  const float bar = threshold_locked(key.ns);
  for (std::size_t i = 0; i < found && similarities[i] >= bar && out.size() < max; ++i) {
    const auto it = by_id_.find(ids[i]);
    if (it == by_id_.end() || expired(*it->second, now)) continue;
    const Entry& entry = *it->second;
    if (similarities[i] < entry.min_similarity) {
      metrics_.threshold_rejections.add();
      continue;
    }
    if (options_.guards && disagreement(key.text, entry.text()) != Disagreement::none) {
      metrics_.guard_rejections.add();
      continue;
    }
    out.push_back({entry.id, HitKind::semantic, similarities[i], entry.payload,
                   texts ? std::string(entry.text()) : std::string()});
  }
  return out.size();
}

bool SemanticCache::accept(const CacheHit& candidate) {
  std::shared_lock lock(mutex_);
  const auto it = by_id_.find(candidate.id);
  if (it == by_id_.end() || expired(*it->second, Clock::now())) return false;
  Entry& entry = *it->second;
  entry.last_used.store(now_ns(), std::memory_order_relaxed);
  entry.last_similarity.store(candidate.similarity, std::memory_order_relaxed);
  metrics_.semantic_hits.add();
  return true;
}

std::uint64_t SemanticCache::insert(const CacheKey& key, std::span<const float> vector,
                                    std::string payload) {
  assert(vector.empty() || vector.size() == static_cast<std::size_t>(options_.dimension));
  const auto expires =
      options_.ttl.count() > 0 ? Clock::now() + options_.ttl : Clock::time_point::max();
  auto shared = std::make_shared<const std::string>(std::move(payload));
  std::unique_lock lock(mutex_);
  const std::uint64_t id = insert_locked(0, key, vector, std::move(shared), expires);
  if (id != 0) metrics_.inserts.add();
  return id;
}

SemanticCache::Partition& SemanticCache::partition_locked(std::string_view ns,
                                                          std::string_view scope) {
  std::string key;
  make_key(key, ns, scope);
  auto it = partitions_.find(key);
  if (it == partitions_.end()) {
    auto partition = std::make_shared<Partition>(key, options_.dimension, options_.index);
    it = partitions_.emplace(std::move(key), std::move(partition)).first;
  }
  return *it->second;
}

std::uint64_t SemanticCache::insert_locked(std::uint64_t id, const CacheKey& key,
                                           std::span<const float> vector,
                                           std::shared_ptr<const std::string> payload,
                                           Clock::time_point expires) {
  thread_local std::string buffer;
  make_key(buffer, key);
  if (const auto old = by_key_.find(buffer); old != by_key_.end()) {
    Entry* previous = old->second;
    remove_locked({&previous, 1});
  }
  // Node, key, payload, vector, and the two map nodes.
  const std::size_t bytes =
      sizeof(Entry) + 2 * buffer.size() + payload->size() + vector.size() * sizeof(float) + 128;
  if (bytes > options_.max_bytes) return 0;
  if (id == 0) {
    id = next_id_++;
  } else {
    next_id_ = std::max(next_id_, id + 1);
  }
  Entry& entry = lru_.emplace_front();
  entry.id = id;
  entry.key = buffer;
  entry.ns_size = static_cast<std::uint32_t>(key.ns.size());
  entry.scope_size = static_cast<std::uint32_t>(key.scope.size());
  entry.payload = std::move(payload);
  entry.expires = expires;
  entry.stamp = now_ns();
  entry.last_used.store(entry.stamp, std::memory_order_relaxed);
  entry.self = lru_.begin();
  entry.bytes = bytes;
  by_key_.emplace(std::string_view(entry.key), &entry);
  by_id_.emplace(id, &entry);
  if (!vector.empty()) {
    Partition& partition = partition_locked(key.ns, key.scope);
    partition.index.add(id, vector);
    ++partition.entries;
    if (partition.rebuilding.load(std::memory_order_relaxed)) {
      partition.log.push_back({id, std::vector<float>(vector.begin(), vector.end())});
    }
    entry.partition = &partition;
  }
  if (expires != Clock::time_point::max()) expiry_.emplace_back(expires, id);
  bytes_ += bytes;
  evict_locked();
  return id;
}

void SemanticCache::remove_locked(std::span<Entry* const> entries) {
  // Vectors first, batched per partition: one index update per partition.
  std::vector<std::pair<Partition*, std::vector<std::uint64_t>>> removals;
  for (Entry* entry : entries) {
    if (!entry->partition) continue;
    auto it = std::find_if(removals.begin(), removals.end(),
                           [&](const auto& r) { return r.first == entry->partition; });
    if (it == removals.end()) it = removals.insert(removals.end(), {entry->partition, {}});
    it->second.push_back(entry->id);
  }
  for (auto& [partition, ids] : removals) {
    partition->index.remove(ids);
    partition->entries -= ids.size();
    if (partition->rebuilding.load(std::memory_order_relaxed)) {
      for (std::uint64_t id : ids) partition->log.push_back({id, {}});
    } else if (partition->entries == 0) {
      partition->dead = true;
      partitions_.erase(partition->key);  // destroys the partition
    }
  }
  for (Entry* entry : entries) {
    by_key_.erase(std::string_view(entry->key));
    by_id_.erase(entry->id);
    bytes_ -= entry->bytes;
    lru_.erase(entry->self);
  }
}

void SemanticCache::evict_locked() {
  std::size_t count = lru_.size();
  std::size_t bytes = bytes_;
  if (count <= options_.max_entries && bytes <= options_.max_bytes) return;
  std::vector<Entry*> victims;
  Entry* newest = &lru_.front();  // just inserted: the last to go
  auto it = std::prev(lru_.end());
  while (count > options_.max_entries || bytes > options_.max_bytes) {
    Entry& entry = *it;
    const bool first = it == lru_.begin();
    const auto previous = first ? lru_.end() : std::prev(it);
    const std::int64_t used = entry.last_used.load(std::memory_order_relaxed);
    if (&entry == newest) {
      // kept
    } else if (used > entry.stamp) {
      entry.stamp = used;  // used since it was placed: a second chance at the head
      lru_.splice(lru_.begin(), lru_, it);
    } else {
      victims.push_back(&entry);
      --count;
      bytes -= entry.bytes;
    }
    if (first || previous == lru_.end()) break;
    it = previous;
  }
  // Second-chance entries moved ahead of `it` are met again only in a later pass; if this
  // pass could not get under the limits, evict from the tail without second chances.
  if (count > options_.max_entries || bytes > options_.max_bytes) {
    for (auto back = lru_.rbegin(); back != lru_.rend(); ++back) {
      if (count <= options_.max_entries && bytes <= options_.max_bytes) break;
      Entry& entry = *back;
      if (&entry == newest || std::find(victims.begin(), victims.end(), &entry) != victims.end()) {
        continue;
      }
      victims.push_back(&entry);
      --count;
      bytes -= entry.bytes;
    }
  }
  remove_locked(victims);
  metrics_.evictions.add(victims.size());
}

bool SemanticCache::erase(std::uint64_t id, std::string_view ns_prefix) {
  std::unique_lock lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end() || !it->second->ns().starts_with(ns_prefix)) return false;
  Entry* entry = it->second;
  remove_locked({&entry, 1});
  metrics_.invalidations.add();
  return true;
}

std::size_t SemanticCache::erase_namespace(std::string_view ns) {
  std::unique_lock lock(mutex_);
  std::vector<Entry*> victims;
  for (Entry& entry : lru_) {
    if (entry.ns() == ns) victims.push_back(&entry);
  }
  remove_locked(victims);
  // Its feedback went with its entries; settings stay.
  if (const auto space = namespaces_.find(ns); space != namespaces_.end()) {
    if (space->second.configured) {
      Namespace fresh;
      fresh.settings = space->second.settings;
      fresh.configured = true;
      space->second = std::move(fresh);
    } else {
      namespaces_.erase(space);
    }
  }
  metrics_.invalidations.add(victims.size());
  return victims.size();
}

// ---- Feedback and per-namespace thresholds ------------------------------------------------

float SemanticCache::base_threshold(const Namespace& space) const noexcept {
  return space.settings.threshold > 0 ? space.settings.threshold : options_.similarity_threshold;
}

float SemanticCache::threshold_locked(std::string_view ns) const {
  const auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) return options_.similarity_threshold;
  return std::max(base_threshold(it->second), it->second.raised);
}

// The lowest threshold, at or above the namespace's base, at which the reported hits at or
// above it are wrong no more often than the target error rate: the base, or just above one of
// the wrong hits. (A point estimate over the latest kMaxReports reports; a namespace that
// cannot afford the noise of few reports sets its threshold itself.)
void SemanticCache::relearn(Namespace& space) const {
  const float base = base_threshold(space);
  const float target = space.settings.target_error_rate >= 0 ? space.settings.target_error_rate
                                                             : options_.target_error_rate;
  auto reports = space.reports;
  std::sort(reports.begin(), reports.end());  // by similarity, ascending
  // Reports at or above position i: n - i of them, wrong_from[i] wrong.
  const std::size_t n = reports.size();
  std::vector<std::size_t> wrong_from(n + 1, 0);
  for (std::size_t i = n; i-- > 0;) wrong_from[i] = wrong_from[i + 1] + (reports[i].second ? 0 : 1);
  const auto meets = [&](float threshold) {
    const auto first = static_cast<std::size_t>(
        std::lower_bound(reports.begin(), reports.end(), std::pair{threshold, false}) -
        reports.begin());
    return static_cast<double>(wrong_from[first]) <=
           static_cast<double>(target) * static_cast<double>(n - first);
  };
  space.raised = 0.0f;
  if (meets(base)) return;
  for (const auto& [similarity, right] : reports) {
    if (right || similarity < base) continue;
    const float above = std::nextafter(similarity, 2.0f);
    if (meets(above)) {
      space.raised = above;
      return;
    }
  }
}

bool SemanticCache::feedback(std::uint64_t id, bool correct, float similarity,
                             std::string_view ns_prefix, FeedbackResult& out) {
  std::unique_lock lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end() || !it->second->ns().starts_with(ns_prefix)) return false;
  Entry* entry = it->second;
  // X-Cache-Similarity is rounded: a report of the entry's last hit takes that hit's own.
  const float last = entry->last_similarity.load(std::memory_order_relaxed);
  if (similarity < 0 || (last >= 0 && std::fabs(similarity - last) < 1e-3f)) {
    similarity = std::max(similarity, last);
  }
  const bool semantic = similarity >= 0 && similarity < 1.0f;
  (correct ? metrics_.feedback_right : metrics_.feedback_wrong).add();
  const std::string ns(entry->ns());
  auto space = namespaces_.find(ns);
  if (space == namespaces_.end() && namespaces_.size() < kMaxNamespaces) {
    space = namespaces_.emplace(ns, Namespace{}).first;
  }
  if (space != namespaces_.end()) {
    Namespace& s = space->second;
    ++(correct ? s.right : s.wrong);
    if (semantic) {
      if (s.reports.size() < kMaxReports) {
        s.reports.emplace_back(similarity, correct);
      } else {
        s.reports[s.next_report] = {similarity, correct};
        s.next_report = (s.next_report + 1) % kMaxReports;
      }
      relearn(s);
    }
  }
  out = {};
  if (!correct && !semantic) {
    remove_locked({&entry, 1});
    metrics_.invalidations.add();
    out.removed = true;
  } else if (!correct) {
    entry->min_similarity = std::max(entry->min_similarity, std::nextafter(similarity, 2.0f));
  }
  out.namespace_threshold = threshold_locked(ns);
  out.entry_threshold =
      out.removed ? 0.0f : std::max(entry->min_similarity, out.namespace_threshold);
  return true;
}

bool SemanticCache::configure_namespace(std::string_view ns, const NamespaceSettings& settings) {
  std::unique_lock lock(mutex_);
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) {
    if (namespaces_.size() >= kMaxNamespaces) return false;
    it = namespaces_.emplace(std::string(ns), Namespace{}).first;
  }
  it->second.settings = settings;
  it->second.configured = true;
  relearn(it->second);
  return true;
}

NamespaceState SemanticCache::namespace_state(std::string_view ns) const {
  std::shared_lock lock(mutex_);
  NamespaceState state;
  state.configured_threshold = options_.similarity_threshold;
  state.threshold = options_.similarity_threshold;
  state.target_error_rate = options_.target_error_rate;
  if (const auto it = namespaces_.find(ns); it != namespaces_.end()) {
    const Namespace& s = it->second;
    state.configured_threshold = base_threshold(s);
    state.threshold = threshold_locked(ns);
    if (s.settings.target_error_rate >= 0) state.target_error_rate = s.settings.target_error_rate;
    state.right = s.right;
    state.wrong = s.wrong;
  }
  return state;
}

std::size_t SemanticCache::expire() {
  std::unique_lock lock(mutex_);
  const auto now = Clock::now();
  std::vector<Entry*> victims;
  while (!expiry_.empty() && expiry_.front().first <= now) {
    const auto it = by_id_.find(expiry_.front().second);
    if (it != by_id_.end() && expired(*it->second, now)) victims.push_back(it->second);
    expiry_.pop_front();
  }
  // Ids of entries evicted or replaced earlier stay queued until their time; keep the queue
  // within twice the live entries.
  if (expiry_.size() > 2 * by_id_.size() + 1024) {
    std::erase_if(expiry_, [&](const auto& item) { return !by_id_.count(item.second); });
  }
  remove_locked(victims);
  metrics_.expirations.add(victims.size());
  return victims.size();
}

std::size_t SemanticCache::rebuild_indexes() {
  std::lock_guard one_at_a_time(rebuild_mutex_);
  std::vector<std::shared_ptr<Partition>> todo;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [key, partition] : partitions_) {
      if (partition->index.wants_rebuild()) todo.push_back(partition);
    }
  }
  std::size_t rebuilt = 0;
  for (const auto& partition : todo) {
    std::vector<std::uint64_t> ids;
    std::vector<float> vectors;
    {
      // One section for both: every write after the copy is logged, none before it is.
      // Writers are excluded (they take the lock exclusively); lookups go on.
      std::shared_lock lock(mutex_);
      if (partition->dead) continue;
      partition->rebuilding.store(true, std::memory_order_relaxed);
      partition->index.export_vectors(ids, vectors);
    }
    VectorIndex built = VectorIndex::build(options_.dimension, options_.index, ids, vectors);
    std::unique_lock lock(mutex_);
    for (const auto& write : partition->log) {
      if (write.vector.empty()) {
        built.remove({&write.id, 1});
      } else {
        built.add(write.id, write.vector);
      }
    }
    partition->log.clear();
    partition->index = std::move(built);
    partition->rebuilding.store(false, std::memory_order_relaxed);
    if (partition->entries == 0 && !partition->dead) {
      partition->dead = true;
      partitions_.erase(partition->key);
    }
    ++rebuilt;
  }
  return rebuilt;
}

SemanticCache::Stats SemanticCache::stats() const {
  std::shared_lock lock(mutex_);
  Stats stats;
  stats.entries = lru_.size();
  stats.bytes = bytes_;
  stats.partitions = partitions_.size();
  for (const auto& [key, partition] : partitions_) {
    stats.vectors += partition->index.size();
    if (partition->index.is_ivf()) ++stats.ivf_partitions;
  }
  return stats;
}

// ---- Snapshots ----------------------------------------------------------------------------
//
// Layout (little-endian):
//   "CFCACHE\0"  u32 format version  u32 dimension  str embedder  u64 next id  u64 count
//   count x { u64 id  i64 expires (Unix ms, 0: never)  str key  u32 ns size  u32 scope size
//             f32 the entry's own bar (version 2)  u8 has vector  [dimension x f32]
//             str payload }                                          (least recently used first)
//   u64 FNV-1a of every byte before it
// where str = u64 size + bytes.

namespace {

constexpr char kMagic[8] = {'C', 'F', 'C', 'A', 'C', 'H', 'E', '\0'};
constexpr std::uint32_t kFormatVersion = 2;  // 1: without the entries' bars

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

void put_string(std::string& out, std::string_view s) {
  append_raw<std::uint64_t>(out, s.size());
  out += s;
}

// ByteReader with errors that name what was cut short and where.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  Status get(T& out, const char* what) {
    return bytes_.get(out) ? Status{} : truncated(what);
  }
  Status get_string(std::string& out, const char* what) {
    std::uint64_t size = 0;
    std::string_view view;
    if (!bytes_.get(size) || !bytes_.get_bytes(size, view)) return truncated(what);
    out.assign(view);
    return {};
  }
  Status get_floats(std::vector<float>& out, std::size_t n, const char* what) {
    std::string_view view;
    if (bytes_.left() / sizeof(float) < n || !bytes_.get_bytes(n * sizeof(float), view)) {
      return truncated(what);
    }
    out.resize(n);
    std::memcpy(out.data(), view.data(), view.size());
    return {};
  }
  std::size_t offset() const noexcept { return bytes_.offset(); }
  Status fail(const std::string& what) const {
    return Status::invalid(what + " at offset " + std::to_string(offset()));
  }

 private:
  Status truncated(const char* what) const { return fail(std::string("truncated ") + what); }
  ByteReader bytes_;
};

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(Errc::internal,
                  "cannot write " + temporary.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string error = std::strerror(errno);
      ::close(fd);
      return Status(Errc::internal, "cannot write " + temporary.string() + ": " + error);
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Status(Errc::internal, "cannot flush " + temporary.string());
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    return Status(Errc::internal, "cannot rename " + temporary.string() + ": " + ec.message());
  // The rename itself survives a crash once the directory is flushed.
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace

Status SemanticCache::save(const std::filesystem::path& path) const {
  std::string out;
  {
    std::shared_lock lock(mutex_);
    out.reserve(bytes_ + 64);
    out.append(kMagic, sizeof(kMagic));
    append_raw<std::uint32_t>(out, kFormatVersion);
    append_raw<std::uint32_t>(out, static_cast<std::uint32_t>(options_.dimension));
    put_string(out, options_.embedder);
    append_raw<std::uint64_t>(out, next_id_);
    append_raw<std::uint64_t>(out, lru_.size());
    // The vectors, by entry id.
    std::vector<std::uint64_t> ids;
    std::vector<float> vectors;
    for (const auto& [key, partition] : partitions_) partition->index.export_vectors(ids, vectors);
    std::unordered_map<std::uint64_t, std::size_t> row_of;
    row_of.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) row_of.emplace(ids[i], i);
    const auto steady_now = Clock::now();
    const std::int64_t unix_now = unix_ms_now();
    const auto d = static_cast<std::size_t>(options_.dimension);
    for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
      const Entry& entry = *it;
      append_raw<std::uint64_t>(out, entry.id);
      std::int64_t expires = 0;
      if (entry.expires != Clock::time_point::max()) {
        expires = unix_now +
                  std::chrono::duration_cast<std::chrono::milliseconds>(entry.expires - steady_now)
                      .count();
      }
      append_raw<std::int64_t>(out, expires);
      put_string(out, entry.key);
      append_raw<std::uint32_t>(out, entry.ns_size);
      append_raw<std::uint32_t>(out, entry.scope_size);
      append_raw<float>(out, entry.min_similarity);
      const auto row = entry.partition ? row_of.find(entry.id) : row_of.end();
      append_raw<std::uint8_t>(out, row != row_of.end() ? 1 : 0);
      if (row != row_of.end()) {
        out.append(reinterpret_cast<const char*>(vectors.data() + row->second * d),
                   d * sizeof(float));
      }
      put_string(out, *entry.payload);
    }
  }
  append_raw<std::uint64_t>(out, fnv1a(out));
  return write_file_atomically(path, out);
}

Status SemanticCache::load(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::not_found("no cache snapshot at " + path.string());
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return restore(bytes, "cache snapshot " + path.string() + ": ");
}

Status SemanticCache::restore(std::string_view bytes, std::string_view where_prefix) {
  const std::string where(where_prefix);
  if (bytes.size() < sizeof(kMagic) + sizeof(std::uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::invalid(where + "not a coinfer cache snapshot");
  }
  const std::string_view body(bytes.data(), bytes.size() - sizeof(std::uint64_t));
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + body.size(), sizeof(checksum));
  if (checksum != fnv1a(body))
    return Status::invalid(where + "checksum mismatch (corrupt or truncated)");

  Reader r(body);
  char magic[sizeof(kMagic)];
  std::uint32_t version = 0, dimension = 0;
  std::string embedder;
  std::uint64_t next_id = 0, count = 0;
  for (char& c : magic) (void)r.get(c, "magic");
  if (auto s = r.get(version, "format version"); !s.ok())
    return Status::invalid(where + s.message());
  if (version != kFormatVersion && version != 1) {
    return Status::invalid(where + "format version " + std::to_string(version) + ", expected " +
                           std::to_string(kFormatVersion) + " or 1");
  }
  Status s = r.get(dimension, "dimension");
  if (s.ok()) s = r.get_string(embedder, "embedder");
  if (s.ok()) s = r.get(next_id, "next id");
  if (s.ok()) s = r.get(count, "entry count");
  if (!s.ok()) return Status::invalid(where + s.message());
  if (dimension != static_cast<std::uint32_t>(options_.dimension) ||
      embedder != options_.embedder) {
    return Status::invalid(where + "written for vectors of " + std::to_string(dimension) +
                           " dimensions from '" + embedder + "', this cache has " +
                           std::to_string(options_.dimension) + " from '" + options_.embedder +
                           "'");
  }
  struct Loaded {
    std::uint64_t id;
    std::int64_t expires;
    std::string key;
    std::uint32_t ns_size, scope_size;
    float min_similarity = 0.0f;
    std::vector<float> vector;
    std::string payload;
  };
  std::vector<Loaded> entries;
  entries.reserve(std::min<std::uint64_t>(count, body.size() / 40));
  for (std::uint64_t i = 0; i < count; ++i) {
    Loaded e;
    std::uint8_t has_vector = 0;
    s = r.get(e.id, "entry id");
    if (s.ok()) s = r.get(e.expires, "entry expiry");
    if (s.ok()) s = r.get_string(e.key, "entry key");
    if (s.ok()) s = r.get(e.ns_size, "entry namespace size");
    if (s.ok()) s = r.get(e.scope_size, "entry scope size");
    if (s.ok() && version >= 2) s = r.get(e.min_similarity, "entry threshold");
    if (s.ok() && !(e.min_similarity >= 0.0f && e.min_similarity <= 2.0f))
      s = r.fail("entry threshold out of range");
    if (s.ok()) s = r.get(has_vector, "entry vector flag");
    if (s.ok() && has_vector > 1) s = r.fail("entry vector flag " + std::to_string(has_vector));
    if (s.ok() && has_vector) s = r.get_floats(e.vector, dimension, "entry vector");
    if (s.ok()) s = r.get_string(e.payload, "entry payload");
    if (s.ok() && (e.id == 0 || e.id >= next_id))
      s = r.fail("entry id " + std::to_string(e.id) + " out of range");
    if (s.ok() && (std::uint64_t{e.ns_size} + e.scope_size + 2 > e.key.size() ||
                   e.key[e.ns_size] != '\0' || e.key[e.ns_size + 1 + e.scope_size] != '\0')) {
      s = r.fail("entry key does not match its namespace and scope sizes");
    }
    for (float v : e.vector) {
      if (s.ok() && !std::isfinite(v)) s = r.fail("entry vector is not finite");
    }
    if (!s.ok()) return Status::invalid(where + s.message());
    entries.push_back(std::move(e));
  }
  if (r.offset() != body.size()) return Status::invalid(where + r.fail("trailing bytes").message());

  const std::int64_t unix_now = unix_ms_now();
  const auto steady_now = Clock::now();
  {
    std::unique_lock lock(mutex_);
    next_id_ = std::max(next_id_, next_id);
    for (const Loaded& e : entries) {
      if (e.expires != 0 && e.expires <= unix_now) continue;
      if (by_id_.count(e.id)) continue;
      // An entry lives no longer than this cache's TTL, whatever the file says (a year
      // without one): a remaining time far in the future cannot overflow the clock.
      constexpr std::int64_t kYearMs = 365LL * 24 * 3600 * 1000;
      const std::int64_t limit = options_.ttl.count() > 0 ? options_.ttl.count() : kYearMs;
      const auto expires =
          e.expires == 0
              ? Clock::time_point::max()
              : steady_now + std::chrono::milliseconds(std::min(e.expires - unix_now, limit));
      const std::string_view key(e.key);
      const CacheKey cache_key{key.substr(0, e.ns_size), key.substr(e.ns_size + 1, e.scope_size),
                               key.substr(e.ns_size + e.scope_size + 2)};
      const std::uint64_t id = insert_locked(
          e.id, cache_key, e.vector, std::make_shared<const std::string>(e.payload), expires);
      if (const auto it = by_id_.find(id); id != 0 && it != by_id_.end()) {
        it->second->min_similarity = e.min_similarity;
      }
    }
  }
  rebuild_indexes();  // a large partition becomes an IVF now rather than on the first tick
  return {};
}

void render_prometheus(const SemanticCache& cache, std::string& out) {
  const CacheMetrics& m = cache.metrics();
  const auto counter = [&out](std::string_view name, std::string_view help, const Counter& c) {
    append_metric_header(out, name, "counter", help);
    out += name;
    out += ' ';
    out += std::to_string(c.value());
    out += '\n';
  };
  counter("coinfer_cache_exact_hits_total", "Requests answered by an exact cache hit.",
          m.exact_hits);
  counter("coinfer_cache_semantic_hits_total", "Requests answered by a semantic cache hit.",
          m.semantic_hits);
  counter("coinfer_cache_misses_total", "Requests that looked up the cache and found nothing.",
          m.misses);
  counter("coinfer_cache_inserts_total", "Answers stored in the cache.", m.inserts);
  counter("coinfer_cache_evictions_total", "Entries evicted by the entry or byte limit (LRU).",
          m.evictions);
  counter("coinfer_cache_expirations_total", "Entries removed when their TTL passed.",
          m.expirations);
  counter("coinfer_cache_invalidations_total", "Entries removed by DELETE.", m.invalidations);
  counter("coinfer_cache_guard_rejections_total",
          "Semantic candidates above the threshold refused by the agreement guards.",
          m.guard_rejections);
  counter("coinfer_cache_threshold_rejections_total",
          "Semantic candidates above the namespace's threshold but below the entry's own, "
          "raised by a wrong-hit report.",
          m.threshold_rejections);
  counter("coinfer_cache_verifier_rejections_total",
          "Semantic candidates that passed the threshold and the guards but that the verifier "
          "model (cache.verifier_model) scored below cache.verifier_threshold.",
          m.verifier_rejections);
  append_metric_header(out, "coinfer_cache_feedback_total", "counter",
                       "Hits reported right or wrong through POST /v2/cache/feedback.");
  out += "coinfer_cache_feedback_total{verdict=\"right\"} ";
  out += std::to_string(m.feedback_right.value());
  out += "\ncoinfer_cache_feedback_total{verdict=\"wrong\"} ";
  out += std::to_string(m.feedback_wrong.value());
  out += '\n';
  const auto stats = cache.stats();
  const auto gauge = [&out](std::string_view name, std::string_view help, std::size_t value) {
    append_metric_header(out, name, "gauge", help);
    out += name;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  };
  gauge("coinfer_cache_entries", "Entries in the cache.", stats.entries);
  gauge("coinfer_cache_bytes", "Bytes the cache's entries hold.", stats.bytes);
  gauge("coinfer_cache_vectors", "Vectors in the cache's indexes.", stats.vectors);
  append_metric_header(out, "coinfer_cache_lookup_seconds", "histogram",
                       "One exact or semantic lookup, the embedding excluded.");
  append_histogram_series(out, "coinfer_cache_lookup_seconds", R"(cache="response")",
                          m.lookup_seconds);
  append_metric_header(out, "coinfer_cache_nearest_similarity", "histogram",
                       "Cosine similarity of the nearest cached request per semantic lookup.");
  append_histogram_series(out, "coinfer_cache_nearest_similarity", R"(cache="response")",
                          m.nearest_similarity);
}

// ---- Maintenance --------------------------------------------------------------------------

CacheMaintenance::CacheMaintenance(SemanticCache& cache, std::filesystem::path snapshot,
                                   std::chrono::seconds snapshot_interval)
    : cache_(cache), snapshot_(std::move(snapshot)), interval_(snapshot_interval) {
  thread_ = std::thread([this] { run(); });
}

CacheMaintenance::~CacheMaintenance() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (!snapshot_.empty()) {
    if (auto status = cache_.save(snapshot_); !status.ok()) {
      spdlog::error("response cache: {}", status.message());
    } else {
      spdlog::info("response cache: {} entries saved to {}", cache_.stats().entries,
                   snapshot_.string());
    }
  }
}

void CacheMaintenance::run() {
  auto last_snapshot = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    cache_.expire();
    cache_.rebuild_indexes();
    const auto now = std::chrono::steady_clock::now();
    if (!snapshot_.empty() && interval_.count() > 0 && now - last_snapshot >= interval_) {
      last_snapshot = now;
      if (auto status = cache_.save(snapshot_); !status.ok()) {
        spdlog::error("response cache: {}", status.message());
      }
    }
    lock.lock();
  }
}

}  // namespace coinfer::cache
