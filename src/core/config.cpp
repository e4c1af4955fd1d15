#include "coinfer/core/config.hpp"

#include "coinfer/core/access.hpp"

#include <sched.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <utility>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace coinfer {
namespace {

// Config strings are names, paths and devices: no control characters. (A string that starts
// with a newline would not even survive the logged config: TOML drops a multi-line string's
// first newline; found by fuzz/toml_config_fuzzer.)
constexpr char kNoControlCharacters[] = "control characters are not allowed";
bool has_control_character(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
}

// Reads one table field by field; every key it does not consume is reported as unknown.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix)
      : table_(table), prefix_(std::move(prefix)) {}

  template <class Int>
  void integer(std::string_view key, Int& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    // value_exact: value<int64_t>() would convert a float, out of range undefined (found by
    // fuzz/toml_config_fuzzer: priority_levels = 8446744073709551616e4).
    auto value = node->value_exact<std::int64_t>();
    if (!value) return fail(key, "expected an integer");
    // std::in_range: a negative value for a signed field is compared as the number it is
    // (a cast to uint64_t made every negative value "out of range").
    if (!std::in_range<Int>(*value)) {
      return fail(key, std::to_string(*value) + " is out of range");
    }
    field = static_cast<Int>(*value);
  }

  void integers(std::string_view key, std::vector<int>& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    const toml::array* array = node->as_array();
    if (!array) return fail(key, "expected an array of integers");
    field.clear();
    for (const auto& element : *array) {
      auto value = element.value_exact<std::int64_t>();
      if (!value || *value < 1 || *value > 1'000'000) {
        return fail(key, "expected an array of positive integers");
      }
      field.push_back(static_cast<int>(*value));
    }
  }

  void number(std::string_view key, double& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    std::optional<double> value = node->value_exact<double>();
    if (!value) {
      if (auto integer = node->value_exact<std::int64_t>()) value = static_cast<double>(*integer);
    }
    if (!value || !(*value >= 0) || *value > 1e9) {
      return fail(key, "expected a number from 0 to 1e9");
    }
    field = *value;
  }

  void strings(std::string_view key, std::vector<std::string>& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    const toml::array* array = node->as_array();
    if (!array) return fail(key, "expected an array of strings");
    field.clear();
    for (const auto& element : *array) {
      if (!element.is_string()) return fail(key, "expected an array of strings");
      field.push_back(*element.value<std::string>());
      if (has_control_character(field.back())) return fail(key, kNoControlCharacters);
    }
  }

  void boolean(std::string_view key, bool& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    auto value = node->value_exact<bool>();
    if (!value) return fail(key, "expected a boolean");
    field = *value;
  }

  void string(std::string_view key, std::string& field) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return;
    if (!node->is_string()) return fail(key, "expected a string");
    field = *node->value<std::string>();
    if (has_control_character(field)) return fail(key, kNoControlCharacters);
  }

  const toml::table* table(std::string_view key) {
    const toml::node* node = take(key);
    if (!node || !status_.ok()) return nullptr;
    if (!node->is_table()) {
      fail(key, "expected a table");
      return nullptr;
    }
    return node->as_table();
  }

  // Call after reading every known key.
  Status finish() {
    if (!status_.ok()) return status_;
    for (const auto& [key, node] : table_) {
      if (!seen_.contains(std::string(key.str()))) {
        return Status::invalid(prefix_ + std::string(key.str()) + ": unknown key");
      }
    }
    return {};
  }

  bool seen(const std::string& key) const { return seen_.contains(key); }
  void mark_seen(const std::string& key) { seen_.insert(key); }
  void fail(std::string_view key, std::string message) {
    if (status_.ok()) status_ = Status::invalid(prefix_ + std::string(key) + ": " + message);
  }

 private:
  const toml::node* take(std::string_view key) {
    seen_.insert(std::string(key));
    return table_.get(key);
  }

  const toml::table& table_;
  std::string prefix_;
  std::set<std::string> seen_;
  Status status_;
};

