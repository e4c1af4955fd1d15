#include "stats_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>

#include "coinfer/cache/semantic_cache.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/endpoint.hpp"

namespace coinfer {

extern const char kDashboardHtml[];  // dashboard.html, compiled in (CMakeLists.txt)

namespace {

namespace asio = boost::asio;
using net::HttpRequest;
using net::HttpResponse;

constexpr auto kInterval = std::chrono::seconds(1);

double round3(double x) {
  return std::round(x * 1000.0) / 1000.0;
}

// `now` - `before` per bucket (a model that was not in `before` counts from zero).
std::vector<std::uint64_t> window(const std::vector<std::uint64_t>& now,
                                  const std::vector<std::uint64_t>* before) {
  std::vector<std::uint64_t> d(now);
  if (before && before->size() == now.size()) {
    for (std::size_t i = 0; i < d.size(); ++i) d[i] -= std::min(d[i], (*before)[i]);
  }
  return d;
}

template <class T>
const T* find_named(const std::vector<T>& v, const std::string& name) {
  for (const T& x : v) {
    if (x.name == name) return &x;
  }
  return nullptr;
}

// {"p50": ms, "p99": ms} of a window's buckets (bounds in seconds); null when empty.
void append_percentiles_ms(std::string& out, std::span<const double> bounds,
                           const std::vector<std::uint64_t>& counts) {
  out += "{\"p50\":";
  json_append_number(out, round3(histogram_quantile(bounds, counts, 0.50) * 1e3));
  out += ",\"p99\":";
  json_append_number(out, round3(histogram_quantile(bounds, counts, 0.99) * 1e3));
  out += '}';
}

void append_field(std::string& out, std::string_view key, double value) {
  out += ",\"";
  out += key;
  out += "\":";
  json_append_number(out, round3(value));
}

void append_count(std::string& out, std::string_view key, std::uint64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  json_append_number(out, value);
}

std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : 0;
}

// A window's answered requests: "requests_per_s", "success", "failure".
void append_requests(std::string& out, std::uint64_t success, std::uint64_t failure,
                     double seconds) {
  append_field(out, "requests_per_s", static_cast<double>(success + failure) / seconds);
  append_count(out, "success", success);
  append_count(out, "failure", failure);
}

}  // namespace

void take_stats_sample(const ModelRepository& repo, const Tenant* tenant, StatsSample& out) {
  out.taken = std::chrono::steady_clock::now();
  out.unix_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  out.models.clear();
  for (const auto& e : repo.endpoints()) {
    if (!ModelRepository::visible(*e, tenant)) continue;
    const ModelMetrics& m = e->metrics();
    StatsSample::Model s;
    s.name = e->metadata().name;
    s.version = e->metadata().version;
    s.success = m.request_success.value();
    s.failure = m.request_failure.value();
    s.rejected = m.rejected.value();
    s.expired = m.expired.value();
    s.cancelled = m.cancelled.value();
    s.rows = m.inference_count.value();
    s.batches = m.exec_count.value();
    s.compute_s = m.compute_duration.sum();
    s.queue_depth = m.queue_depth.load(std::memory_order_relaxed);
    m.request_duration.read_buckets(s.latency);
    m.batch_size.read_buckets(s.batch_size);
    s.latency_bounds = m.request_duration.bounds();
    s.batch_bounds = m.batch_size.bounds();
    out.models.push_back(std::move(s));
  }
  out.generators.clear();
  for (const auto& g : repo.language_models()) {
    GenerationEndpoint* visible = nullptr;
    if (!repo.find_generation(g->name(), tenant, visible).ok()) continue;
    const generation::GenerationMetrics& m = g->generator().metrics();
    StatsSample::Generator s;
    s.name = g->name();
    s.success = m.request_success.value();
    s.failure = m.request_failure.value();
    s.prompt_tokens = m.prompt_tokens.value();
    s.generation_tokens = m.generation_tokens.value();
    s.preemptions = m.num_preemptions.value();
    s.running = m.num_requests_running.load(std::memory_order_relaxed);
    s.waiting = m.num_requests_waiting.load(std::memory_order_relaxed);
    s.kv_cache_usage = m.kv_cache_usage.load(std::memory_order_relaxed);
    m.time_to_first_token_s.read_buckets(s.ttft);
    m.time_per_output_token_s.read_buckets(s.itl);
    s.ttft_bounds = m.time_to_first_token_s.bounds();
    s.itl_bounds = m.time_per_output_token_s.bounds();
    out.generators.push_back(std::move(s));
  }
  out.has_cache = repo.cache() != nullptr;
  if (out.has_cache) {
    const cache::SemanticCache& cache = repo.cache()->cache();
    const cache::CacheMetrics& m = cache.metrics();
    out.cache.exact_hits = m.exact_hits.value();
    out.cache.semantic_hits = m.semantic_hits.value();
    out.cache.misses = m.misses.value();
    out.cache.feedback_right = m.feedback_right.value();
    out.cache.feedback_wrong = m.feedback_wrong.value();
    const auto stats = cache.stats();
    out.cache.entries = stats.entries;
    out.cache.bytes = stats.bytes;
  }
}

