#include "coinfer/core/metrics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using coinfer::Histogram;
using coinfer::histogram_quantile;

TEST_CASE("histogram_quantile interpolates within the bucket that holds the rank") {
  const std::vector<double> bounds{1, 2, 4, 8};
  // 10 observations in (0, 1], 10 in (2, 4]: the median is the top of the first bucket, the
  // 75th percentile halfway through (2, 4].
  const std::vector<std::uint64_t> counts{10, 0, 10, 0, 0};
  CHECK(histogram_quantile(bounds, counts, 0.5) == doctest::Approx(1.0));
  CHECK(histogram_quantile(bounds, counts, 0.75) == doctest::Approx(3.0));
  CHECK(histogram_quantile(bounds, counts, 0.25) == doctest::Approx(0.5));
  CHECK(histogram_quantile(bounds, counts, 1.0) == doctest::Approx(4.0));
}

TEST_CASE("histogram_quantile: nothing counted is NaN, the +Inf bucket reads as the last bound") {
  const std::vector<double> bounds{1, 2};
  CHECK(std::isnan(histogram_quantile(bounds, std::vector<std::uint64_t>{0, 0, 0}, 0.5)));
  CHECK(histogram_quantile(bounds, std::vector<std::uint64_t>{0, 0, 5}, 0.99) == 2.0);
  CHECK(histogram_quantile(bounds, std::vector<std::uint64_t>{1, 0, 99}, 0.5) == 2.0);
}

TEST_CASE("a Histogram's buckets read back as observed, for window differences") {
  Histogram h({0.001, 0.01, 0.1});
  for (double v : {0.0005, 0.005, 0.005, 0.05, 5.0}) h.observe(v);
  std::vector<std::uint64_t> buckets;
  h.read_buckets(buckets);
  CHECK(buckets == std::vector<std::uint64_t>{1, 2, 1, 1});
  CHECK(histogram_quantile(h.bounds(), buckets, 0.5) == doctest::Approx(0.00775));  // rank 2.5 of 5
}