// Names that become TOML keys again in the logged config, and model names in URL paths:
// letters, digits, '_', '-' (and '.' where `dot`). toml++ writes other keys back in quotes
// that do not always parse ('b't', found by fuzz/toml_config_fuzzer).
bool is_plain_name(std::string_view name, bool dot) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || (dot && c == '.');
    if (!plain) return false;
  }
  return true;
}

Status read_server(const toml::table& table, ServerConfig& s) {
  TableReader r(table, "server.");
  r.string("host", s.host);
  r.integer("port", s.port);
  r.integer("grpc_port", s.grpc_port);
  r.integer("io_threads", s.io_threads);
  r.integer("max_header_bytes", s.max_header_bytes);
  r.integer("max_body_bytes", s.max_body_bytes);
  r.integer("read_timeout_ms", s.read_timeout_ms);
  r.integer("idle_timeout_ms", s.idle_timeout_ms);
  r.integer("write_timeout_ms", s.write_timeout_ms);
  r.integer("max_connections", s.max_connections);
  r.integer("drain_timeout_ms", s.drain_timeout_ms);
  r.integer("ws_max_in_flight", s.ws_max_in_flight);
  r.integer("ws_idle_timeout_ms", s.ws_idle_timeout_ms);
  r.integer("ws_max_message_bytes", s.ws_max_message_bytes);
  r.string("tls_cert_file", s.tls_cert_file);
  r.string("tls_key_file", s.tls_key_file);
  if (s.tls_cert_file.empty() != s.tls_key_file.empty()) {
    r.fail(s.tls_cert_file.empty() ? "tls_cert_file" : "tls_key_file",
           "missing: TLS needs both tls_cert_file and tls_key_file");
  }
  if (s.grpc_port < -1 || s.grpc_port > 65535) {
    r.fail("grpc_port", std::to_string(s.grpc_port) + " is not a port (0: any free port, -1: off)");
  }
  if (s.ws_max_in_flight < 1) r.fail("ws_max_in_flight", "must be at least 1");
  if (s.io_threads < 1) r.fail("io_threads", "must be at least 1");
  if (s.max_connections < 1) r.fail("max_connections", "must be at least 1");
  return r.finish();
}

Status read_log(const toml::table& table, LogConfig& log) {
  TableReader r(table, "log.");
  r.string("level", log.level);
  static const std::set<std::string> levels{"trace", "debug", "info", "warn", "error", "off"};
  if (!levels.contains(log.level)) r.fail("level", "unknown level '" + log.level + "'");
  r.string("format", log.format);
  if (log.format != "text" && log.format != "json") {
    r.fail("format", "unknown format '" + log.format + "' (text or json)");
  }
  r.boolean("access", log.access);
  return r.finish();
}

Status read_tenant(const toml::table& table, const std::string& prefix, TenantConfig& t) {
  TableReader r(table, prefix + t.name + ".");
  std::string key;
  r.string("key", key);
  r.string("key_sha256", t.key_sha256);
  r.strings("models", t.models);
  r.integer("max_concurrent", t.max_concurrent);
  r.number("requests_per_s", t.requests_per_s);
  r.integer("burst", t.burst);
  if (!key.empty() && !t.key_sha256.empty()) {
    r.fail("key", "give key or key_sha256, not both");
  } else if (!key.empty()) {
    t.key_sha256 = sha256_hex(key);
  } else if (t.key_sha256.size() != 64 ||
             t.key_sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    r.fail(t.key_sha256.empty() ? "key" : "key_sha256",
           t.key_sha256.empty() ? "missing (key or key_sha256)"
                                : "expected 64 lowercase hex digits (a SHA-256)");
  }
  return r.finish();
}

