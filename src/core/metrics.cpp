#include "coinfer/core/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace coinfer {
namespace {

std::vector<double> exponential(double first, double factor, int count) {
  std::vector<double> bounds;
  for (double b = first; count-- > 0; b *= factor) bounds.push_back(b);
  return bounds;
}

void append_number(std::string& out, double value) {
  char buffer[32];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
}

void append_labels(std::string& out, const NamedModelMetrics& m, std::string_view extra = {}) {
  out += "{model=\"";
  out += m.model;  // model names come from config keys: no quotes or newlines
  out += "\",version=\"";
  out += m.version;
  out += '"';
  if (!extra.empty()) {
    out += ',';
    out += extra;
  }
  out += '}';
}

std::string labels_of(const NamedModelMetrics& m) {
  std::string labels;
  append_labels(labels, m);
  return labels.substr(1, labels.size() - 2);  // without the braces
}

}  // namespace

void append_metric_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void append_histogram_series(std::string& out, std::string_view name, std::string_view labels,
                             const Histogram& histogram) {
  auto line = [&](std::string_view suffix, std::string_view le, double value) {
    out += name;
    out += suffix;
    out += '{';
    out += labels;
    if (!le.empty()) {
      out += ",le=\"";
      out += le;
      out += '"';
    }
    out += "} ";
    append_number(out, value);
    out += '\n';
  };
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= histogram.bounds().size(); ++i) {
    cumulative += histogram.bucket(i);
    char buffer[32];
    const std::string_view le =
        i < histogram.bounds().size()
            ? std::string_view(buffer, static_cast<std::size_t>(
                  std::to_chars(buffer, buffer + sizeof buffer, histogram.bounds()[i]).ptr - buffer))
            : std::string_view("+Inf");
    line("_bucket", le, static_cast<double>(cumulative));
  }
  line("_sum", {}, histogram.sum());
  line("_count", {}, static_cast<double>(cumulative));  // equal to the +Inf bucket
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      counts_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) counts_[i] = 0;
}

void Histogram::observe(double value) noexcept {
  const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[static_cast<std::size_t>(at)].fetch_add(1, std::memory_order_relaxed);
  double sum = sum_.load(std::memory_order_relaxed);
  while (!sum_.compare_exchange_weak(sum, sum + value, std::memory_order_relaxed)) {
  }
}

std::uint64_t Histogram::count() const noexcept {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) total += bucket(i);
  return total;
}

void Histogram::read_buckets(std::vector<std::uint64_t>& out) const {
  out.resize(bounds_.size() + 1);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bucket(i);
}

double histogram_quantile(std::span<const double> bounds, std::span<const std::uint64_t> counts,
                          double q) noexcept {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  if (total == 0 || bounds.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(total);
  double below = 0;  // observations in the buckets before i
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double in = static_cast<double>(counts[i]);
    if (in > 0 && below + in >= rank) {
      if (i >= bounds.size()) return bounds.back();  // the +Inf bucket
      const double lower = i == 0 ? 0.0 : bounds[i - 1];
      return lower + (bounds[i] - lower) * ((rank - below) / in);
    }
    below += in;
  }
  return bounds.back();
}

ModelMetrics::ModelMetrics()
    : queue_duration(exponential(10e-6, 2, 20)),  // 10 µs .. ~5 s
      compute_duration(exponential(10e-6, 2, 20)),
      request_duration(exponential(10e-6, 2, 20)),
      batch_size(exponential(1, 2, 11)),            // 1 .. 1024
      by_batch_size(std::make_unique<BatchSizeStats[]>(kMaxStatsBatch + 1)) {}

void render_prometheus(std::span<const NamedModelMetrics> models, std::string& out) {
  struct CounterMetric {
    const char* name;
    const char* help;
    const Counter ModelMetrics::*field;
  };
  static constexpr CounterMetric kCounters[] = {
      {"coinfer_inference_request_success_total", "Number of successful inference requests",
       &ModelMetrics::request_success},
      {"coinfer_inference_request_failure_total", "Number of failed inference requests",
       &ModelMetrics::request_failure},
      {"coinfer_inference_count_total", "Number of inferences performed (batch rows summed)",
       &ModelMetrics::inference_count},
      {"coinfer_inference_exec_count_total", "Number of model executions (batches)",
       &ModelMetrics::exec_count},
      {"coinfer_inference_rejected_total", "Requests rejected because the queue was full",
       &ModelMetrics::rejected},
      {"coinfer_inference_expired_total", "Requests whose timeout passed while queued",
       &ModelMetrics::expired},
      {"coinfer_inference_cancelled_total", "Requests cancelled by the client while queued",
       &ModelMetrics::cancelled},
  };
  for (const auto& c : kCounters) {
    append_metric_header(out, c.name, "counter", c.help);
    for (const auto& m : models) {
      out += c.name;
      append_labels(out, m);
      out += ' ';
      append_number(out, static_cast<double>((m.metrics->*c.field).value()));
      out += '\n';
    }
  }
  append_metric_header(out, "coinfer_inference_queue_depth", "gauge", "Requests waiting in the batcher's queue");
  for (const auto& m : models) {
    out += "coinfer_inference_queue_depth";
    append_labels(out, m);
    out += ' ';
    append_number(out, static_cast<double>(m.metrics->queue_depth.load()));
    out += '\n';
  }

  struct HistogramMetric {
    const char* name;
    const char* help;
    const Histogram ModelMetrics::*field;
  };
  static constexpr HistogramMetric kHistograms[] = {
      {"coinfer_inference_queue_duration_seconds", "Time requests waited in the queue",
       &ModelMetrics::queue_duration},
      {"coinfer_inference_compute_duration_seconds", "Time of the batch forward pass",
       &ModelMetrics::compute_duration},
      {"coinfer_inference_request_duration_seconds", "End-to-end request time in the server",
       &ModelMetrics::request_duration},
      {"coinfer_inference_batch_size", "Rows per executed batch", &ModelMetrics::batch_size},
  };
  for (const auto& h : kHistograms) {
    append_metric_header(out, h.name, "histogram", h.help);
    for (const auto& m : models) append_histogram_series(out, h.name, labels_of(m), m.metrics->*h.field);
  }
}

}  // namespace coinfer
