#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/parameters.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer {

// [server]: the HTTP listener and its limits.
struct ServerConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;                      // 0: any free port
  // The Open Inference Protocol over gRPC (Triton's port); 0: any free port; -1: off.
  std::int32_t grpc_port = 8001;
  int io_threads = 1;                             // threads running the io_context
  std::size_t max_header_bytes = 8192;            // larger request headers: 431
  std::size_t max_body_bytes = 16 * 1024 * 1024;  // larger bodies: 413
  std::uint32_t read_timeout_ms = 10'000;         // to read one whole request once it starts
  std::uint32_t idle_timeout_ms = 60'000;         // keep-alive: wait for the next request
  std::uint32_t write_timeout_ms = 10'000;        // to write one response
  std::size_t max_connections = 1024;             // more are answered 503 and closed
  std::uint32_t drain_timeout_ms = 10'000;        // on SIGINT/SIGTERM, for in-flight requests
  // WebSocket connections: messages of one connection being handled or waiting to be
  // written; at the limit the server stops reading (backpressure).
  std::size_t ws_max_in_flight = 64;
  std::uint32_t ws_idle_timeout_ms = 60'000;  // pinged at half; closed when silent this long
  std::size_t ws_max_message_bytes = 16 * 1024 * 1024;
  // TLS (https://, wss://) when both are set: PEM files with the certificate chain and its
  // private key; relative paths are relative to the config file. TLS 1.2 and 1.3 only.
  std::string tls_cert_file;
  std::string tls_key_file;
};

// [log]
struct LogConfig {
  std::string level = "info";   // trace, debug, info, warn, error, off
  std::string format = "text";  // text: a line per event; json: one JSON object per line
  bool access = false;          // an access log line per HTTP request
};

// Whether a model's responses are cached ([models.NAME] cache): not at all, by exact request,
// or also by meaning (the request text's embedding, see CacheConfig).
enum class CacheMode { off, exact, semantic };
std::string_view to_string(CacheMode mode) noexcept;

// [cache]: the response cache the models with `cache = "exact" | "semantic"` share.
struct CacheConfig {
  std::size_t max_entries = 100'000;
  std::size_t max_bytes = 256 * 1024 * 1024;  // payloads, keys, vectors and bookkeeping
  std::uint32_t ttl_s = 3600;                 // 0: entries never expire
  // The text-embedding model (a [models] entry of kind sentence_embedding) whose vectors the
  // semantic lookups compare.
  std::string embedding_model = "minilm";
  double similarity_threshold = 0.86;  // cosine at or above: a semantic hit (docs/CACHE.md)
  bool guards = true;                  // lexical agreement checks on semantic candidates
  // A [models] entry of kind cross_encoder that scores (cached text, new text) for every
  // semantic candidate that passed the threshold and the guards: a hit needs a score of at
  // least verifier_threshold. Empty: no verifier (docs/CACHE.md).
  std::string verifier_model;
  double verifier_threshold = 0.9;
  std::size_t verifier_candidates = 2;  // nearest candidates scored per lookup (one batch)
  // The share of semantic hits reported wrong (POST /v2/cache/feedback) a namespace accepts
  // before its threshold rises above them.
  double target_error_rate = 0.02;
  // [cache.namespaces.NAME]: a namespace's own threshold and target error rate.
  struct Namespace {
    std::string name;
    double similarity_threshold = 0;  // 0: the cache's
    double target_error_rate = -1;    // < 0: the cache's
  };
  std::vector<Namespace> namespaces;
  std::string index = "auto";          // "auto" (flat, then IVF), "flat" or "ivf"
  std::size_t ivf_min_entries = 4096;  // a namespace's vectors before its index becomes an IVF
  std::size_t nprobe = 8;              // IVF lists scanned per lookup
  // Snapshot file (relative to the config file), written every snapshot_interval_s and at
  // shutdown, read at start; empty: no persistence.
  std::string snapshot_file;
  std::uint32_t snapshot_interval_s = 300;
};