// The [NAME] tables of `tenants`, appended to `out`; a name or a key used twice is an error.
Status read_tenants(const toml::table& tenants, const std::string& prefix,
                    std::vector<TenantConfig>& out) {
  for (const auto& [name, node] : tenants) {
    TenantConfig tenant;
    tenant.name = std::string(name.str());
    if (!is_plain_name(tenant.name, /*dot=*/true)) {
      return Status::invalid(prefix + tenant.name +
                             ": a tenant name is letters, digits, '_', '-' and '.'");
    }
    if (!node.is_table()) return Status::invalid(prefix + tenant.name + ": expected a table");
    if (auto s = read_tenant(*node.as_table(), prefix, tenant); !s.ok()) return s;
    for (const auto& other : out) {
      if (other.name == tenant.name) {
        return Status::invalid(prefix + tenant.name + ": tenant defined twice");
      }
      if (other.key_sha256 == tenant.key_sha256) {
        return Status::invalid(prefix + tenant.name + ": same key as tenant '" + other.name + "'");
      }
    }
    out.push_back(std::move(tenant));
  }
  return {};
}

Status read_auth(const toml::table& table, AuthConfig& auth) {
  TableReader r(table, "auth.");
  r.string("keys_file", auth.keys_file);
  r.strings("public_paths", auth.public_paths);
  const toml::table* tenants = r.table("tenants");
  if (auto s = r.finish(); !s.ok()) return s;
  return tenants ? read_tenants(*tenants, "auth.tenants.", auth.tenants) : Status{};
}

Status read_cache(const toml::table& table, CacheConfig& c) {
  TableReader r(table, "cache.");
  r.integer("max_entries", c.max_entries);
  r.integer("max_bytes", c.max_bytes);
  r.integer("ttl_s", c.ttl_s);
  r.string("embedding_model", c.embedding_model);
  r.number("similarity_threshold", c.similarity_threshold);
  r.string("verifier_model", c.verifier_model);
  r.number("verifier_threshold", c.verifier_threshold);
  r.integer("verifier_candidates", c.verifier_candidates);
  if (c.verifier_threshold < 0 || c.verifier_threshold > 1) {
    r.fail("verifier_threshold", "must be in [0, 1]");
  }
  if (c.verifier_candidates < 1 || c.verifier_candidates > 16) {
    r.fail("verifier_candidates", "must be in 1..16");
  }
  if (const toml::node* guards = table.get("guards")) {
    r.mark_seen("guards");
    if (auto b = guards->value_exact<bool>()) {
      c.guards = *b;
    } else {
      r.fail("guards", "expected a boolean");
    }
  }
  r.string("index", c.index);
  r.integer("ivf_min_entries", c.ivf_min_entries);
  r.integer("nprobe", c.nprobe);
  r.string("snapshot_file", c.snapshot_file);
  r.integer("snapshot_interval_s", c.snapshot_interval_s);
  r.number("target_error_rate", c.target_error_rate);
  if (c.target_error_rate < 0 || c.target_error_rate > 1) {
    r.fail("target_error_rate", "must be in [0, 1]");
  }
  if (const toml::table* spaces = r.table("namespaces")) {
    for (const auto& [name, node] : *spaces) {
      CacheConfig::Namespace space;
      space.name = std::string(name.str());
      const std::string field = "namespaces." + space.name;
      if (space.name.empty() || space.name.size() > 128 ||
          space.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_.:/") != std::string::npos) {
        r.fail(field, "a namespace is 1 to 128 letters, digits, '-', '_', '.', ':' ('/' after a "
                      "tenant's name)");
        continue;
      }
      if (!node.is_table()) {
        r.fail(field, "expected a table");
        continue;
      }
      TableReader n(*node.as_table(), "cache." + field + ".");
      n.number("similarity_threshold", space.similarity_threshold);
      n.number("target_error_rate", space.target_error_rate);
      if (space.similarity_threshold < 0 || space.similarity_threshold > 1) {
        n.fail("similarity_threshold", "must be in (0, 1]");
      }
      if (space.target_error_rate != -1 &&
          (space.target_error_rate < 0 || space.target_error_rate > 1)) {
        n.fail("target_error_rate", "must be in [0, 1]");
      }
      if (auto s = n.finish(); !s.ok()) return s;
      c.namespaces.push_back(std::move(space));
    }
  }
  if (c.max_entries < 1) r.fail("max_entries", "must be at least 1");
  if (c.max_bytes < 4096) r.fail("max_bytes", "must be at least 4096");
  if (c.similarity_threshold <= 0 || c.similarity_threshold > 1) {
    r.fail("similarity_threshold", "must be in (0, 1]");
  }
  if (c.index != "auto" && c.index != "flat" && c.index != "ivf") {
    r.fail("index", "unknown index '" + c.index + "' (known: auto, flat, ivf)");
  }
  if (c.ivf_min_entries < 64) r.fail("ivf_min_entries", "must be at least 64");
  if (c.nprobe < 1) r.fail("nprobe", "must be at least 1");
  return r.finish();
}

