#include "generation_fields.hpp"

#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>

#include "coinfer/core/json_writer.hpp"

namespace coinfer::generation_fields {

namespace ondemand = simdjson::ondemand;
using generation::FinishReason;

Status read_string(ondemand::value& value, std::string_view key, std::string& out) {
  std::string_view s;
  if (value.get_string().get(s)) return Status::invalid(std::string(key) + ": expected a string");
  out = s;
  return {};
}

Status read_bool(ondemand::value& value, std::string_view key, bool& out) {
  if (value.get_bool().get(out)) return Status::invalid(std::string(key) + ": expected a boolean");
  return {};
}

template <class T>
Status read_number(ondemand::value& value, std::string_view key, T& out, double min, double max) {
  double d = 0;
  if (value.get_double().get(d) || !std::isfinite(d)) {
    return Status::invalid(std::string(key) + ": expected a number");
  }
  if (d < min || d > max) {
    return Status::invalid(std::string(key) + ": must be in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got " + std::to_string(d));
  }
  if constexpr (std::is_integral_v<T>) {
    if (d != std::floor(d)) return Status::invalid(std::string(key) + ": expected an integer");
  }
  out = static_cast<T>(d);
  return {};
}
template Status read_number<int>(ondemand::value&, std::string_view, int&, double, double);
template Status read_number<float>(ondemand::value&, std::string_view, float&, double, double);
template Status read_number<double>(ondemand::value&, std::string_view, double&, double, double);

namespace {

// A string or an array of strings; at most 16, each 1 to 256 bytes.
Status read_stop(ondemand::value& value, std::vector<std::string>& out) {
  ondemand::json_type type;
  if (value.type().get(type)) return Status::invalid("stop: invalid JSON");
  if (type == ondemand::json_type::null) return {};
  if (type == ondemand::json_type::string) {
    std::string s;
    if (auto st = read_string(value, "stop", s); !st.ok()) return st;
    out.push_back(std::move(s));
  } else {
    ondemand::array array;
    if (value.get_array().get(array)) return Status::invalid("stop: expected a string or an array of strings");
    for (auto element : array) {
      std::string_view s;
      if (element.get_string().get(s)) return Status::invalid("stop: expected strings");
      out.emplace_back(s);
    }
  }
  if (out.size() > 16) return Status::invalid("stop: at most 16 stop strings");
  for (const auto& s : out) {
    if (s.empty() || s.size() > 256) return Status::invalid("stop: each string must hold 1 to 256 bytes");
  }
  return {};
}

}  // namespace

Status read_token_ids(ondemand::value& value, std::string_view what,
                      std::vector<std::int32_t>& out) {
  ondemand::array array;
  if (value.get_array().get(array)) return Status::invalid(std::string(what));
  for (auto element : array) {
    std::int64_t id = 0;
    if (element.get_int64().get(id) || id < 0 || id > INT32_MAX) {
      return Status::invalid(std::string(what));
    }
    out.push_back(static_cast<std::int32_t>(id));
  }
  return {};
}

namespace {

// OpenAI's {"token id": bias, ...}; ranges are checked by SamplingParams::validate.
Status read_logit_bias(ondemand::value& value, std::vector<std::pair<std::int32_t, float>>& out) {
  ondemand::object object;
  if (value.get_object().get(object)) {
    return Status::invalid("logit_bias: expected an object of token ids to biases");
  }
  for (auto field : object) {
    std::string_view key;
    ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) {
      return Status::invalid("logit_bias: invalid JSON");
    }
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc{} || end != key.data() + key.size() || id < 0 || id > INT32_MAX) {
      return Status::invalid("logit_bias: '" + std::string(key) + "' is not a token id");
    }
    double bias = 0;
    if (v.get_double().get(bias)) {
      return Status::invalid("logit_bias[" + std::string(key) + "]: expected a number");
    }
    if (out.size() >= generation::SamplingParams::kMaxLogitBias) {
      return Status::invalid("logit_bias: at most " +
                             std::to_string(generation::SamplingParams::kMaxLogitBias) +
                             " entries");
    }
    out.emplace_back(static_cast<std::int32_t>(id), static_cast<float>(bias));
  }
  return {};
}


using generation::grammar::OutputConstraint;

// The schema's JSON text: an object as written, or a string that holds it.
Status read_schema(ondemand::value& value, std::string_view where, std::string& out) {
  ondemand::json_type type;
  if (value.type().get(type)) return Status::invalid(std::string(where) + ": invalid JSON");
  if (type == ondemand::json_type::string) return read_string(value, where, out);
  ondemand::object object;
  std::string_view raw;
  if (type != ondemand::json_type::object || value.get_object().get(object) ||
      object.raw_json().get(raw)) {
    return Status::invalid(std::string(where) + ": expected a JSON schema (an object)");
  }
  out.assign(raw);
  return {};
}

