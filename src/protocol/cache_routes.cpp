#include "coinfer/protocol/cache_routes.hpp"

#include <charconv>

#include "cache_fields.hpp"
#include "coinfer/core/access.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/serving/cache_stage.hpp"

namespace coinfer {
namespace {

using net::HttpRequest;
using net::HttpResponse;
using net::Method;

CacheStage* stage_or_404(const ModelRepository& repo, HttpResponse& res) {
  CacheStage* stage = repo.cache();
  if (!stage)
    res.error(404,
              "no response cache is configured (no model has cache = \"exact\" or \"semantic\")");
  return stage;
}

// The stage and the {namespace} the route names, under the caller's tenant; null (and the
// response an error) when there is no cache or the name is not one.
CacheStage* stage_and_namespace(const ModelRepository& repo, const HttpRequest& req,
                                HttpResponse& res, std::string& ns) {
  CacheStage* stage = stage_or_404(repo, res);
  if (!stage) return nullptr;
  if (Status s = cache_fields::namespace_of(req, req.param("namespace"), ns); !s.ok()) {
    res.error(400, s.message());
    return nullptr;
  }
  return stage;
}

// What a tenant's entry ids and namespaces start with ("" with auth off).
std::string tenant_prefix(const HttpRequest& req) {
  return req.tenant ? req.tenant->name() + "/" : std::string();
}

void append_feedback(std::string& out, std::uint64_t right, std::uint64_t wrong) {
  out += R"(,"feedback":{"right":)";
  json_append_number(out, right);
  out += R"(,"wrong":)";
  json_append_number(out, wrong);
  out += '}';
}

void stats(const ModelRepository& repo, HttpResponse& res) {
  CacheStage* stage = stage_or_404(repo, res);
  if (!stage) return;
  const auto s = stage->cache().stats();
  const auto& o = stage->cache().options();
  std::string& out = res.body;
  out += R"({"entries":)";
  json_append_number(out, s.entries);
  out += R"(,"bytes":)";
  json_append_number(out, s.bytes);
  out += R"(,"vectors":)";
  json_append_number(out, s.vectors);
  out += R"(,"partitions":)";
  json_append_number(out, s.partitions);
  out += R"(,"ivf_partitions":)";
  json_append_number(out, s.ivf_partitions);
  out += R"(,"max_entries":)";
  json_append_number(out, o.max_entries);
  out += R"(,"max_bytes":)";
  json_append_number(out, o.max_bytes);
  out += R"(,"ttl_s":)";
  json_append_number(out, std::chrono::duration_cast<std::chrono::seconds>(o.ttl).count());
  out += R"(,"semantic":)";
  out += stage->semantic() ? "true" : "false";
  out += R"(,"embedder":)";
  json_append_string(out, o.embedder);
  out += R"(,"similarity_threshold":)";
  json_append_number(out, o.similarity_threshold);
  out += R"(,"guards":)";
  out += o.guards ? "true" : "false";
  out += R"(,"target_error_rate":)";
  json_append_number(out, o.target_error_rate);
  const auto& m = stage->cache().metrics();
  append_feedback(out, m.feedback_right.value(), m.feedback_wrong.value());
  out += '}';
}

void namespace_body(std::string_view ns, const cache::NamespaceState& state, std::string& out) {
  out += R"({"namespace":)";
  json_append_string(out, ns);
  out += R"(,"similarity_threshold":)";
  json_append_number(out, state.configured_threshold);
  out += R"(,"threshold_in_force":)";
  json_append_number(out, state.threshold);
  out += R"(,"target_error_rate":)";
  json_append_number(out, state.target_error_rate);
  append_feedback(out, state.right, state.wrong);
  out += '}';
}

void show_namespace(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  std::string ns;
  CacheStage* stage = stage_and_namespace(repo, req, res, ns);
  if (!stage) return;
  namespace_body(ns, stage->cache().namespace_state(ns), res.body);
}

void configure_namespace(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  std::string ns;
  CacheStage* stage = stage_and_namespace(repo, req, res, ns);
  if (!stage) return;
  cache::NamespaceSettings settings;
  if (Status s = cache_fields::parse_namespace_settings(req.body, settings); !s.ok()) {
    res.error(400, s.message());
    return;
  }
  if (!stage->cache().configure_namespace(ns, settings)) {
    res.error(429, "too many namespaces with settings or feedback (" +
                       std::to_string(cache::SemanticCache::kMaxNamespaces) + ")");
    return;
  }
  namespace_body(ns, stage->cache().namespace_state(ns), res.body);
}

void feedback(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  CacheStage* stage = stage_or_404(repo, res);
  if (!stage) return;
  cache_fields::Feedback report;
  if (Status s = cache_fields::parse_feedback(req.body, report); !s.ok()) {
    res.error(400, s.message());
    return;
  }
  const std::string prefix = tenant_prefix(req);
  cache::FeedbackResult result;
  if (!stage->cache().feedback(report.entry, report.correct, report.similarity, prefix, result)) {
    res.error(404, "no cache entry " + std::to_string(report.entry) +
                       " (evicted, expired or deleted: nothing to correct)");
    return;
  }
  std::string& out = res.body;
  out += R"({"entry":)";
  json_append_number(out, report.entry);
  out += R"(,"removed":)";
  out += result.removed ? "true" : "false";
  if (!result.removed) {
    out += R"(,"entry_threshold":)";
    json_append_number(out, result.entry_threshold);
  }
  out += R"(,"namespace_threshold":)";
  json_append_number(out, result.namespace_threshold);
  out += '}';
}

void erase_entry(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  CacheStage* stage = stage_or_404(repo, res);
  if (!stage) return;
  const std::string_view text = req.param("id");
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || end != text.data() + text.size() || id == 0) {
    res.error(400, "entry id: expected a positive integer (an X-Cache-Entry value)");
    return;
  }
  // A tenant removes only entries of its own namespaces.
  const std::string prefix = tenant_prefix(req);
  if (!stage->cache().erase(id, prefix)) {
    res.error(404, "no cache entry " + std::string(text));
    return;
  }
  res.body += R"({"deleted":1})";
}

void erase_namespace(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  std::string ns;
  CacheStage* stage = stage_and_namespace(repo, req, res, ns);
  if (!stage) return;
  const std::size_t n = stage->cache().erase_namespace(ns);
  res.body += R"({"deleted":)";
  json_append_number(res.body, n);
  res.body += '}';
}

}  // namespace

void add_cache_routes(net::Router& router, const ModelRepository& repository) {
  const ModelRepository* repo = &repository;
  router.add(Method::get, "/v2/cache",
             [repo](const HttpRequest&, HttpResponse& res) { stats(*repo, res); });
  router.add(Method::delete_, "/v2/cache/entries/{id}",
             [repo](const HttpRequest& req, HttpResponse& res) { erase_entry(*repo, req, res); });
  router.add(
      Method::delete_, "/v2/cache/namespaces/{namespace}",
      [repo](const HttpRequest& req, HttpResponse& res) { erase_namespace(*repo, req, res); });
  router.add(
      Method::get, "/v2/cache/namespaces/{namespace}",
      [repo](const HttpRequest& req, HttpResponse& res) { show_namespace(*repo, req, res); });
  router.add(
      Method::put, "/v2/cache/namespaces/{namespace}",
      [repo](const HttpRequest& req, HttpResponse& res) { configure_namespace(*repo, req, res); });
  router.add(Method::post, "/v2/cache/feedback",
             [repo](const HttpRequest& req, HttpResponse& res) { feedback(*repo, req, res); });
}

}  // namespace coinfer