Status read_model(const toml::table& table, ModelConfig& m) {
  TableReader r(table, "models." + m.name + ".");
  r.string("kind", m.kind);
  r.string("weights", m.weights);
  r.string("version", m.version);
  r.string("device", m.device);
  r.integer("cuda_streams", m.cuda_streams);
  r.integer("max_batch_size", m.max_batch_size);
  r.integer("max_queue_delay_us", m.max_queue_delay_us);
  r.integers("preferred_batch_sizes", m.preferred_batch_sizes);
  r.integer("max_queue_size", m.max_queue_size);
  r.integer("max_batch_bytes", m.max_batch_bytes);
  r.integer("default_timeout_us", m.default_timeout_us);
  r.integer("priority_levels", m.priority_levels);
  r.integer("default_priority", m.default_priority);
  std::string cache = "off";
  r.string("cache", cache);
  if (cache == "off") {
    m.cache = CacheMode::off;
  } else if (cache == "exact") {
    m.cache = CacheMode::exact;
  } else if (cache == "semantic") {
    m.cache = CacheMode::semantic;
  } else {
    r.fail("cache", "unknown mode '" + cache + "' (known: off, exact, semantic)");
  }
  // The rest belongs to the kind: kept for its loader, which rejects what it does not know.
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (r.seen(name)) continue;
    r.mark_seen(name);
    // Every kind's keys are bare TOML keys; a quoted one ("x\ty") is no setting of any kind,
    // and toml++ would write it back unquoted into the logged config (fuzz/toml_config_fuzzer).
    if (!is_plain_name(name, /*dot=*/false)) {
      r.fail(name, "unknown key (keys are letters, digits, '_' and '-')");
      continue;
    }
    if (auto b = node.value_exact<bool>()) {
      m.options.emplace_back(name, *b);
    } else if (auto i = node.value_exact<std::int64_t>()) {
      m.options.emplace_back(name, *i);
    } else if (auto d = node.value_exact<double>()) {
      m.options.emplace_back(name, *d);
    } else if (auto s = node.value_exact<std::string>()) {
      if (has_control_character(*s)) r.fail(name, kNoControlCharacters);
      m.options.emplace_back(name, *s);
    } else {
      r.fail(name, "expected a boolean, a number or a string");
    }
  }
  if (m.kind.empty()) r.fail("kind", "missing (which model class to serve)");
  if (m.device != "cpu" && m.device != "cuda" &&
      !(m.device.starts_with("cuda:") && m.device.size() > 5 &&
        m.device.find_first_not_of("0123456789", 5) == std::string::npos)) {
    r.fail("device", "unknown device '" + m.device + "' (known: cpu, cuda, cuda:N)");
  }
  if (m.cuda_streams < 1 || m.cuda_streams > 16) r.fail("cuda_streams", "must be within 1..16");
  if (m.device == "cpu" && table.contains("cuda_streams")) {
    r.fail("cuda_streams", "applies to a cuda device only (device is cpu)");
  }
  if (m.max_batch_size < 1) r.fail("max_batch_size", "must be at least 1 (1: no batching)");
  for (int size : m.preferred_batch_sizes) {
    if (size > m.max_batch_size) {
      r.fail("preferred_batch_sizes", std::to_string(size) + " exceeds max_batch_size");
    }
  }
  if (m.max_queue_size < 1) r.fail("max_queue_size", "must be at least 1");
  if (m.max_batch_bytes < 1) r.fail("max_batch_bytes", "must be at least 1");
  if (m.priority_levels < 1) r.fail("priority_levels", "must be at least 1");
  if (m.default_priority < 1 || m.default_priority > m.priority_levels) {
    r.fail("default_priority", "must be within 1..priority_levels");
  }
  return r.finish();
}

}  // namespace