Status read_choices(ondemand::value& value, std::string_view where, std::vector<std::string>& out) {
  ondemand::array array;
  if (value.get_array().get(array)) return Status::invalid(std::string(where) + ": expected an array of strings");
  for (auto element : array) {
    std::string_view s;
    if (element.get_string().get(s)) return Status::invalid(std::string(where) + ": expected an array of strings");
    out.emplace_back(s);
  }
  return {};
}

Status set_constraint(OutputConstraint& out, OutputConstraint::Kind kind, std::string field) {
  if (!out.empty()) {
    return Status::invalid(field + ": only one structured output may be given (" + out.field +
                           " was too)");
  }
  out.kind = kind;
  out.field = std::move(field);
  return {};
}

// OpenAI's response_format: {"type": "text" | "json_object" | "json_schema", "json_schema":
// {"name", "schema", "strict", "description"}}.
Status read_response_format(ondemand::value& value, OutputConstraint& out) {
  ondemand::object object;
  if (value.get_object().get(object)) return Status::invalid("response_format: expected an object");
  std::string type;
  bool has_schema = false;
  std::string schema;
  for (auto field : object) {
    std::string_view key;
    ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid("response_format: invalid JSON");
    if (key == "type") {
      if (auto s = read_string(v, "response_format.type", type); !s.ok()) return s;
    } else if (key == "json_schema") {
      ondemand::object js;
      if (v.get_object().get(js)) return Status::invalid("response_format.json_schema: expected an object");
      for (auto f : js) {
        std::string_view k;
        ondemand::value jv;
        if (f.unescaped_key().get(k) || f.value().get(jv)) return Status::invalid("response_format.json_schema: invalid JSON");
        if (k == "schema") {
          has_schema = true;
          if (auto s = read_schema(jv, "response_format.json_schema.schema", schema); !s.ok()) return s;
        } else if (k == "name" || k == "description") {
          std::string ignored;
          if (auto s = read_string(jv, "response_format.json_schema." + std::string(k), ignored); !s.ok()) return s;
        } else if (k == "strict") {
          bool ignored = false;  // every schema is enforced; strict or not, the output matches it
          if (auto s = read_bool(jv, "response_format.json_schema.strict", ignored); !s.ok()) return s;
        } else {
          return Status::invalid("response_format.json_schema." + std::string(k) + ": not supported");
        }
      }
    } else {
      return Status::invalid("response_format." + std::string(key) + ": not supported");
    }
  }
  if (type == "text") return {};
  if (type == "json_object") return set_constraint(out, OutputConstraint::Kind::json_object, "response_format");
  if (type == "json_schema") {
    if (!has_schema) return Status::invalid("response_format.json_schema.schema: missing");
    if (auto s = set_constraint(out, OutputConstraint::Kind::json_schema, "response_format.json_schema.schema"); !s.ok()) return s;
    out.source = std::move(schema);
    return {};
  }
  return Status::invalid("response_format.type: expected text, json_object or json_schema, got '" + type + "'");
}

// vLLM's structured_outputs: exactly one of json, regex, choice, grammar, json_object.
Status read_structured_outputs(ondemand::value& value, OutputConstraint& out) {
  ondemand::object object;
  if (value.get_object().get(object)) return Status::invalid("structured_outputs: expected an object");
  for (auto field : object) {
    std::string_view key;
    ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid("structured_outputs: invalid JSON");
    const std::string where = "structured_outputs." + std::string(key);
    ondemand::json_type type;
    if (v.type().get(type)) return Status::invalid(where + ": invalid JSON");
    if (type == ondemand::json_type::null) continue;
    Status s;
    if (key == "json") {
      s = set_constraint(out, OutputConstraint::Kind::json_schema, where);
      if (s.ok()) s = read_schema(v, where, out.source);
    } else if (key == "regex") {
      s = set_constraint(out, OutputConstraint::Kind::regex, where);
      if (s.ok()) s = read_string(v, where, out.source);
    } else if (key == "grammar") {
      s = set_constraint(out, OutputConstraint::Kind::grammar, where);
      if (s.ok()) s = read_string(v, where, out.source);
    } else if (key == "choice") {
      s = set_constraint(out, OutputConstraint::Kind::choice, where);
      if (s.ok()) s = read_choices(v, where, out.choices);
    } else if (key == "json_object") {
      bool on = false;
      s = read_bool(v, where, on);
      if (s.ok() && on) s = set_constraint(out, OutputConstraint::Kind::json_object, where);
    } else if (key == "whitespace_pattern") {
      s = read_string(v, where, out.whitespace);
    } else {
      s = Status::invalid(where + ": not supported");
    }
    if (!s.ok()) return s;
  }
  return {};
}

}  // namespace

