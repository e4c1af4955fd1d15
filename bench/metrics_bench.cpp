// Metrics on the request path: coinfer's hand-written counters and histograms against
// prometheus-cpp's (Debian prometheus-cpp-dev), the library the project would otherwise use.
// Per request the server bumps two counters and observes three histograms; a scrape renders
// every family. Both are measured, the updates also from two threads at once (the I/O thread
// and the compute thread touch the same model's metrics). docs/OPERATIONS.md has the figures.
//
//   build/bench/coinfer-metrics-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <string>
#include <vector>

#include "coinfer/core/metrics.hpp"

namespace {

// The buckets coinfer's time histograms use: 10 µs · 2^k, k = 0..19 (seconds).
std::vector<double> time_bounds() {
  std::vector<double> bounds;
  for (double b = 10e-6; bounds.size() < 20; b *= 2) bounds.push_back(b);
  return bounds;
}

// Request durations spread over the buckets, the same sequence for both libraries.
double duration_at(std::size_t i) { return 20e-6 * static_cast<double>(1 + (i * 7919) % 500); }

coinfer::ModelMetrics& coinfer_metrics() {
  static coinfer::ModelMetrics metrics;
  return metrics;
}

struct PromMetrics {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Counter* success;
  prometheus::Counter* rows;
  prometheus::Histogram* queue;
  prometheus::Histogram* compute;
  prometheus::Histogram* request;
  PromMetrics() {
    const prometheus::Labels labels{{"model", "digits"}, {"version", "1"}};
    success = &prometheus::BuildCounter().Name("coinfer_inference_request_success_total")
                   .Help("Number of successful inference requests").Register(*registry).Add(labels);
    rows = &prometheus::BuildCounter().Name("coinfer_inference_count_total")
                .Help("Number of inferences performed").Register(*registry).Add(labels);
    auto histogram = [&](const char* name) {
      return &prometheus::BuildHistogram().Name(name).Help("seconds").Register(*registry)
                  .Add(labels, prometheus::Histogram::BucketBoundaries(time_bounds()));
    };
    queue = histogram("coinfer_inference_queue_duration_seconds");
    compute = histogram("coinfer_inference_compute_duration_seconds");
    request = histogram("coinfer_inference_request_duration_seconds");
  }
};

PromMetrics& prom_metrics() {
  static PromMetrics metrics;
  return metrics;
}

// One request's updates: success, rows, queue, compute and request durations.
void BM_RequestUpdates_Coinfer(benchmark::State& state) {
  auto& m = coinfer_metrics();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 1000;
  for (auto _ : state) {
    const double d = duration_at(i++);
    m.request_success.add();
    m.inference_count.add();
    m.queue_duration.observe(d * 0.1);
    m.compute_duration.observe(d * 0.5);
    m.request_duration.observe(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RequestUpdates_Coinfer)->Threads(1)->Threads(2)->UseRealTime();

void BM_RequestUpdates_PrometheusCpp(benchmark::State& state) {
  auto& m = prom_metrics();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 1000;
  for (auto _ : state) {
    const double d = duration_at(i++);
    m.success->Increment();
    m.rows->Increment();
    m.queue->Observe(d * 0.1);
    m.compute->Observe(d * 0.5);
    m.request->Observe(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RequestUpdates_PrometheusCpp)->Threads(1)->Threads(2)->UseRealTime();

// A scrape of the same families (one model): text exposition into a reused string / stream.
void BM_Scrape_Coinfer(benchmark::State& state) {
  const coinfer::NamedModelMetrics models[] = {{"digits", "1", &coinfer_metrics()}};
  std::string out;
  for (auto _ : state) {
    out.clear();
    coinfer::render_prometheus(models, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_Scrape_Coinfer);

void BM_Scrape_PrometheusCpp(benchmark::State& state) {
  auto& m = prom_metrics();
  const prometheus::TextSerializer serializer;
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    serializer.Serialize(out, m.registry->Collect());
    bytes = out.str().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape_PrometheusCpp);

}  // namespace

BENCHMARK_MAIN();
