// coinfer-loadgen: a load generator on the coinfer client, over HTTP or the OIP WebSocket
// endpoint. Closed loop (N workers, each send-wait-send), open loop (requests at scheduled
// times, latency measured from the intended send time, so a slow server cannot hide its
// queueing: no coordinated omission), and a search for the highest open-loop rate that meets a
// p99 target. See docs/LOADGEN.md.
//
// Each --threads shard runs its own io_context, clients and histogram; results are merged.
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <array>
#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "coinfer/client/http_client.hpp"
#include "coinfer/client/latency_histogram.hpp"
#include "coinfer/client/ws_client.hpp"
#include "coinfer/core/json_writer.hpp"
#include "grpc_transport.hpp"

namespace asio = boost::asio;
using namespace coinfer;
using client::Failure;
using client::LatencyHistogram;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct Url {
  bool websocket = false;  // ws://: OIP infer requests over the WebSocket endpoint
  bool grpc = false;       // grpc://: ModelInfer calls of the OIP's gRPC service
  bool tls = false;        // https://
  std::string host;
  std::uint16_t port = 80;
  std::string target = "/";
};

// http[s]://host[:port][/target], ws://host[:port][/target] or grpc://host:port
std::optional<Url> parse_url(std::string_view text) {
  Url url;
  if (text.starts_with("grpc://")) {
    url.grpc = true;
    url.port = 8001;
    text.remove_prefix(7);
  } else if (text.starts_with("ws://")) {
    url.websocket = true;
    text.remove_prefix(5);
  } else if (text.starts_with("http://")) {
    text.remove_prefix(7);
  } else if (text.starts_with("https://")) {
    url.tls = true;
    url.port = 443;
    text.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  const auto slash = text.find('/');
  if (slash != std::string_view::npos) url.target = std::string(text.substr(slash));
  const auto authority = text.substr(0, slash);
  const auto colon = authority.rfind(':');
  url.host = std::string(authority.substr(0, colon));
  if (colon != std::string_view::npos) {
    const auto digits = authority.substr(colon + 1);
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) {
      return std::nullopt;
    }
    url.port = static_cast<std::uint16_t>(port);
  }
  if (url.host.empty()) return std::nullopt;
  return url;
}

std::optional<net::Method> parse_method(std::string_view name) {
  for (auto m : {net::Method::get, net::Method::head, net::Method::post, net::Method::put,
                 net::Method::delete_, net::Method::options, net::Method::patch}) {
    if (net::to_string(m) == name) return m;
  }
  return std::nullopt;
}

enum class Mode { closed, open };
enum class Arrival { constant, poisson };

struct Options {
  Url url;
  std::string url_text;
  net::Method method = net::Method::get;
  std::string body;
  // --body-lines: one body per line, sent in turn (varied requests, e.g. sentences of many
  // lengths); empty: every request sends `body`.
  std::vector<std::string> bodies;
  std::string content_type = "application/json";
  double duration_s = 10;
  double warmup_s = 1;
  Mode mode = Mode::closed;
  int concurrency = 64;
  double rate = 1000;
  Arrival arrival = Arrival::constant;
  int connections = 64;
  int ws_in_flight = 64;
  std::string model;  // ws://: the "model_name" of every request
  int threads = 1;
  std::uint32_t timeout_ms = 10'000;
  std::string authorization;  // "Bearer <key>" from --api-key
  std::vector<std::string> headers;  // --header: more HTTP header lines
  std::string ca_file;        // https://: --cacert
  bool json = false;
  // --find-max-qps
  bool find_max_qps = false;
  double p99_ms = 0;
  double start_rate = 1000;
  double max_rate = 1e7;
  double step_s = 3;
  double max_error_ratio = 0.01;
};

// Failures by kind. Non-2xx responses count under their status; requests that never got a
// response count under the Failure that stopped them; "unsent" are open-loop requests still
// waiting for a free connection a second (kDrainGrace) after the run's end.
struct Errors {
  std::array<std::uint64_t, 600> by_status{};
  std::array<std::uint64_t, 5> by_failure{};  // indexed by Failure; [0] unused
  std::uint64_t unsent = 0;

