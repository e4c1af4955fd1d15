#include "cache_fields.hpp"

#include <cstdio>

#include "coinfer/core/access.hpp"

namespace coinfer::cache_fields {
namespace {

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Status namespace_for(const Tenant* tenant, std::string_view field, std::string_view name,
                     std::string& out) {
  if (name.empty() || name.size() > 128) {
    return Status::invalid(std::string(field) + ": expected 1 to 128 characters");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == ':';
    if (!ok) {
      return Status::invalid(std::string(field) + ": letters, digits, '-', '_', '.' and ':' only");
    }
  }
  out.clear();
  if (tenant) {
    out += tenant->name();
    out += '/';
  }
  out += name;
  return {};
}

Status namespace_of(const net::HttpRequest& req, std::string_view name, std::string& out) {
  return namespace_for(req.tenant, "X-Cache-Namespace", name, out);
}

void apply_cache_control(std::string_view control, CacheDirectives& out) {
  while (!control.empty()) {
    const std::size_t comma = control.find(',');
    const std::string_view directive = trim(control.substr(0, comma));
    if (equals_ignore_case(directive, "no-store")) {
      out.lookup = false;
      out.store = false;
    } else if (equals_ignore_case(directive, "no-cache")) {
      out.lookup = false;
    }
    if (comma == std::string_view::npos) break;
    control.remove_prefix(comma + 1);
  }
}

Status read_directives(const net::HttpRequest& req, CacheDirectives& out) {
  const std::string_view name = req.header("x-cache-namespace");
  if (auto s = namespace_of(req, name.empty() ? "default" : name, out.ns); !s.ok()) return s;
  apply_cache_control(req.header("cache-control"), out);
  return {};
}

std::string_view outcome_name(const CacheOutcome& o) noexcept {
  return !o.hit ? "miss" : o.semantic ? "hit-semantic" : "hit-exact";
}

void annotate(net::HttpResponse& res, const CacheOutcome& o) {
  if (!o.looked) return;
  res.headers.emplace_back("X-Cache", std::string(outcome_name(o)));
  if (o.show_similarity) {
    char similarity[32];
    std::snprintf(similarity, sizeof(similarity), "%.4f", static_cast<double>(o.similarity));
    res.headers.emplace_back("X-Cache-Similarity", similarity);
  }
  if (o.entry != 0) res.headers.emplace_back("X-Cache-Entry", std::to_string(o.entry));
}

}  // namespace coinfer::cache_fields