void write_stats_message(const StatsSample& before, const StatsSample& now, std::string& out) {
  const double seconds =
      std::max(1e-3, std::chrono::duration<double>(now.taken - before.taken).count());
  out += "{\"time\":";
  json_append_number(out, round3(now.unix_time));
  append_field(out, "interval_s", seconds);
  out += ",\"models\":[";
  double busy = 0;  // compute seconds of every model in the window
  for (std::size_t i = 0; i < now.models.size(); ++i) {
    const auto& m = now.models[i];
    const auto* b = find_named(before.models, m.name);
    if (b && b->version != m.version) b = nullptr;
    const StatsSample::Model zero;
    const auto& p = b ? *b : zero;
    if (i > 0) out += ',';
    out += "{\"name\":";
    json_append_string(out, m.name);
    out += ",\"version\":";
    json_append_string(out, m.version);
    append_requests(out, delta(m.success, p.success), delta(m.failure, p.failure), seconds);
    append_count(out, "rejected", delta(m.rejected, p.rejected));
    append_count(out, "expired", delta(m.expired, p.expired));
    append_count(out, "cancelled", delta(m.cancelled, p.cancelled));
    append_field(out, "rows_per_s", static_cast<double>(delta(m.rows, p.rows)) / seconds);
    append_field(out, "batches_per_s", static_cast<double>(delta(m.batches, p.batches)) / seconds);
    append_count(out, "queue_depth",
                 static_cast<std::uint64_t>(std::max<std::int64_t>(0, m.queue_depth)));
    const double compute = std::max(0.0, m.compute_s - p.compute_s);
    busy += compute;
    append_field(out, "utilization", std::min(1.0, compute / seconds));
    out += ",\"latency_ms\":";
    append_percentiles_ms(out, m.latency_bounds, window(m.latency, b ? &b->latency : nullptr));
    // Batches in the window by size: {"1": n, "2": n, "4": n, ...}, the bucket's upper bound.
    out += ",\"batch_sizes\":{";
    const auto sizes = window(m.batch_size, b ? &b->batch_size : nullptr);
    bool first = true;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] == 0) continue;
      if (!first) out += ',';
      first = false;
      out += '"';
      if (k < m.batch_bounds.size()) {
        json_append_number(out, static_cast<std::int64_t>(m.batch_bounds[k]));
      } else {
        out += "+Inf";
      }
      out += "\":";
      json_append_number(out, sizes[k]);
    }
    out += "}}";
  }
  out += "],\"generators\":[";
  for (std::size_t i = 0; i < now.generators.size(); ++i) {
    const auto& g = now.generators[i];
    const auto* b = find_named(before.generators, g.name);
    const StatsSample::Generator zero;
    const auto& p = b ? *b : zero;
    if (i > 0) out += ',';
    out += "{\"name\":";
    json_append_string(out, g.name);
    append_requests(out, delta(g.success, p.success), delta(g.failure, p.failure), seconds);
    append_field(out, "tokens_per_s",
                 static_cast<double>(delta(g.generation_tokens, p.generation_tokens)) / seconds);
    append_field(out, "prompt_tokens_per_s",
                 static_cast<double>(delta(g.prompt_tokens, p.prompt_tokens)) / seconds);
    append_count(out, "preemptions", delta(g.preemptions, p.preemptions));
    append_count(out, "running", static_cast<std::uint64_t>(std::max<std::int64_t>(0, g.running)));
    append_count(out, "waiting", static_cast<std::uint64_t>(std::max<std::int64_t>(0, g.waiting)));
    append_field(out, "kv_cache_usage", g.kv_cache_usage);
    out += ",\"ttft_ms\":";
    append_percentiles_ms(out, g.ttft_bounds, window(g.ttft, b ? &b->ttft : nullptr));
    out += ",\"itl_ms\":";
    append_percentiles_ms(out, g.itl_bounds, window(g.itl, b ? &b->itl : nullptr));
    out += '}';
  }
  out += ']';
  // The models' compute time over the window: above 1 means batches of different models
  // overlapped (a compute pool of more than one thread, or several executors).
  append_field(out, "executor_utilization", busy / seconds);
  out += ",\"cache\":";
  if (!now.has_cache) {
    out += "null";
  } else {
    const auto& c = now.cache;
    const auto& p = before.has_cache ? before.cache : StatsSample::Cache{};
    const std::uint64_t exact = delta(c.exact_hits, p.exact_hits);
    const std::uint64_t semantic = delta(c.semantic_hits, p.semantic_hits);
    const std::uint64_t misses = delta(c.misses, p.misses);
    const std::uint64_t lookups = exact + semantic + misses;
    out += "{\"lookups\":";
    json_append_number(out, lookups);
    append_count(out, "exact_hits", exact);
    append_count(out, "semantic_hits", semantic);
    append_count(out, "misses", misses);
    out += ",\"hit_rate\":";
    if (lookups == 0) {
      out += "null";
    } else {
      json_append_number(
          out, round3(static_cast<double>(exact + semantic) / static_cast<double>(lookups)));
    }
    append_count(out, "entries", c.entries);
    append_count(out, "bytes", c.bytes);
    // Hit precision as clients report it (POST /v2/cache/feedback), since start.
    append_count(out, "feedback_right", c.feedback_right);
    append_count(out, "feedback_wrong", c.feedback_wrong);
    out += ",\"reported_precision\":";
    const std::uint64_t reports = c.feedback_right + c.feedback_wrong;
    if (reports == 0) {
      out += "null";
    } else {
      json_append_number(
          out, round3(static_cast<double>(c.feedback_right) / static_cast<double>(reports)));
    }
    out += '}';
  }
  out += '}';
}