  std::uint64_t total() const {
    std::uint64_t n = unsent;
    for (auto c : by_status) n += c;
    for (auto c : by_failure) n += c;
    return n;
  }
  void merge(const Errors& other) {
    for (std::size_t i = 0; i < by_status.size(); ++i) by_status[i] += other.by_status[i];
    for (std::size_t i = 0; i < by_failure.size(); ++i) by_failure[i] += other.by_failure[i];
    unsent += other.unsent;
  }
};

constexpr std::array<std::string_view, 5> kFailureNames = {"", "connect", "timeout", "closed",
                                                           "protocol"};

// One run's measured window: latencies of the 2xx responses, counts of everything.
struct RunResult {
  LatencyHistogram latency;
  std::uint64_t ok = 0;
  Errors errors;

  // Sent in the measured window, each with an outcome (a response or a failure).
  std::uint64_t requests() const { return ok + errors.total() - errors.unsent; }
  // Errors (unsent included) over everything due in the window.
  double error_ratio() const {
    const auto due = requests() + errors.unsent;
    return due ? static_cast<double>(errors.total()) / static_cast<double>(due) : 0.0;
  }
  void merge(const RunResult& other) {
    latency.merge(other.latency);
    ok += other.ok;
    errors.merge(other.errors);
  }
};

// What one shard (thread) does in one run.
struct Plan {
  Mode mode;
  int workers;      // requests in flight at most: closed: concurrency; open: connections (HTTP)
                    // or connections x ws_in_flight (WebSocket)
  int connections;  // WebSocket connections the workers share; 0 over HTTP
  double rate;      // open: requests per second for this shard
  double phase;     // open, constant: offset of this shard's schedule, in periods
  Arrival arrival;
  std::uint64_t seed;
  Clock::time_point start, measure_from, end;
};

// The open-loop schedule: intended send times, handed out in order to whichever worker is free.
class Schedule {
 public:
  explicit Schedule(const Plan& plan)
      : start_(plan.start),
        period_ns_(1e9 / plan.rate),
        offset_ns_(plan.phase * period_ns_),
        arrival_(plan.arrival),
        rng_(plan.seed),
        gap_(plan.rate / 1e9) {}
  Clock::time_point next() {
    const auto at = start_ + std::chrono::nanoseconds(static_cast<std::int64_t>(offset_ns_));
    offset_ns_ += arrival_ == Arrival::constant ? period_ns_ : gap_(rng_);
    return at;
  }

 private:
  Clock::time_point start_;
  double period_ns_;
  double offset_ns_;
  Arrival arrival_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;  // Poisson arrivals: exponential gaps, in ns
};

// One WebSocket connection of a shard, shared by its workers (worker i uses connection
// i % connections). Opened before the run, and again by the first worker to find it closed.
struct WsConnection {
  explicit WsConnection(const asio::any_io_executor& executor) : connect_ended(executor) {}
  std::unique_ptr<client::WsInferSession> session;
  bool connecting = false;
  asio::steady_timer connect_ended;  // an event: cancelled when a connect attempt ends
};

struct Shard {
  const Options& options;
  const Plan& plan;
  client::HttpClient& client;
  std::vector<WsConnection>& ws;  // empty over HTTP
  loadgen::GrpcTransport* grpc;   // grpc:// only
  RunResult& result;
  Schedule schedule;
  std::size_t next_body = 0;  // --body-lines: the next line to send (one shard, one thread)
};

// A worker's reused response buffers, one per transport.
struct WorkerResult {
  client::HttpResult http;
  client::WsInferResult ws;
};

// How one request ended: an HTTP status (or a WebSocket reply's "status"; 200 for an infer
// response), or the failure that left it without one.
struct Outcome {
  int status = 0;
  Failure failure = Failure::none;
};

