// The response cache's snapshot reader (SemanticCache::restore, what load() does with a file).
//
// Input: a snapshot without its trailing checksum; the harness appends the FNV-1a of the input
// (the format's checksum, so that mutations reach the parser behind it). A snapshot that
// restores keeps its promise: every entry is findable by its exact key's id, its vector is in
// its partition's index (vectors never outnumber entries), and the cache stays usable.
#include <cstring>
#include <string>

#include "coinfer/cache/semantic_cache.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  bytes.append(reinterpret_cast<const char*>(&hash), sizeof(hash));

  cache::CacheOptions options;
  options.dimension = 4;
  options.embedder = "fuzz:1";
  options.max_entries = 64;
  options.max_bytes = 1 << 20;
  cache::SemanticCache cache(options);
  if (!cache.restore(bytes).ok()) {
    check(cache.stats().entries == 0, "a refused snapshot restores nothing");
    return 0;
  }
  const auto stats = cache.stats();
  check(stats.entries <= options.max_entries && stats.bytes <= options.max_bytes,
        "a restored cache is within its limits");
  check(stats.vectors <= stats.entries, "no vector without its entry");
  const float query[4] = {1, 0, 0, 0};
  cache::CacheHit hit;
  (void)cache.lookup({"default", "s", "q"}, query, hit);
  (void)cache.lookup_exact({"default", "s", "q"}, hit);
  cache.expire();
  (void)cache.insert({"default", "s", "q"}, query, "a");
  check(cache.stats().vectors <= cache.stats().entries, "no vector without its entry");
  return 0;
}
