#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace coinfer {

// A monotonically increasing count, safe to bump from any thread.
class Counter {
 public:
  void add(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A cumulative histogram with fixed upper bounds, Prometheus style (the +Inf bucket implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value) noexcept;

  std::span<const double> bounds() const noexcept { return bounds_; }
  // Count of observations <= bounds()[i] (not cumulative; the renderer accumulates).
  std::uint64_t bucket(std::size_t i) const noexcept { return counts_[i].load(std::memory_order_relaxed); }
  // The buckets summed: no count of its own, so an observation is two atomic updates.
  std::uint64_t count() const noexcept;
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  // Every bucket's count (bounds().size() + 1, the +Inf last) into `out`, resized.
  void read_buckets(std::vector<std::uint64_t>& out) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // bounds_.size() + 1 (the +Inf)
  std::atomic<double> sum_{0};
};

// Everything measured about one served model. Names follow Triton's metrics where one exists,
// with the prefix coinfer_ (see docs/METRICS.md).
struct ModelMetrics {
  ModelMetrics();

  Counter request_success;   // requests answered 200
  Counter request_failure;   // requests answered with an error, any cause
  Counter inference_count;   // rows computed (the batch dimensions summed)
  Counter exec_count;        // batches computed: inference_count / exec_count = mean batch
  Counter rejected;          // queue full: 503
  Counter expired;           // timed out while queued: 504
  Counter cancelled;         // client went away while queued
  std::atomic<std::int64_t> queue_depth{0};
  Histogram queue_duration;    // seconds
  Histogram compute_duration;  // seconds, per batch
  Histogram request_duration;  // seconds
  Histogram batch_size;

  // Triton's statistics extension (GET /v2/models/{m}/stats) counts per request and in ns:
  Counter failure_ns;          // time of the requests answered with an error, summed
  Counter compute_requests;    // requests computed: each batch counts its requests
  Counter compute_request_ns;  // ... and each of them the batch's compute time
  std::atomic<std::int64_t> last_inference_ms{0};  // wall clock of the last batch's end, ms since the epoch
  // Batches by size (1..kMaxStatsBatch; larger ones in the last) and their compute time.
  static constexpr int kMaxStatsBatch = 1024;
  struct BatchSizeStats {
    Counter count;
    Counter compute_ns;
  };
  std::unique_ptr<BatchSizeStats[]> by_batch_size;  // [kMaxStatsBatch + 1], index = rows
};

// The q-quantile (0..1) of observations counted per bucket (`counts`: bounds.size() + 1, not
// cumulative, the +Inf last), interpolated linearly within its bucket as Prometheus's
// histogram_quantile does (the first bucket from 0; one in +Inf reads as the last bound).
// NaN when nothing was counted.
double histogram_quantile(std::span<const double> bounds, std::span<const std::uint64_t> counts,
                          double q) noexcept;

// Renders every model's metrics in the Prometheus text exposition format (version 0.0.4).
struct NamedModelMetrics {
  std::string model;
  std::string version;
  const ModelMetrics* metrics;
};
void render_prometheus(std::span<const NamedModelMetrics> models, std::string& out);

// Pieces of the text format, for other metric families (generation/): a family's # HELP and
// # TYPE lines, and one histogram series (_bucket lines with `le`, _sum, _count) whose labels
// are `labels` (e.g. model="m", without braces).
void append_metric_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help);
void append_histogram_series(std::string& out, std::string_view name, std::string_view labels,
                             const Histogram& histogram);

}  // namespace coinfer