asio::awaitable<bool> ensure_open(Shard& s, WsConnection& c) {
  while (c.connecting) co_await c.connect_ended.async_wait(use_tuple);
  if (c.session && c.session->is_open()) co_return true;
  c.connecting = true;
  c.connect_ended.expires_at(asio::steady_timer::time_point::max());
  // A session is single-use: a broken one is replaced (its leftover calls have failed).
  // Not one expression: GCC 12 destroys a temporary with a destructor twice when it shares a
  // full-expression with co_await.
  const auto executor = co_await asio::this_coro::executor;
  client::WsClientConfig config;
  config.authorization = s.options.authorization;
  c.session = std::make_unique<client::WsInferSession>(executor, config, s.options.timeout_ms);
  const Status status =
      co_await c.session->connect(s.options.url.host, s.options.url.port, s.options.url.target);
  c.connecting = false;
  c.connect_ended.cancel();
  co_return status.ok();
}

asio::awaitable<Outcome> send_request(Shard& s, int worker, WorkerResult& r) {
  const auto& o = s.options;
  if (s.grpc) {
    const int status = co_await s.grpc->infer(worker);
    co_return Outcome{status, status == 0 ? Failure::connect : Failure::none};
  }
  const std::string& body = o.bodies.empty() ? o.body : o.bodies[s.next_body++ % o.bodies.size()];
  if (s.ws.empty()) {
    const Status status =
        co_await s.client.request(o.method, o.url.target, body, o.content_type, r.http);
    co_return Outcome{status.ok() ? r.http.status : 0, r.http.failure};
  }
  WsConnection& c = s.ws[static_cast<std::size_t>(worker) % s.ws.size()];
  if (!co_await ensure_open(s, c)) co_return Outcome{0, Failure::connect};
  // The session matches the reply to this call by the id it gave the request.
  (void)co_await c.session->infer(o.model, body, r.ws);
  co_return Outcome{r.ws.status, r.ws.failure};
}

void count(Shard& s, Outcome outcome, Clock::duration latency) {
  if (outcome.status >= 200 && outcome.status < 300) {
    ++s.result.ok;
    s.result.latency.record(latency);
  } else if (outcome.failure == Failure::none) {
    ++s.result.errors.by_status[static_cast<std::size_t>(std::clamp(outcome.status, 0, 599))];
  } else {
    ++s.result.errors.by_failure[static_cast<std::size_t>(outcome.failure)];
  }
}

asio::awaitable<void> closed_worker(Shard& s, int worker) {
  WorkerResult result;
  asio::steady_timer backoff(co_await asio::this_coro::executor);
  for (;;) {
    const auto sent = Clock::now();
    if (sent >= s.plan.end) co_return;
    const Outcome outcome = co_await send_request(s, worker, result);
    if (sent >= s.plan.measure_from) count(s, outcome, Clock::now() - sent);
    if (outcome.failure == Failure::connect) {  // the server is down: do not spin
      backoff.expires_after(std::chrono::milliseconds(10));
      co_await backoff.async_wait(use_tuple);
    }
  }
}

// Requests due before the end of an open-loop run are still sent (and timed from their
// intended send time) until this long after it; the rest count as "unsent".
constexpr auto kDrainGrace = std::chrono::seconds(1);

asio::awaitable<void> open_worker(Shard& s, int worker) {
  WorkerResult result;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    const auto intended = s.schedule.next();
    if (intended >= s.plan.end) co_return;
    if (intended > Clock::now()) {
      timer.expires_at(intended);
      co_await timer.async_wait(use_tuple);
    } else if (Clock::now() >= s.plan.end + kDrainGrace) {
      // Due before the end but still waiting for a connection well after it: an overloaded
      // run's backlog. Counted, not sent, so that the run ends.
      for (auto t = intended; t < s.plan.end; t = s.schedule.next()) {
        if (t >= s.plan.measure_from) ++s.result.errors.unsent;
      }
      co_return;
    }
    const Outcome outcome = co_await send_request(s, worker, result);
    if (intended >= s.plan.measure_from) count(s, outcome, Clock::now() - intended);
  }
}

// Opens the WebSocket connections (before the schedule starts, so that the handshakes are not
// measured), runs the workers, and closes the connections when the last worker is done.
asio::awaitable<void> run_workers(Shard& s) {
  for (auto& c : s.ws) co_await ensure_open(s, c);  // a failed one is retried by its workers
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
  int running = s.plan.workers;
  for (int i = 0; i < s.plan.workers; ++i) {
    asio::co_spawn(executor, s.plan.mode == Mode::closed ? closed_worker(s, i) : open_worker(s, i),
                   [&](std::exception_ptr e) {
                     if (e) std::rethrow_exception(e);
                     if (--running == 0) all_done.cancel();
                   });
  }
  if (running > 0) co_await all_done.async_wait(use_tuple);
  for (auto& c : s.ws) {
    if (c.session && c.session->is_open()) (void)co_await c.session->close();
  }
}

