#include "coinfer/client/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace coinfer::client {

int LatencyHistogram::index_of(std::uint64_t ns) noexcept {
  if (ns < kLinearBuckets) return static_cast<int>(ns);
  ns = std::min(ns, max_trackable_ns);
  const int exponent = std::bit_width(ns) - 1;  // 8..kMaxExponent
  const int shift = exponent - kSubBucketBits;
  const auto sub = static_cast<int>(ns >> shift) - (1 << kSubBucketBits);  // 0..127
  return kLinearBuckets + (exponent - kSubBucketBits - 1) * (1 << kSubBucketBits) + sub;
}

std::uint64_t LatencyHistogram::midpoint_of(int index) noexcept {
  if (index < kLinearBuckets) return static_cast<std::uint64_t>(index);
  const int octave = (index - kLinearBuckets) >> kSubBucketBits;
  const int sub = (index - kLinearBuckets) & ((1 << kSubBucketBits) - 1);
  const int shift = octave + 1;  // exponent - kSubBucketBits
  const std::uint64_t lower = std::uint64_t((1 << kSubBucketBits) + sub) << shift;
  return lower + ((std::uint64_t{1} << shift) >> 1);
}

void LatencyHistogram::record_ns(std::uint64_t ns) noexcept {
  ++counts_[static_cast<std::size_t>(index_of(ns))];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += static_cast<double>(ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void LatencyHistogram::reset() noexcept {
  *this = LatencyHistogram{};
}

std::uint64_t LatencyHistogram::percentile_ns(double p) const noexcept {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  const auto wanted = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))));
  // The buckets holding min and max report min and max: exact for p0 and p100, off by less
  // than a bucket within them, and the only right answer for the top bucket, which also holds
  // the values beyond max_trackable_ns. Others report their midpoint.
  const auto bottom = static_cast<std::size_t>(index_of(min_));
  const auto top = static_cast<std::size_t>(index_of(max_));
  std::uint64_t seen = 0;
  for (std::size_t i = bottom; i < top; ++i) {
    seen += counts_[i];
    if (seen >= wanted) return i == bottom ? min_ : midpoint_of(static_cast<int>(i));
  }
  return max_;
}

}  // namespace coinfer::client