Status parse_config(std::string_view toml_text, Config& out) {
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << "line " << e.source().begin.line << ": " << e.description();
    return Status::invalid(msg.str());
  }
  TableReader r(root, "");
  if (const auto* server = r.table("server")) {
    if (auto s = read_server(*server, out.server); !s.ok()) return s;
  }
  if (const auto* auth = r.table("auth")) {
    if (auto s = read_auth(*auth, out.auth); !s.ok()) return s;
  }
  if (const auto* log = r.table("log")) {
    if (auto s = read_log(*log, out.log); !s.ok()) return s;
  }
  if (const auto* compute = r.table("compute")) {
    TableReader c(*compute, "compute.");
    c.integer("threads", out.compute.threads);
    if (out.compute.threads < 0) c.fail("threads", "must be at least 1, or 0 for every usable core");
    if (auto s = c.finish(); !s.ok()) return s;
  }
  if (const auto* cache = r.table("cache")) {
    if (auto s = read_cache(*cache, out.cache); !s.ok()) return s;
  }
  if (const auto* models = r.table("models")) {
    out.models.clear();
    for (const auto& [name, node] : *models) {
      ModelConfig model;
      model.name = std::string(name.str());
      if (!is_plain_name(model.name, /*dot=*/true)) {
        return Status::invalid("models." + model.name +
                               ": a model name is letters, digits, '_', '-' and '.'");
      }
      if (!node.is_table()) return Status::invalid("models." + model.name + ": expected a table");
      if (auto s = read_model(*node.as_table(), model); !s.ok()) return s;
      out.models.push_back(std::move(model));
    }
  }
  if (out.compute.threads == 0) {
    out.compute.threads = usable_cores();
    out.compute.threads_from_cores = true;
  }
  return r.finish();
}

namespace {

int count_usable_cores() noexcept {
  int cores = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  if (cores < 1) cores = static_cast<int>(std::thread::hardware_concurrency());
  // A container's CPU limit (cgroup v2): "max 100000" when unlimited, else "QUOTA PERIOD".
  std::ifstream quota_file("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (quota_file >> quota >> period && quota != "max" && period > 0) {
    try {
      const long long q = std::stoll(quota);
      if (q > 0) cores = std::min<long long>(cores, (q + period - 1) / period);
    } catch (const std::exception&) {
      // unreadable: the affinity mask stands
    }
  }
  return std::max(cores, 1);
}

}  // namespace

int usable_cores() noexcept {
  static const int cores = count_usable_cores();  // once: every config parse asks
  return cores;
}

