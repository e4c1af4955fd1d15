#include "cache_fields.hpp"

#include <simdjson.h>

#include <cmath>
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

namespace {

// Each field of a JSON object body, by name; an error names the field, or says the body is
// not an object.
// An invalid-argument Status of the pieces, joined. Out of line: GCC 12, inlining a message
// built from literals and a string into the parsers below, warns falsely of out-of-bounds
// copies (-Warray-bounds at -O1).
[[gnu::noinline]] Status invalid(std::string_view a, std::string_view b = {},
                                 std::string_view c = {}) {
  std::string message;
  message.reserve(a.size() + b.size() + c.size());
  message.append(a).append(b).append(c);
  return Status::invalid(std::move(message));
}

template <class Field>
Status for_each_field(std::string_view body, const char* shape, Field&& field) {
  thread_local simdjson::dom::parser parser;  // keeps its buffers between bodies
  simdjson::dom::object object;
  if (parser.parse(body.data(), body.size()).get(object)) {
    return invalid("body: expected one JSON object ", shape);
  }
  for (const auto [key, value] : object) {
    if (auto s = field(key, value); !s.ok()) return s;
  }
  return {};
}

// A number in [0, 1]; with allow_null, null leaves `out` as it is and sets `null`.
Status read_fraction(simdjson::dom::element value, std::string_view field, float& out,
                     bool allow_null, bool& null) {
  null = false;
  if (allow_null && value.is_null()) {
    null = true;
    return {};
  }
  double number = 0;
  if (value.get_double().get(number) || !std::isfinite(number) || number < 0 || number > 1) {
    return invalid(field, ": expected a number in [0, 1]", allow_null ? " or null" : "");
  }
  out = static_cast<float>(number);
  return {};
}

}  // namespace

Status parse_feedback(std::string_view body, Feedback& out) {
  constexpr const char* shape = R"(like {"entry": 17, "correct": false, "similarity": 0.93})";
  bool has_entry = false, has_correct = false;
  Status status = for_each_field(
      body, shape, [&](std::string_view key, simdjson::dom::element value) -> Status {
        if (key == "entry") {
          has_entry = true;
          if (value.get_uint64().get(out.entry) || out.entry == 0) {
            return Status::invalid("entry: expected a positive integer (an X-Cache-Entry value)");
          }
        } else if (key == "correct") {
          has_correct = true;
          if (value.get_bool().get(out.correct)) {
            return Status::invalid(
                "correct: expected true (the hit answered the request) or false");
          }
        } else if (key == "similarity") {
          bool null = false;
          return read_fraction(value, "similarity", out.similarity, /*allow_null=*/true, null);
        } else {
          return invalid("unknown field '", key, "' (known: entry, correct, similarity)");
        }
        return {};
      });
  if (!status.ok()) return status;
  if (!has_entry) return Status::invalid("entry: missing (the X-Cache-Entry of the hit)");
  if (!has_correct) return Status::invalid("correct: missing (true or false)");
  return {};
}

Status parse_namespace_settings(std::string_view body, cache::NamespaceSettings& out) {
  constexpr const char* shape = R"(like {"similarity_threshold": 0.9, "target_error_rate": 0.01})";
  return for_each_field(
      body, shape, [&](std::string_view key, simdjson::dom::element value) -> Status {
        bool null = false;
        if (key == "similarity_threshold") {
          if (auto s = read_fraction(value, key, out.threshold, true, null); !s.ok()) return s;
          if (null) out.threshold = 0.0f;  // the cache's
          if (!null && out.threshold == 0) {
            return Status::invalid("similarity_threshold: must be above 0 (null: the cache's)");
          }
          return {};
        }
        if (key == "target_error_rate") {
          if (auto s = read_fraction(value, key, out.target_error_rate, true, null); !s.ok())
            return s;
          if (null) out.target_error_rate = -1.0f;
          return {};
        }
        return invalid("unknown field '", key,
                       "' (known: similarity_threshold, target_error_rate)");
      });
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
