// Helpers shared by the unit tests: files of the source tree, deterministic random data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

namespace coinfer::test {

// A file of the source tree (fixtures, assets), wherever the tests run from.
inline std::filesystem::path source_path(const char* relative) {
#ifdef COINFER_SOURCE_DIR
  return std::filesystem::path(COINFER_SOURCE_DIR) / relative;
#else
  return relative;
#endif
}

// `count` values from N(0, stddev), the same for the same seed.
inline std::vector<float> random_normal(std::size_t count, std::uint32_t seed,
                                        float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace coinfer::test