namespace {

// One connection's stream: a message a second until the client leaves (the disconnect
// watch cancels this), a write fails or times out (a reader that stopped reading), or the
// server stops.
asio::awaitable<void> stats_stream(const ModelRepository& repo, const HttpRequest& req,
                                   HttpResponse& res) {
  if (!res.stream) {
    res.error(500, "the stats stream needs a connection that streams");
    co_return;
  }
  res.content_type = "text/event-stream";
  res.headers.emplace_back("Cache-Control", "no-cache");
  res.headers.emplace_back("X-Accel-Buffering", "no");  // nginx: pass each event at once
  if (!co_await res.stream->begin(res)) co_return;
  // The client's EventSource reconnects after 1 s if the stream breaks.
  if (!co_await res.stream->write("retry: 1000\n\n")) co_return;
  StatsSample before, now;
  take_stats_sample(repo, req.tenant, before);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  std::string event;
  auto next = before.taken;
  while (!res.stream->closing()) {
    next += kInterval;
    timer.expires_at(next);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec || res.stream->closing()) co_return;
    take_stats_sample(repo, req.tenant, now);
    event.assign("data: ");
    write_stats_message(before, now, event);
    event += "\n\n";
    if (!co_await res.stream->write(event)) co_return;
    std::swap(before, now);
  }
}

}  // namespace

void add_stats_routes(net::Router& router, const ModelRepository& repository) {
  const ModelRepository* repo = &repository;
  router.add(net::Method::get, "/v2/stats/stream",
             net::AsyncHandler([repo](const HttpRequest& req, HttpResponse& res) {
               return stats_stream(*repo, req, res);
             }));
  router.add(net::Method::get, "/dashboard", [](const HttpRequest&, HttpResponse& res) {
    res.content_type = "text/html; charset=utf-8";
    res.headers.emplace_back("Cache-Control", "no-cache");
    res.body += kDashboardHtml;
  });
}

}  // namespace coinfer