void run_shard(const Options& o, const Plan& plan, RunResult& result) {
  asio::io_context io(1);
  client::HttpClient http(
      io.get_executor(), o.url.host, o.url.port,
      client::HttpClientConfig{.max_idle_connections = static_cast<std::size_t>(plan.workers),
                               .request_timeout_ms = o.timeout_ms,
                               .authorization = o.authorization,
                               .headers = o.headers,
                               .tls = o.url.tls,
                               .tls_ca_file = o.ca_file});
  std::vector<WsConnection> ws;
  if (o.url.websocket) {
    ws.reserve(static_cast<std::size_t>(plan.connections));
    for (int i = 0; i < plan.connections; ++i) ws.emplace_back(io.get_executor());
  }
  loadgen::GrpcTransport* grpc = nullptr;
  if (o.url.grpc) {
    // Kept until the process exits, never destroyed: with gRPC 1.51 (Debian) releasing the
    // last channel that made callback calls while gRPC's threads still run its completion
    // queue freed that queue twice (an ASan report in CI, the process aborted). Reachable
    // from a static, so not a leak to LeakSanitizer.
    static std::mutex kept_mutex;
    static auto* kept = new std::vector<std::unique_ptr<loadgen::GrpcTransport>>();
    std::string error;  // the body was parsed once in main(): no error here
    auto transport = loadgen::GrpcTransport::create(o.url.host + ":" + std::to_string(o.url.port),
                                                    plan.connections, o.body, o.authorization,
                                                    o.timeout_ms, error);
    grpc = transport.get();
    std::lock_guard lock(kept_mutex);
    kept->push_back(std::move(transport));
  }
  Shard shard{o, plan, http, ws, grpc, result, Schedule(plan)};
  asio::co_spawn(io, run_workers(shard), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
}

// One run over all shards: `warmup_s` unmeasured, then `duration_s` measured.
RunResult run(const Options& o, Mode mode, double rate, double warmup_s, double duration_s) {
  const int threads = std::max(1, o.threads);
  // Split over the threads: closed loop, the workers; open loop, the connections (each
  // carrying one request at a time over HTTP, up to ws_in_flight over WebSocket).
  const int units = mode == Mode::closed ? o.concurrency : o.connections;
  const auto start = Clock::now() + std::chrono::milliseconds(5);
  const auto measure_from =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup_s));
  const auto end = measure_from + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(duration_s));
  std::vector<Plan> plans;
  for (int t = 0; t < threads; ++t) {
    const int shard_units = units / threads + (t < units % threads ? 1 : 0);
    if (shard_units == 0) continue;
    int shard_workers = shard_units, shard_connections = 0;
    // WebSocket and gRPC: many requests in flight per connection.
    const bool multiplexed = o.url.websocket || o.url.grpc;
    if (multiplexed && mode == Mode::open) {
      shard_connections = shard_units;
      shard_workers = shard_units * o.ws_in_flight;
    } else if (multiplexed) {
      shard_connections = std::clamp(o.connections / threads, 1, shard_units);
    }
    plans.push_back({mode, shard_workers, shard_connections, rate * shard_units / units,
                     static_cast<double>(t) / threads, o.arrival,
                     0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(t + 1), start, measure_from,
                     end});
  }
  std::vector<RunResult> results(plans.size());
  std::vector<std::jthread> pool;
  for (std::size_t i = 1; i < plans.size(); ++i) {
    pool.emplace_back([&, i] { run_shard(o, plans[i], results[i]); });
  }
  run_shard(o, plans[0], results[0]);
  pool.clear();
  for (std::size_t i = 1; i < results.size(); ++i) results[0].merge(results[i]);
  return std::move(results[0]);
}

double us(std::uint64_t ns) {
  return std::round(static_cast<double>(ns) / 100.0) / 10.0;
}

