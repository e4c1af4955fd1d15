// Internal to protocol/: the live statistics stream and the dashboard that plots it.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "coinfer/net/router.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {

// What one statistics message is computed from: every counter and histogram bucket the
// stream reports, read at one moment. A message is the difference of two samples.
struct StatsSample {
  struct Model {
    std::string name, version;
    std::uint64_t success = 0, failure = 0, rejected = 0, expired = 0, cancelled = 0;
    std::uint64_t rows = 0, batches = 0;
    double compute_s = 0;  // the compute histogram's sum
    std::int64_t queue_depth = 0;
    std::vector<std::uint64_t> latency, batch_size;  // request_duration, batch_size buckets
    std::span<const double> latency_bounds, batch_bounds;  // the live histograms' (seconds)
  };
  struct Generator {
    std::string name;
    std::uint64_t success = 0, failure = 0, prompt_tokens = 0, generation_tokens = 0;
    std::uint64_t preemptions = 0;
    std::int64_t running = 0, waiting = 0;
    double kv_cache_usage = 0;
    std::vector<std::uint64_t> ttft, itl;  // time to first token, time per output token
    std::span<const double> ttft_bounds, itl_bounds;
  };
  struct Cache {
    std::uint64_t exact_hits = 0, semantic_hits = 0, misses = 0;
    std::uint64_t feedback_right = 0, feedback_wrong = 0;  // since start
    std::size_t entries = 0, bytes = 0;
  };
  std::chrono::steady_clock::time_point taken;
  double unix_time = 0;
  std::vector<Model> models;
  std::vector<Generator> generators;
  bool has_cache = false;
  Cache cache;
};

// Reads the models, language models and cache that `tenant` may see.
void take_stats_sample(const ModelRepository& repo, const Tenant* tenant, StatsSample& out);

// One message of /v2/stats/stream: rates and window percentiles between `before` and `now`
// (samples of one repository), gauges and totals as of `now`. JSON, one line.
void write_stats_message(const StatsSample& before, const StatsSample& now, std::string& out);

// GET /v2/stats/stream (Server-Sent Events, a message a second) and GET /dashboard.
void add_stats_routes(net::Router& router, const ModelRepository& repository);

}  // namespace coinfer
