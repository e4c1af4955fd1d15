#pragma once

#include <cstdint>
#include <string>

namespace coinfer {

// How one request may use the response cache (HTTP: X-Cache-Namespace and Cache-Control).
struct CacheDirectives {
  std::string ns = "default";  // under "<tenant>/" when API keys are on
  bool lookup = true;          // false with Cache-Control: no-cache or no-store
  bool store = true;           // false with Cache-Control: no-store
};

// What the cache did for one request, for the X-Cache headers.
struct CacheOutcome {
  bool looked = false;  // a lookup ran (a model with a cache, lookups allowed)
  bool hit = false;
  bool semantic = false;    // the hit was by similarity
  float similarity = 1.0f;  // the hit's, or on a semantic miss the nearest entry's
  bool show_similarity = false;
  std::uint64_t entry = 0;  // the hit's entry, or the entry the answer was stored as
};

}  // namespace coinfer