void append_result_json(std::string& out, const RunResult& r, double duration_s) {
  const auto& h = r.latency;
  out += "\"requests\":";
  json_append_number(out, r.requests());
  out += ",\"ok\":";
  json_append_number(out, r.ok);
  out += ",\"throughput_rps\":";
  json_append_number(out, std::round(static_cast<double>(r.requests()) / duration_s * 10) / 10);
  out += ",\"latency_us\":{";
  const std::pair<const char*, double> fields[] = {
      {"p50", us(h.percentile_ns(50))}, {"p90", us(h.percentile_ns(90))},
      {"p99", us(h.percentile_ns(99))}, {"p999", us(h.percentile_ns(99.9))},
      {"max", us(h.max_ns())},          {"mean", std::round(h.mean_ns() / 100) / 10},
      {"min", us(h.min_ns())}};
  for (const auto& [name, value] : fields) {
    if (out.back() != '{') out += ',';
    json_append_string(out, name);
    out += ':';
    json_append_number(out, value);
  }
  out += "},\"errors\":";
  json_append_number(out, r.errors.total());
  out += ",\"errors_by_status\":{";
  auto entry = [&](std::string_view key, std::uint64_t n) {
    if (n == 0) return;
    if (out.back() != '{') out += ',';
    json_append_string(out, key);
    out += ':';
    json_append_number(out, n);
  };
  for (std::size_t s = 0; s < r.errors.by_status.size(); ++s) {
    entry(std::to_string(s), r.errors.by_status[s]);
  }
  for (std::size_t f = 1; f < kFailureNames.size(); ++f) {
    entry(kFailureNames[f], r.errors.by_failure[f]);
  }
  entry("unsent", r.errors.unsent);
  out += '}';
}

std::string run_json(const Options& o, Mode mode, double rate, const RunResult& r) {
  std::string out = "{\"mode\":";
  json_append_string(out, mode == Mode::closed ? "closed" : "open");
  out += ",\"url\":";
  json_append_string(out, o.url_text);
  if (o.url.websocket) {
    out += ",\"model\":";
    json_append_string(out, o.model);
  }
  if (mode == Mode::closed) {
    out += ",\"concurrency\":";
    json_append_number(out, o.concurrency);
    if (o.url.websocket || o.url.grpc) {
      out += ",\"connections\":";
      json_append_number(out, std::min(o.connections, o.concurrency));
    }
  } else {
    out += ",\"rate\":";
    json_append_number(out, rate);
    out += ",\"arrival\":";
    json_append_string(out, o.arrival == Arrival::constant ? "constant" : "poisson");
    out += ",\"connections\":";
    json_append_number(out, o.connections);
    if (o.url.websocket) {
      out += ",\"ws_in_flight\":";
      json_append_number(out, o.ws_in_flight);
    }
  }
  out += ",\"threads\":";
  json_append_number(out, o.threads);
  out += ",\"duration_s\":";
  json_append_number(out, o.duration_s);
  out += ",\"warmup_s\":";
  json_append_number(out, o.warmup_s);
  out += ',';
  append_result_json(out, r, o.duration_s);
  out += '}';
  return out;
}

