#include "coinfer/client/latency_histogram.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using coinfer::client::LatencyHistogram;

namespace {

constexpr std::uint64_t us(std::uint64_t n) {
  return n * 1000;
}

// |actual - expected| <= 1% of expected.
bool within_1pct(std::uint64_t actual, std::uint64_t expected) {
  const double diff = static_cast<double>(actual) - static_cast<double>(expected);
  return (diff < 0 ? -diff : diff) <= 0.01 * static_cast<double>(expected);
}

}  // namespace

TEST_CASE("histogram percentiles of a uniform 1..10000 us distribution are within 1%") {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 10'000; ++v) h.record_ns(us(v));
  CHECK(h.count() == 10'000);
  CHECK(h.min_ns() == us(1));
  CHECK(h.max_ns() == us(10'000));
  CHECK(h.mean_ns() == doctest::Approx(us(5000) + 500.0));
  CHECK(within_1pct(h.percentile_ns(50), us(5000)));
  CHECK(within_1pct(h.percentile_ns(90), us(9000)));
  CHECK(within_1pct(h.percentile_ns(99), us(9900)));
  CHECK(within_1pct(h.percentile_ns(99.9), us(9990)));
  CHECK(h.percentile_ns(100) == us(10'000));
  CHECK(h.percentile_ns(0) == us(1));
}

TEST_CASE("histogram percentiles of a shuffled uniform distribution do not depend on order") {
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v <= 10'000; ++v) values.push_back(us(v));
  std::shuffle(values.begin(), values.end(), std::mt19937_64(42));
  LatencyHistogram h;
  for (auto v : values) h.record_ns(v);
  CHECK(within_1pct(h.percentile_ns(50), us(5000)));
  CHECK(within_1pct(h.percentile_ns(99), us(9900)));
}

TEST_CASE("histogram of a constant reports that constant at every percentile") {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.record(std::chrono::microseconds(1234));
  for (double p : {0.0, 1.0, 50.0, 99.0, 99.9, 100.0}) CHECK(h.percentile_ns(p) == us(1234));
  CHECK(h.mean_ns() == doctest::Approx(us(1234)));
}

TEST_CASE("histogram of a bimodal distribution separates the two modes") {
  // 90% at 1 ms, 10% at 100 ms: p50 and p89 in the fast mode, p91 and p99 in the slow one.
  LatencyHistogram h;
  for (int i = 0; i < 9000; ++i) h.record_ns(us(1000));
  for (int i = 0; i < 1000; ++i) h.record_ns(us(100'000));
  CHECK(within_1pct(h.percentile_ns(50), us(1000)));
  CHECK(within_1pct(h.percentile_ns(89), us(1000)));
  CHECK(within_1pct(h.percentile_ns(90), us(1000)));
  CHECK(within_1pct(h.percentile_ns(91), us(100'000)));
  CHECK(within_1pct(h.percentile_ns(99), us(100'000)));
  CHECK(h.mean_ns() == doctest::Approx(0.9 * us(1000) + 0.1 * us(100'000)));
}

TEST_CASE("histogram keeps 1% accuracy from 1 us to 100 s") {
  for (std::uint64_t v = us(1); v <= us(100'000'000); v = v * 13 / 10 + 7) {
    LatencyHistogram h;
    h.record_ns(v);
    h.record_ns(v + 1);  // two values, so the reported midpoint is not just clamped to min/max
    h.record_ns(v * 3);
    CAPTURE(v);
    CHECK(within_1pct(h.percentile_ns(50), v));
  }
}

TEST_CASE("histogram values beyond the tracked range keep an exact max") {
  LatencyHistogram h;
  h.record_ns(LatencyHistogram::max_trackable_ns * 4);
  h.record_ns(us(5));
  CHECK(h.max_ns() == LatencyHistogram::max_trackable_ns * 4);
  CHECK(h.percentile_ns(100) == LatencyHistogram::max_trackable_ns * 4);
  CHECK(within_1pct(h.percentile_ns(1), us(5)));
}

TEST_CASE("merged histograms equal one histogram of all the values") {
  LatencyHistogram a, b, all;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(7.0, 1.0);  // around 1 ms in us
  for (int i = 0; i < 20'000; ++i) {
    const auto v = us(static_cast<std::uint64_t>(dist(rng)) + 1);
    (i % 3 ? a : b).record_ns(v);
    all.record_ns(v);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.min_ns() == all.min_ns());
  CHECK(a.max_ns() == all.max_ns());
  CHECK(a.mean_ns() == doctest::Approx(all.mean_ns()));
  for (double p : {50.0, 90.0, 99.0, 99.9}) CHECK(a.percentile_ns(p) == all.percentile_ns(p));
}

TEST_CASE("an empty histogram reports zeros and reset empties a histogram") {
  LatencyHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.percentile_ns(99) == 0);
  CHECK(h.min_ns() == 0);
  CHECK(h.mean_ns() == 0.0);
  h.record_ns(us(3));
  h.reset();
  CHECK(h.count() == 0);
  CHECK(h.max_ns() == 0);
}