// [models.NAME]: one served model.
struct ModelConfig {
  std::string name;
  std::string kind;  // which Model class: "identity", "mlp", ...
  std::string
      weights;  // weights file (safetensors); a relative path is relative to the config file
  std::string version = "1";
  // Where it runs: "cpu" (the [compute] pool) or "cuda:N" / "cuda" (GPU N, a CudaExecutor).
  std::string device = "cpu";
  // CUDA streams (lanes) of the model's CudaExecutor, each with its own pinned staging and
  // device scratch: 2 double-buffer (batch N+1 is copied in while N computes). cuda only.
  int cuda_streams = 2;
  // Dynamic batching (see BatchPolicy): max_batch_size = 1 turns batching off.
  int max_batch_size = 64;
  std::uint32_t max_queue_delay_us = 0;
  std::vector<int> preferred_batch_sizes;
  std::size_t max_queue_size = 1024;
  std::size_t max_batch_bytes = 64 * 1024 * 1024;  // staging of one batch (BatchPolicy)
  std::uint32_t default_timeout_us = 0;            // 0: no limit on time in the queue
  int priority_levels = 1;
  int default_priority = 1;
  CacheMode cache = CacheMode::off;  // "off", "exact", "semantic" ([cache])
  // Every other key of the section (booleans, numbers, strings), in file order: the kind's
  // own settings, read and checked by its loader (models/model_kind.hpp), which rejects the
  // keys it does not know by name.
  Parameters options;
  // The config file's directory (empty when parsed from text): relative paths among the
  // options are relative to it.
  std::string base_dir;
};

// [compute]: the CPU executor's pool, separate from the I/O threads.
struct ComputeConfig {
  // The compute team (oneDNN is told the same number). 0 in the file, or the key left out:
  // every core this process may run on (usable_cores()), as llama.cpp and oneDNN default to;
  // load_config() resolves it, so users of a loaded Config always see >= 1.
  int threads = 0;
  bool threads_from_cores = false;  // set by load_config() when it resolved 0
};

// The cores this process may run on: its CPU affinity mask, capped by a cgroup v2 CPU quota
// (cpu.max, rounded up) where one is set, as found the first time it is asked. At least 1.
int usable_cores() noexcept;

// [auth.tenants.NAME]: one API key and what it may do.
struct TenantConfig {
  std::string name{};
  // Lowercase hex SHA-256 of the key (`printf %s "$KEY" | sha256sum`). A plain `key = "..."`
  // in the file is hashed as it is read: the key itself is never kept or logged.
  std::string key_sha256{};
  std::vector<std::string> models{};  // models the key may use; empty: all
  std::uint32_t max_concurrent = 0;  // its requests in flight at once; 0: no limit
  double requests_per_s = 0;         // its sustained request rate; 0: no limit
  std::uint32_t burst = 0;           // requests allowed at once above the rate; 0: the rate
};

// [auth]: API keys (`Authorization: Bearer <key>`). Without tenants no key is asked for.
struct AuthConfig {
  std::vector<TenantConfig> tenants;
  // A TOML file of more [tenants.NAME] tables (relative to the config file), so keys can live
  // apart from the config, e.g. in a Kubernetes Secret.
  std::string keys_file;
  // Paths served without a key: health probes and the Prometheus scrape.
  std::vector<std::string> public_paths = {"/v2/health/live", "/v2/health/ready", "/metrics"};
};

struct Config {
  ServerConfig server;
  AuthConfig auth;
  LogConfig log;
  ComputeConfig compute;
  CacheConfig cache;
  std::vector<ModelConfig> models;
};

// Reads a TOML file; relative `weights` paths are made relative to the file's directory.
// Every field is optional (defaults above); an unknown key or a value of
// the wrong type is an error naming the key ("server.prot: unknown key").
Status load_config(const std::filesystem::path& path, Config& out);
Status parse_config(std::string_view toml_text, Config& out);

// Drops every model whose name is not in `names` (an empty list keeps them all); a name that
// is no model of the config is an error naming it. coinfer-serve's --model.
Status keep_only_models(const std::vector<std::string>& names, Config& config);

// The effective configuration as TOML, for the start-up log.
std::string to_toml(const Config& config);

}  // namespace coinfer