void print_summary(std::FILE* f, const Options& o, Mode mode, double rate, const RunResult& r,
                   double duration_s) {
  const auto& h = r.latency;
  if (mode == Mode::closed) {
    std::fprintf(f, "closed loop, concurrency %d", o.concurrency);
    if (o.url.websocket) {
      std::fprintf(f, " on %d websocket connections", std::min(o.connections, o.concurrency));
    }
  } else {
    std::fprintf(f, "open loop, %.0f req/s (%s), %d %sconnections", rate,
                 o.arrival == Arrival::constant ? "constant" : "poisson", o.connections,
                 o.url.websocket ? "websocket " : "");
    if (o.url.websocket) std::fprintf(f, " x %d in flight", o.ws_in_flight);
  }
  std::fprintf(f, ", %d thread(s), %.3g s (+%.3g s warm-up), %s\n", o.threads, duration_s,
               o.warmup_s, o.url_text.c_str());
  const double throughput = static_cast<double>(r.requests()) / duration_s;
  std::fprintf(f, "  requests %llu (ok %llu), errors %llu (%.2f%%), throughput %.1f req/s\n",
               static_cast<unsigned long long>(r.requests()), static_cast<unsigned long long>(r.ok),
               static_cast<unsigned long long>(r.errors.total()), 100 * r.error_ratio(),
               throughput);
  std::fprintf(f,
               "  latency (us, 2xx only) p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  "
               "mean %.1f\n",
               us(h.percentile_ns(50)), us(h.percentile_ns(90)), us(h.percentile_ns(99)),
               us(h.percentile_ns(99.9)), us(h.max_ns()), h.mean_ns() / 1000);
  if (r.errors.total() > 0) {
    std::string json;
    append_result_json(json, r, duration_s);
    const auto at = json.find("\"errors_by_status\":");
    std::fprintf(f, "  errors by status %s\n", json.c_str() + at + 19);
  }
  if (mode == Mode::open && throughput < 0.95 * rate) {
    std::fprintf(f,
                 "  note: %.1f req/s sent of %.0f scheduled: the server (or --connections) "
                 "did not keep up\n",
                 throughput, rate);
  }
}

// One step of --find-max-qps passes when p99 <= the target and errors < max_error_ratio.
bool passes(const Options& o, const RunResult& r) {
  if (r.ok == 0) return false;
  return r.error_ratio() < o.max_error_ratio &&
         static_cast<double>(r.latency.percentile_ns(99)) <= o.p99_ms * 1e6;
}