Status read_field(std::string_view key, ondemand::value& value, GenerationCall& out, bool& known) {
  auto& g = out.request;
  auto& sp = g.sampling;
  known = true;
  if (key == "max_tokens" || key == "max_completion_tokens") {
    out.max_tokens_given = true;
    return read_number(value, key, g.max_tokens, 1, 1 << 20);
  }
  if (key == "min_tokens") return read_number(value, key, g.min_tokens, 0, 1 << 20);
  if (key == "temperature") return read_number(value, key, sp.temperature, 0, 2);
  if (key == "top_p") return read_number(value, key, sp.top_p, 0, 1);
  if (key == "top_k") return read_number(value, key, sp.top_k, -1, 1 << 20);
  if (key == "min_p") return read_number(value, key, sp.min_p, 0, 1);
  if (key == "presence_penalty") return read_number(value, key, sp.presence_penalty, -2, 2);
  if (key == "frequency_penalty") return read_number(value, key, sp.frequency_penalty, -2, 2);
  if (key == "repetition_penalty") return read_number(value, key, sp.repetition_penalty, 0.01, 100);
  if (key == "seed") {
    std::int64_t seed = 0;
    if (value.get_int64().get(seed)) return Status::invalid("seed: expected an integer");
    sp.seed = static_cast<std::uint64_t>(seed);
    return {};
  }
  if (key == "stop") return read_stop(value, g.stop);
  if (key == "logit_bias") return read_logit_bias(value, sp.logit_bias);
  if (key == "stop_token_ids") {
    return read_token_ids(value, "stop_token_ids: expected an array of token ids", g.stop_token_ids);
  }
  if (key == "ignore_eos") return read_bool(value, key, g.ignore_eos);
  if (key == "skip_special_tokens") return read_bool(value, key, g.skip_special_tokens);
  if (key == "priority") return read_number(value, key, g.priority, -1000000, 1000000);
  if (key == "num_speculative_tokens") return read_number(value, key, g.num_speculative_tokens, 0, 16);
  if (key == "timeout") return read_number(value, key, out.timeout_s, 0.001, 86400);
  if (key == "response_format") return read_response_format(value, out.constraint);
  if (key == "structured_outputs") return read_structured_outputs(value, out.constraint);
  // vLLM's fields before structured_outputs.
  if (key == "guided_json") {
    if (auto s = set_constraint(out.constraint, OutputConstraint::Kind::json_schema, std::string(key)); !s.ok()) return s;
    return read_schema(value, key, out.constraint.source);
  }
  if (key == "guided_regex" || key == "guided_grammar") {
    const auto kind = key == "guided_regex" ? OutputConstraint::Kind::regex : OutputConstraint::Kind::grammar;
    if (auto s = set_constraint(out.constraint, kind, std::string(key)); !s.ok()) return s;
    return read_string(value, key, out.constraint.source);
  }
  if (key == "guided_whitespace_pattern") return read_string(value, key, out.constraint.whitespace);
  if (key == "guided_choice") {
    if (auto s = set_constraint(out.constraint, OutputConstraint::Kind::choice, std::string(key)); !s.ok()) return s;
    return read_choices(value, key, out.constraint.choices);
  }
  known = false;
  return {};
}

Status finish_status(const generation::GenerationUpdate& u) {
  switch (u.finish) {
    case FinishReason::timeout:
      return Status(Errc::deadline_exceeded, "the request's timeout passed before it finished");
    case FinishReason::cancelled:
      return Status(Errc::unavailable, "the server is shutting down");
    case FinishReason::error:
      return u.error.ok() ? Status(Errc::internal, "generation failed") : u.error;
    default:
      return {};
  }
}

net::HttpResponse event_stream_head() {
  net::HttpResponse head;
  head.content_type = "text/event-stream";
  head.headers.emplace_back("Cache-Control", "no-cache");
  head.headers.emplace_back("X-Accel-Buffering", "no");  // nginx: pass events on at once
  return head;
}

void append_usage(std::string& out, const generation::GenerationUpdate& u) {
  out += R"("usage":{"prompt_tokens":)";
  json_append_number(out, u.prompt_tokens);
  out += R"(,"completion_tokens":)";
  json_append_number(out, u.completion_tokens);
  out += R"(,"total_tokens":)";
  json_append_number(out, u.prompt_tokens + u.completion_tokens);
  if (u.cached_tokens > 0) {
    out += R"(,"prompt_tokens_details":{"cached_tokens":)";
    json_append_number(out, u.cached_tokens);
    out += '}';
  }
  out += '}';
}

}  // namespace coinfer::generation_fields