namespace {

// [auth] keys_file: a TOML file holding only [tenants.NAME] tables.
Status read_keys_file(const std::filesystem::path& path, AuthConfig& auth) {
  const std::string where = "auth.keys_file " + path.string();
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::not_found(where + ": cannot be opened");
  std::ostringstream text;
  text << file.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str());
  } catch (const toml::parse_error& e) {
    return Status::invalid(where + ": line " + std::to_string(e.source().begin.line) + ": " +
                           std::string(e.description()));
  }
  TableReader r(root, "");
  const toml::table* tenants = r.table("tenants");
  if (auto s = r.finish(); !s.ok()) return Status::invalid(where + ": " + s.message());
  if (!tenants) return {};
  if (auto s = read_tenants(*tenants, "tenants.", auth.tenants); !s.ok()) {
    return Status::invalid(where + ": " + s.message());
  }
  return {};
}

}  // namespace

std::string_view to_string(CacheMode mode) noexcept {
  switch (mode) {
    case CacheMode::off:
      return "off";
    case CacheMode::exact:
      return "exact";
    case CacheMode::semantic:
      return "semantic";
  }
  return "off";
}

Status load_config(const std::filesystem::path& path, Config& out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::not_found("config file " + path.string() + ": cannot be opened");
  std::ostringstream text;
  text << file.rdbuf();
  Status status = parse_config(text.str(), out);
  if (!status.ok()) return Status::invalid(path.string() + ": " + status.message());
  if (!out.auth.keys_file.empty()) {
    std::filesystem::path keys = out.auth.keys_file;
    if (keys.is_relative()) keys = (path.parent_path() / keys).lexically_normal();
    out.auth.keys_file = keys.string();
    if (status = read_keys_file(keys, out.auth); !status.ok()) return status;
  }
  for (std::string* file : {&out.server.tls_cert_file, &out.server.tls_key_file,
                            &out.cache.snapshot_file}) {
    if (!file->empty() && std::filesystem::path(*file).is_relative()) {
      *file = (path.parent_path() / *file).lexically_normal().string();
    }
  }
  // Relative weight paths name files next to the config, wherever the service is started.
  for (auto& model : out.models) {
    model.base_dir = path.parent_path().string();
    if (!model.weights.empty() && std::filesystem::path(model.weights).is_relative()) {
      model.weights = (path.parent_path() / model.weights).lexically_normal().string();
    }
  }
  return status;
}