// Exponential search up from start_rate (or down, if it fails), then bisection to 5%.
int find_max_qps(const Options& o) {
  std::string steps_json;
  double best_rate = 0;
  std::optional<RunResult> best;
  auto step = [&](double rate) {
    RunResult r = run(o, Mode::open, rate, o.warmup_s, o.step_s);
    const bool ok = passes(o, r);
    const double errors = 100.0 * r.error_ratio();
    std::fprintf(stderr,
                 "step rate %9.1f req/s: throughput %9.1f req/s, p99 %8.2f ms, errors %5.2f%%  "
                 "%s\n",
                 rate, static_cast<double>(r.requests()) / o.step_s,
                 static_cast<double>(r.latency.percentile_ns(99)) / 1e6, errors,
                 ok ? "pass" : "FAIL");
    if (!steps_json.empty()) steps_json += ',';
    steps_json += '{';
    steps_json += "\"rate\":";
    json_append_number(steps_json, rate);
    steps_json += ",\"pass\":";
    json_append_bool(steps_json, ok);
    steps_json += ',';
    append_result_json(steps_json, r, o.step_s);
    steps_json += '}';
    if (ok && rate > best_rate) {
      best_rate = rate;
      best = std::move(r);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the server drain
    return ok;
  };

  double lo = 0, hi = 0;  // highest passing, lowest failing (0: none yet)
  for (double rate = o.start_rate;; rate *= 2) {
    rate = std::min(rate, o.max_rate);
    if (step(rate)) {
      lo = rate;
      if (rate >= o.max_rate) break;
    } else {
      hi = rate;
      break;
    }
  }
  if (lo == 0) {  // even start_rate fails: search downwards
    for (double rate = o.start_rate / 2; rate >= 1; rate /= 2) {
      if (step(rate)) {
        lo = rate;
        break;
      }
      hi = rate;
    }
  }
  while (lo > 0 && hi > 0 && hi / lo > 1.05) {
    const double mid = std::round((lo + hi) / 2);
    (step(mid) ? lo : hi) = mid;
  }

  if (o.json) {
    std::string out = "{\"mode\":\"find-max-qps\",\"url\":";
    json_append_string(out, o.url_text);
    out += ",\"p99_ms\":";
    json_append_number(out, o.p99_ms);
    out += ",\"max_qps\":";
    json_append_number(out, lo);
    out += ",\"connections\":";
    json_append_number(out, o.connections);
    out += ",\"step_s\":";
    json_append_number(out, o.step_s);
    out += ",\"steps\":[" + steps_json + "]}";
    std::printf("%s\n", out.c_str());
  } else if (best) {
    std::printf("max rate with p99 <= %.3g ms and < %.3g%% errors: %.0f req/s\n", o.p99_ms,
                o.max_error_ratio * 100, lo);
    print_summary(stdout, o, Mode::open, lo, *best, o.step_s);
  } else {
    std::printf("no rate >= 1 req/s met p99 <= %.3g ms with < %.3g%% errors\n", o.p99_ms,
                o.max_error_ratio * 100);
  }
  return lo > 0 ? 0 : 1;
}

// The body of every WebSocket request: the infer request without "id" and "model_name", which
// the session adds to each message (a fresh id, --model). Checked once here: a message the
// server cannot parse would have no id to match its error reply by.
Status websocket_request(std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (auto error = parser.parse(body).get(object)) {
    return Status::invalid(std::string("expected an infer request (a JSON object): ") +
                           simdjson::error_message(error));
  }
  std::string request = "{";
  for (auto [key, value] : object) {
    if (key == "id" || key == "model_name") continue;
    if (request.size() > 1) request += ',';
    json_append_string(request, key);
    request += ':';
    request += simdjson::minify(value);
  }
  body = request + '}';
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "coinfer-loadgen: HTTP / OIP WebSocket / gRPC load generator (closed loop, open loop, max-QPS "
      "search)"};
  Options o;
  std::string method, body_file, mode = "closed", arrival = "constant";
  std::optional<std::string> body;
  cli.add_option("--url", o.url_text,
                 "http[s]://HOST:PORT/TARGET or ws://HOST:PORT/v2/ws")
      ->required();
  cli.add_option("--model", o.model, "ws://: the model_name of every infer request");
  cli.add_option("--method", method, "HTTP method (default: POST with a body, else GET)");
  auto* body_opt = cli.add_option("--body", body, "request body");
  auto* file_opt =
      cli.add_option("--body-file", body_file, "file holding the request body")->excludes(body_opt);
  std::string body_lines;
  cli.add_option("--body-lines", body_lines, "file with one request body per line, sent in turn")
      ->excludes(body_opt)
      ->excludes(file_opt);
  cli.add_option("--header", o.headers,
                 "http[s]://: one more header line for every request, \"Name: value\" (repeatable)")
      ->check([](const std::string& h) {
        return h.find(':') == std::string::npos || h.find_first_of("\r\n") != std::string::npos
                   ? std::string("expected \"Name: value\" on one line")
                   : std::string();
      });
  cli.add_option("--content-type", o.content_type, "Content-Type sent with a body")
      ->capture_default_str();
  cli.add_option("--duration-s", o.duration_s, "measured seconds")->capture_default_str();
  cli.add_option("--warmup-s", o.warmup_s, "unmeasured seconds before (each step of) the run")
      ->capture_default_str();
  cli.add_option("--mode", mode, "closed | open")
      ->check(CLI::IsMember({"closed", "open"}))
      ->capture_default_str();
  cli.add_option("--concurrency", o.concurrency, "closed loop: workers (one connection each)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cli.add_option("--rate", o.rate, "open loop: requests per second")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--arrival", arrival, "open loop: constant | poisson")
      ->check(CLI::IsMember({"constant", "poisson"}))
      ->capture_default_str();
  cli.add_option("--connections", o.connections,
                 "open loop: most connections (in flight); ws://, grpc://: connections, both loops")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cli.add_option("--ws-in-flight", o.ws_in_flight,
                 "ws://, grpc://, open loop: most requests in flight per connection")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cli.add_option("--threads", o.threads, "threads, each with its share of workers and rate")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cli.add_option("--timeout-ms", o.timeout_ms, "per request; 0: none")->capture_default_str();
  cli.add_option("--cacert", o.ca_file,
                 "https://: PEM file of the CA to verify the server with (default: the system's)");
  std::string api_key;
  cli.add_option("--api-key", api_key,
                 "sent as Authorization: Bearer KEY (default: $COINFER_API_KEY, if set)");
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  auto* find = cli.add_flag("--find-max-qps", o.find_max_qps,
                            "search the highest open-loop rate meeting --p99-ms");
  cli.add_option("--p99-ms", o.p99_ms, "--find-max-qps: p99 latency target")
      ->check(CLI::PositiveNumber);
  cli.add_option("--start-rate", o.start_rate, "--find-max-qps: first rate tried")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--max-rate", o.max_rate, "--find-max-qps: highest rate tried")
      ->check(CLI::PositiveNumber);
  cli.add_option("--step-s", o.step_s, "--find-max-qps: measured seconds per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--max-error-ratio", o.max_error_ratio, "--find-max-qps: errors allowed")
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  // The key from the environment keeps it out of the process list (ps shows arguments).
  if (api_key.empty()) {
    if (const char* from_env = std::getenv("COINFER_API_KEY")) api_key = from_env;
  }
  if (!api_key.empty()) o.authorization = "Bearer " + api_key;

  const auto url = parse_url(o.url_text);
  if (!url) {
    std::fprintf(stderr,
                 "coinfer-loadgen: --url: expected http[s]://HOST[:PORT]/TARGET, "
                 "ws://HOST[:PORT]/TARGET or grpc://HOST[:PORT], got '%s'\n",
                 o.url_text.c_str());
    return 2;
  }
  o.url = *url;
  if (body) o.body = *body;
  if (!body_file.empty()) {
    std::ifstream in(body_file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "coinfer-loadgen: --body-file: cannot read '%s'\n", body_file.c_str());
      return 2;
    }
    std::ostringstream text;
    text << in.rdbuf();
    o.body = text.str();
  }
  if (!body_lines.empty()) {
    std::ifstream in(body_lines, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "coinfer-loadgen: --body-lines: cannot read '%s'\n", body_lines.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) o.bodies.push_back(std::move(line));
    }
    if (o.bodies.empty()) {
      std::fprintf(stderr, "coinfer-loadgen: --body-lines: '%s' has no body\n", body_lines.c_str());
      return 2;
    }
  }
  const bool has_body = body || !body_file.empty() || !o.bodies.empty();
  o.method = has_body ? net::Method::post : net::Method::get;
  if (!method.empty()) {
    const auto m = parse_method(method);
    if (!m) {
      std::fprintf(stderr, "coinfer-loadgen: --method: unknown method '%s'\n", method.c_str());
      return 2;
    }
    o.method = *m;
  }
  if (!has_body) o.content_type.clear();
  if (o.url.websocket) {
    if (o.model.empty() || !has_body) {
      std::fprintf(stderr, "coinfer-loadgen: ws:// needs --model and an infer request body\n");
      return 2;
    }
    if (auto status = websocket_request(o.body); !o.bodies.empty() || !status.ok()) {
      std::fprintf(stderr, "coinfer-loadgen: --body: %s\n",
                   o.bodies.empty() ? status.message().c_str() : "--body-lines is HTTP only");
      return 2;
    }
  }
  if (o.url.grpc) {
    std::string error;
    if (!has_body || !o.bodies.empty() ||
        !loadgen::GrpcTransport::create("localhost:1", 1, o.body, "", 0, error)) {
      std::fprintf(stderr, "coinfer-loadgen: grpc:// needs --body or --body-file: %s\n",
                   !has_body ? "a ModelInferRequest as JSON" : !o.bodies.empty() ? "--body-lines is HTTP only" : error.c_str());
      return 2;
    }
  }
  o.mode = mode == "open" ? Mode::open : Mode::closed;
  o.arrival = arrival == "poisson" ? Arrival::poisson : Arrival::constant;
  if (o.duration_s <= 0 || o.warmup_s < 0) {
    std::fprintf(stderr, "coinfer-loadgen: --duration-s must be > 0 and --warmup-s >= 0\n");
    return 2;
  }

  if (*find) {
    if (o.p99_ms <= 0) {
      std::fprintf(stderr, "coinfer-loadgen: --find-max-qps needs --p99-ms\n");
      return 2;
    }
    return find_max_qps(o);
  }
  const RunResult r = run(o, o.mode, o.rate, o.warmup_s, o.duration_s);
  if (o.json) {
    std::printf("%s\n", run_json(o, o.mode, o.rate, r).c_str());
  } else {
    print_summary(stdout, o, o.mode, o.rate, r, o.duration_s);
  }
  return 0;
}
