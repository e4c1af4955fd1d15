#include "coinfer/generation/generator.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>

namespace coinfer::generation {
namespace asio = boost::asio;

std::string_view to_string(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::none:
      return "none";
    case FinishReason::stop:
      return "stop";
    case FinishReason::length:
      return "length";
    case FinishReason::cancelled:
      return "cancelled";
    case FinishReason::timeout:
      return "timeout";
    case FinishReason::error:
      return "error";
  }
  return "none";
}

// --- GenerationStream ----------------------------------------------------------------------

// A timer that never expires on its own: the requester waits on it, the engine's post
// cancels it to wake the requester on its own executor.
struct GenerationStream::Signal {
  explicit Signal(const asio::any_io_executor& ex) : timer(ex, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;
};

GenerationStream::GenerationStream(asio::any_io_executor executor) : executor_(std::move(executor)) {}

GenerationStream::~GenerationStream() = default;

void GenerationStream::push(GenerationUpdate&& update) {
  std::weak_ptr<Signal> waiter;
  {
    std::lock_guard lock(mutex_);
    if (!has_pending_) {
      pending_ = std::move(update);
      has_pending_ = true;
    } else {
      for (auto& t : update.tokens) pending_.tokens.push_back(std::move(t));
      pending_.text += update.text;
      pending_.finish = update.finish;
      pending_.error = std::move(update.error);
      pending_.prompt_tokens = update.prompt_tokens;
      pending_.completion_tokens = update.completion_tokens;
      pending_.cached_tokens = update.cached_tokens;
    }
    if (pending_.finish != FinishReason::none) finished_ = true;
    waiter.swap(waiter_);
  }
  // Wakes a waiting requester on its own executor. Only a weak reference crosses over: the
  // timer lives and dies on the requester's side. No waiter: next() finds the update itself.
  if (!waiter.expired())
    asio::post(executor_, [waiter = std::move(waiter)] {
      if (auto signal = waiter.lock()) signal->timer.cancel();
    });
}

asio::awaitable<bool> GenerationStream::next(GenerationUpdate& out) {
  std::shared_ptr<Signal> signal;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (has_pending_) {
        out = std::move(pending_);
        pending_ = {};
        has_pending_ = false;
        if (finished_) delivered_ = true;
        co_return true;
      }
      if (delivered_) co_return false;
      if (!signal) signal = std::make_shared<Signal>(executor_);  // cancel() keeps its expiry
      waiter_ = signal;
    }
    auto [ec] = co_await signal->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;  // woken by push() (operation_aborted from cancel) or by our own cancellation
    auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) {
      cancel();
      throw boost::system::system_error(asio::error::operation_aborted);
    }
  }
}

// --- metrics -------------------------------------------------------------------------------

GenerationMetrics::GenerationMetrics()
    : time_to_first_token_s({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
                             2.5, 5.0, 7.5, 10.0}),
      time_per_output_token_s(
          {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}),
      e2e_request_latency_s(
          {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0}) {}

namespace {
using Models = std::span<const NamedGenerationMetrics>;

std::string labels_of(const NamedGenerationMetrics& m) {
  std::string labels = "model=\"";  // appended: GCC 12 misreads "..." + string (-Warray-bounds)
  labels += m.model;
  labels += '"';
  return labels;
}

template <class Get>
void render_value(std::string& out, Models models, std::string_view name, std::string_view type,
                  std::string_view help, Get get) {
  append_metric_header(out, name, type, help);
  for (const auto& m : models) {
    out += name;
    out += '{';
    out += labels_of(m);
    out += "} ";
    out += std::to_string(get(*m.metrics));
    out += '\n';
  }
}

void render_histogram(std::string& out, Models models, std::string_view name, std::string_view help,
                      const Histogram GenerationMetrics::*member) {
  append_metric_header(out, name, "histogram", help);
  for (const auto& m : models) append_histogram_series(out, name, labels_of(m), (*m.metrics).*member);
}
}  // namespace

void render_prometheus(std::span<const NamedGenerationMetrics> models, std::string& out) {
  if (models.empty()) return;
  using M = GenerationMetrics;
  render_value(out, models, "coinfer_num_requests_running", "gauge",
               "Requests in the running batch.",
               [](const M& m) { return m.num_requests_running.load(); });
  render_value(out, models, "coinfer_num_requests_waiting", "gauge",
               "Requests waiting to be scheduled.",
               [](const M& m) { return m.num_requests_waiting.load(); });
  render_value(out, models, "coinfer_kv_cache_usage_perc", "gauge",
               "Fraction of KV cache blocks in use (1 = full).",
               [](const M& m) { return m.kv_cache_usage.load(); });
  render_value(out, models, "coinfer_num_preemptions_total", "counter", "Preemptions (recompute).",
               [](const M& m) { return m.num_preemptions.value(); });
  render_value(out, models, "coinfer_prompt_tokens_total", "counter", "Prompt tokens processed.",
               [](const M& m) { return m.prompt_tokens.value(); });
  render_value(out, models, "coinfer_generation_tokens_total", "counter", "Tokens generated.",
               [](const M& m) { return m.generation_tokens.value(); });
  render_value(out, models, "coinfer_prefix_cache_queries_total", "counter",
               "Prompt tokens looked up in the prefix cache.",
               [](const M& m) { return m.prefix_cache_queries.value(); });
  render_value(out, models, "coinfer_prefix_cache_hits_total", "counter",
               "Prompt tokens found in the prefix cache.",
               [](const M& m) { return m.prefix_cache_hits.value(); });
  render_value(out, models, "coinfer_spec_decode_num_drafts_total", "counter",
               "Decode steps that verified a prompt-lookup draft.",
               [](const M& m) { return m.spec_decode_num_drafts.value(); });
  render_value(out, models, "coinfer_spec_decode_num_draft_tokens_total", "counter",
               "Draft tokens proposed.",
               [](const M& m) { return m.spec_decode_num_draft_tokens.value(); });
  render_value(out, models, "coinfer_spec_decode_num_accepted_tokens_total", "counter",
               "Draft tokens confirmed by sampling.",
               [](const M& m) { return m.spec_decode_num_accepted_tokens.value(); });
  render_value(out, models, "coinfer_generation_success_total", "counter",
               "Generations finished by a stop condition or the length limit.",
               [](const M& m) { return m.request_success.value(); });
  render_value(out, models, "coinfer_generation_failure_total", "counter",
               "Generations ended by an error, a timeout or a client leaving.",
               [](const M& m) { return m.request_failure.value(); });
  render_histogram(out, models, "coinfer_time_to_first_token_seconds", "Time to first token.",
                   &M::time_to_first_token_s);
  render_histogram(out, models, "coinfer_time_per_output_token_seconds",
                   "Time between consecutive output tokens.", &M::time_per_output_token_s);
  render_histogram(out, models, "coinfer_e2e_request_latency_seconds",
                   "End-to-end request latency.", &M::e2e_request_latency_s);
}

}  // namespace coinfer::generation