std::string to_toml(const Config& c) {
  toml::table server{
      {"host", c.server.host},
      {"port", c.server.port},
      {"grpc_port", c.server.grpc_port},
      {"io_threads", c.server.io_threads},
      {"max_header_bytes", static_cast<std::int64_t>(c.server.max_header_bytes)},
      {"max_body_bytes", static_cast<std::int64_t>(c.server.max_body_bytes)},
      {"read_timeout_ms", c.server.read_timeout_ms},
      {"idle_timeout_ms", c.server.idle_timeout_ms},
      {"write_timeout_ms", c.server.write_timeout_ms},
      {"max_connections", static_cast<std::int64_t>(c.server.max_connections)},
      {"drain_timeout_ms", c.server.drain_timeout_ms},
      {"ws_max_in_flight", static_cast<std::int64_t>(c.server.ws_max_in_flight)},
      {"ws_idle_timeout_ms", c.server.ws_idle_timeout_ms},
      {"ws_max_message_bytes", static_cast<std::int64_t>(c.server.ws_max_message_bytes)},
  };
  if (!c.server.tls_cert_file.empty()) {
    server.insert("tls_cert_file", c.server.tls_cert_file);
    server.insert("tls_key_file", c.server.tls_key_file);
  }
  toml::table models;
  for (const auto& m : c.models) {
    toml::array preferred;
    for (int size : m.preferred_batch_sizes) preferred.push_back(size);
    toml::table model{{"kind", m.kind},
                      {"weights", m.weights},
                      {"version", m.version},
                      {"device", m.device},
                      {"max_batch_size", m.max_batch_size},
                      {"max_queue_delay_us", m.max_queue_delay_us},
                      {"preferred_batch_sizes", preferred},
                      {"max_queue_size", static_cast<std::int64_t>(m.max_queue_size)},
                      {"max_batch_bytes", static_cast<std::int64_t>(m.max_batch_bytes)},
                      {"default_timeout_us", m.default_timeout_us},
                      {"priority_levels", m.priority_levels},
                      {"default_priority", m.default_priority},
                      {"cache", to_string(m.cache)}};
    if (m.device != "cpu") model.insert("cuda_streams", m.cuda_streams);
    // Not a structured binding: clang before 16 (the fuzz build) cannot capture one.
    for (const auto& option : m.options) {
      std::visit([&](const auto& v) { model.insert(option.first, v); }, option.second);
    }
    models.insert(m.name, std::move(model));
  }
  toml::table tenants;
  for (const auto& t : c.auth.tenants) {
    toml::array models;
    for (const auto& model : t.models) models.push_back(model);
    // The digest only: the effective config goes to the log.
    tenants.insert(t.name, toml::table{{"key_sha256", t.key_sha256},
                                       {"models", models},
                                       {"max_concurrent", t.max_concurrent},
                                       {"requests_per_s", t.requests_per_s},
                                       {"burst", t.burst}});
  }
  toml::array public_paths;
  for (const auto& p : c.auth.public_paths) public_paths.push_back(p);
  toml::table auth{{"public_paths", public_paths}, {"tenants", tenants}};
  if (!c.auth.keys_file.empty()) auth.insert("keys_file", c.auth.keys_file);
  toml::table cache{{"max_entries", static_cast<std::int64_t>(c.cache.max_entries)},
                    {"max_bytes", static_cast<std::int64_t>(c.cache.max_bytes)},
                    {"ttl_s", c.cache.ttl_s},
                    {"embedding_model", c.cache.embedding_model},
                    {"similarity_threshold", c.cache.similarity_threshold},
                    {"verifier_model", c.cache.verifier_model},
                    {"verifier_threshold", c.cache.verifier_threshold},
                    {"verifier_candidates", static_cast<std::int64_t>(c.cache.verifier_candidates)},
                    {"guards", c.cache.guards},
                    {"index", c.cache.index},
                    {"ivf_min_entries", static_cast<std::int64_t>(c.cache.ivf_min_entries)},
                    {"nprobe", static_cast<std::int64_t>(c.cache.nprobe)},
                    {"snapshot_file", c.cache.snapshot_file},
                    {"snapshot_interval_s", c.cache.snapshot_interval_s},
                    {"target_error_rate", c.cache.target_error_rate}};
  if (!c.cache.namespaces.empty()) {
    toml::table spaces;
    for (const auto& space : c.cache.namespaces) {
      toml::table t;
      if (space.similarity_threshold > 0) {
        t.insert("similarity_threshold", space.similarity_threshold);
      }
      if (space.target_error_rate >= 0) t.insert("target_error_rate", space.target_error_rate);
      spaces.insert(space.name, std::move(t));
    }
    cache.insert("namespaces", std::move(spaces));
  }
  toml::table root{{"server", server},
                   {"auth", auth},
                   {"log", toml::table{{"level", c.log.level},
                                       {"format", c.log.format},
                                       {"access", c.log.access}}},
                   {"compute", toml::table{{"threads", c.compute.threads}}},
                   {"cache", cache},
                   {"models", models}};
  std::ostringstream out;
  out << root;
  return out.str();
}

Status keep_only_models(const std::vector<std::string>& names, Config& config) {
  if (names.empty()) return Status{};
  for (const auto& name : names) {
    const bool known = std::any_of(config.models.begin(), config.models.end(),
                                   [&](const ModelConfig& m) { return m.name == name; });
    if (!known) {
      std::string message = "--model ";
      message += name;
      message += ": no such model in the config";
      return Status::invalid(message);
    }
  }
  std::erase_if(config.models, [&](const ModelConfig& m) {
    return std::find(names.begin(), names.end(), m.name) == names.end();
  });
  return Status{};
}

}  // namespace coinfer
