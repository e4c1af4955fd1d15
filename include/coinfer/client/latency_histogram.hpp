#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>

namespace coinfer::client {

// An HDR-style latency histogram: O(1) record, fixed memory, mergeable.
//
// Values are nanoseconds. Buckets are log-linear: values below 256 ns each have their own
// bucket; above, every power-of-two range [2^e, 2^(e+1)) is split into 128 equal
// sub-buckets, so a bucket is at most 1/128 (0.78%) of its lower edge wide and a reported
// value (the bucket's midpoint) is within 0.4% of every value that fell into it: better than 2
// significant digits. The buckets holding the minimum and the maximum report those (exact p0
// and p100; within a bucket's width, 0.8%, for the rest of those buckets). Values above
// max_trackable_ns (about 137 s) count in the top bucket; min and max stay exact.
//
// Layout: counts_[kBuckets] of uint64, 3968 buckets = 31 KiB; index 0..255 = the value,
// then 128 per octave from 2^8 up to 2^37 ns.
class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per octave
  static constexpr int kMaxExponent = 36;   // top octave [2^36, 2^37) ns
  static constexpr std::uint64_t max_trackable_ns = (std::uint64_t{1} << (kMaxExponent + 1)) - 1;

  void record_ns(std::uint64_t ns) noexcept;
  void record(std::chrono::nanoseconds latency) noexcept {
    record_ns(latency.count() < 0 ? 0 : static_cast<std::uint64_t>(latency.count()));
  }
  // Adds every value recorded in `other`.
  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min_ns() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max_ns() const noexcept { return max_; }
  double mean_ns() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  // The value at percentile p in [0, 100]: the smallest recorded value v such that at least
  // p% of the values are <= v, to within the bucket resolution above. 0 when empty.
  std::uint64_t percentile_ns(double p) const noexcept;

 private:
  static constexpr int kLinearBuckets = 2 << kSubBucketBits;  // 256: exact below 2^8
  static constexpr int kBuckets =
      kLinearBuckets + (kMaxExponent - kSubBucketBits) * (1 << kSubBucketBits);

  static int index_of(std::uint64_t ns) noexcept;
  static std::uint64_t midpoint_of(int index) noexcept;

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
  double sum_ = 0.0;
};

}  // namespace coinfer::client
