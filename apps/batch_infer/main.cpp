// coinfer-batch: offline batch inference over a data set, with the server's models and
// executors. Rows stream from a file or S3 objects (JSONL, CSV, .npy) or a PostgreSQL query
// through parallel preprocessing and large batches to chunked, atomically committed outputs
// (JSONL or .npy files, locally or in S3, or a PostgreSQL table). Memory stays bounded whatever the input's size; --resume
// continues a run that was killed, writing every row exactly once; --shard i/N splits the
// rows among N processes.
//
//   coinfer-batch --model digits --input digits.jsonl --field pixels --output out/
//   coinfer-batch --model minilm --input docs.csv --columns body --id-field doc_id
//                 --output emb/ --output-format npy
//   coinfer-batch --model minilm --input postgresql:///corpus
//                 --query "SELECT id, body FROM docs ORDER BY id" --columns body --id-field id
//                 --output postgresql:///corpus --table emb
//   coinfer-batch --model digits --input s3://data/digits/ --field pixels --output s3://data/out/
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "coinfer/core/config.hpp"
#include "coinfer/generation/grammar/sources.hpp"
#include "coinfer/offline/pipeline.hpp"
#include "coinfer/offline/postgres.hpp"
#include "coinfer/offline/s3.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/generation_endpoint.hpp"
#include "coinfer/serving/model_loader.hpp"

using namespace coinfer;
using namespace coinfer::offline;

namespace {

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto total = static_cast<long long>(s + 0.5);
  char out[32];
  std::snprintf(out, sizeof out, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  return out;
}

std::string count_text(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "rows 120,000 / 1,000,000 (12.0%)  41,733 rows/s  ETA 0:00:21"
std::string progress_line(const JobProgress& p, double elapsed) {
  const double rate = elapsed > 0 ? static_cast<double>(p.rows_done) / elapsed : 0;
  double fraction = -1;
  std::string line = "rows " + count_text(p.rows_done);
  if (p.rows_expected >= 0) {
    line += " / " + count_text(p.rows_expected);
    fraction = p.rows_expected ? static_cast<double>(p.rows_done) / static_cast<double>(p.rows_expected) : 1;
  } else if (p.fraction_read >= 0) {
    fraction = p.fraction_read;
  }
  char tail[128];
  if (fraction >= 0) {
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : NAN;
    std::snprintf(tail, sizeof tail, " (%.1f%%)  %s rows/s  ETA %s", 100 * fraction,
                  count_text(static_cast<std::int64_t>(rate)).c_str(), duration_text(eta).c_str());
  } else {
    std::snprintf(tail, sizeof tail, "  %s rows/s", count_text(static_cast<std::int64_t>(rate)).c_str());
  }
  return line + tail;
}

// " json_schema=<FNV-1a of its bytes>", or nothing: a resumed job must use the same schema.
std::string schema_identity(const std::string& schema) {
  if (schema.empty()) return {};
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : schema) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  char text[40];
  std::snprintf(text, sizeof text, " json_schema=%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_compute_wait_policy(argv, ComputeWait::passive);
  CLI::App cli{"coinfer-batch: offline batch inference (JSONL, CSV, .npy; files, S3, PostgreSQL)"};
  std::string config_path = "configs/default.toml", model_name, input, format = "auto", query;
  std::string output, output_format = "jsonl", table, shard_text = "0/1", progress = "auto";
  JobOptions options;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.workers = cores;
  int compute_threads = 0;  // 0: the config's [compute] threads
  bool json_summary = false, truncate = false;
  GenerationOptions generation;
  cli.add_option("--config", config_path, "TOML config with the model's [models.NAME] section")
      ->capture_default_str();
  cli.add_option("--model", model_name, "the model to run (a [models] entry of the config)")->required();
  cli.add_option("--input", input,
                 "a .jsonl, .csv or .npy file, an S3 object or prefix (s3://bucket/key, s3://bucket/prefix/), "
                 "or a PostgreSQL connection string")
      ->required();
  cli.add_option("--format", format, "input format: auto (by extension), jsonl, csv, npy")
      ->check(CLI::IsMember({"auto", "jsonl", "csv", "npy"}))
      ->capture_default_str();
  cli.add_option("--field", options.decode.field,
                 "JSONL: the field holding each row's numbers (an array) or text");
  cli.add_option("--columns", options.decode.columns,
                 "CSV / PostgreSQL: the columns of each row's numbers (default: all but the id), "
                 "or its text column")
      ->delimiter(',');
  cli.add_option("--id-field", options.decode.id_field,
                 "the field or column holding each row's id (default: the row's index)");
  cli.add_option("--query", query, "PostgreSQL input: the query (give it an ORDER BY)");
  cli.add_option("--output", output, "a directory, an S3 prefix (s3://bucket/prefix/), or a PostgreSQL connection string")
      ->required();
  cli.add_option("--output-format", output_format, "files: jsonl, or npy (one array per output)")
      ->check(CLI::IsMember({"jsonl", "npy"}))
      ->capture_default_str();
  cli.add_option("--table", table, "PostgreSQL output: the results table (created if missing)");
  cli.add_flag("--resume", options.resume, "continue the job the output holds (skip committed chunks)");
  cli.add_option("--shard", shard_text, "i/N: process the i-th of N interleaved parts of the rows")
      ->capture_default_str();
  cli.add_option("--chunk-rows", options.chunk_rows, "rows per committed chunk")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  cli.add_option("--batch-size", options.batch_size,
                 "rows per forward (default: the model's max_batch_size; also sizes its scratch)")
      ->check(CLI::Range(1, 65536));
  cli.add_option("--workers", options.workers, "preprocess threads (parse, tokenize)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cli.add_option("--compute-threads", compute_threads,
                 "threads of the CPU executor's GEMMs (default: the config's [compute] threads)")
      ->check(CLI::Range(1, 256));
  cli.add_option("--max-error-rate", options.max_error_rate,
                 "abort when more than this share of rows fail (0..1; 1 = never)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cli.add_option("--progress", progress, "auto (a live line on a terminal, else log lines), bar, lines, off")
      ->check(CLI::IsMember({"auto", "bar", "lines", "off"}))
      ->capture_default_str();
  cli.add_flag("--truncate", truncate,
               "text models: cut texts longer than max_input_tokens (else they are dead letters)");
  cli.add_option("--max-tokens", generation.max_tokens,
                 "language models: tokens generated per row (greedy)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cli.add_flag("--chat", generation.chat,
               "language models: each row's text is a user message in the chat template");
  cli.add_option("--concurrency", generation.concurrency,
                 "language models: generations in flight at once (continuous batching)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  std::string json_schema_path;
  cli.add_option("--json-schema", json_schema_path,
                 "language models: every row's output follows this JSON schema (a file)");
  cli.add_flag("--json", json_summary, "also print the summary as one JSON line on stdout");
  client::S3Options s3_options;
  std::string s3_addressing = "auto";
  double s3_range_mib = 8;
  S3SinkOptions s3_sink;
  cli.add_option("--s3-endpoint", s3_options.endpoint,
                 "S3-compatible store (http[s]://HOST[:PORT]; default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS)");
  cli.add_option("--s3-region", s3_options.region, "S3 region (default: AWS_REGION, the profile's, us-east-1)");
  cli.add_option("--s3-profile", s3_options.profile, "a profile of ~/.aws/credentials (default: AWS_PROFILE, default)");
  cli.add_option("--s3-ca-file", s3_options.ca_file, "HTTPS: a PEM CA bundle to verify the S3 endpoint with");
  cli.add_option("--s3-addressing", s3_addressing,
                 "auto (path-style for an IP address or localhost, else virtual-hosted), path, virtual")
      ->check(CLI::IsMember({"auto", "path", "virtual"}))
      ->capture_default_str();
  cli.add_option("--s3-range-mib", s3_range_mib, "S3 input: MiB per ranged GET (two in memory per input)")
      ->check(CLI::Range(0.0625, 1024.0))
      ->capture_default_str();
  cli.add_option("--s3-lock-ttl", s3_sink.lock_ttl_s,
                 "S3 output: seconds after which a writer's lock that was not renewed is stale")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = cli.exit(e);  // prints help, or the error and a hint
    return code == 0 ? 0 : 2;
  }

  auto fail = [](int code, const std::string& message) {
    std::fprintf(stderr, "coinfer-batch: %s\n", message.c_str());
    return code;
  };
  if (std::sscanf(shard_text.c_str(), "%d/%d", &options.shard, &options.shards) != 2 ||
      options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    return fail(2, "--shard: expected i/N with 0 <= i < N, got '" + shard_text + "'");

  Config config;
  if (auto status = load_config(config_path, config); !status.ok()) return fail(2, status.message());
  const ModelConfig* found = nullptr;
  for (const auto& m : config.models)
    if (m.name == model_name) found = &m;
  if (!found) return fail(2, "--model: no model '" + model_name + "' in " + config_path);
  ModelConfig model_config = *found;
  if (options.batch_size > 0) model_config.max_batch_size = options.batch_size;

  // One S3 client for the input and the output.
  std::shared_ptr<client::S3Client> s3;
  if (is_s3_url(input) || is_s3_url(output)) {
    s3_options.addressing = s3_addressing == "path"      ? client::S3Addressing::path
                            : s3_addressing == "virtual" ? client::S3Addressing::virtual_host
                                                         : client::S3Addressing::automatic;
    std::unique_ptr<client::S3Client> made;
    if (auto status = client::S3Client::open(s3_options, made); !status.ok()) return fail(2, status.message());
    s3 = std::move(made);
  }

  // The source.
  std::unique_ptr<RowSource> source;
  std::string input_id = input;
  if (is_s3_url(input)) {
    const auto range = static_cast<std::uint64_t>(s3_range_mib * (1 << 20));
    if (auto status = open_s3_source(s3, input, format, range, source, input_id); !status.ok())
      return fail(2, status.message());
  } else if (is_postgres_connection(input)) {
    if (auto status = open_postgres_source(input, query, source); !status.ok()) return fail(2, status.message());
    input_id = without_secrets(input) + " query=" + query;
  } else {
    std::filesystem::path path(input);
    if (format == "auto") {
      const std::string ext = path.extension().string();
      if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") format = "jsonl";
      else if (ext == ".csv") format = "csv";
      else if (ext == ".npy") format = "npy";
      else return fail(2, "--input: cannot tell the format of '" + input + "' (use --format)");
    }
    Status status = format == "jsonl" ? open_jsonl(path, source)
                    : format == "csv" ? open_csv(path, source)
                                      : open_npy(path, source);
    if (!status.ok()) return fail(2, status.message());
    // The file's size and modification time are part of the job: a resumed run over a file
    // that changed would mix rows of two inputs.
    std::error_code ec;
    input_id = std::filesystem::absolute(path, ec).lexically_normal().string();
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
      input_id += " size=" + std::to_string(st.st_size) + " mtime=" + std::to_string(st.st_mtim.tv_sec) +
                  "." + std::to_string(st.st_mtim.tv_nsec);
  }

  // The model, on the CPU executor or its own device executor; a language model on its engine.
  const int threads = compute_threads > 0 ? compute_threads : config.compute.threads;
  // A batch job needs the model: not installed is an error, not a warning.
  std::erase_if(model_config.options,
                [](const auto& option) { return option.first == "optional"; });
  LoadedServable loaded;
  if (auto status = load_servable(model_config, threads, loaded); !status.ok())
    return fail(2, status.message());
  if (loaded.empty())
    return fail(2, "--model: '" + model_name + "': its weights are not installed");
  const bool language_model = loaded.generator != nullptr;
  std::unique_ptr<GenerationEndpoint> generation_endpoint;
  std::unique_ptr<CpuExecutor> cpu;
  JobModel job_model;
  if (!json_schema_path.empty()) {
    if (!language_model) return fail(2, "--json-schema: only for language models");
    std::ifstream file(json_schema_path, std::ios::binary);
    if (!file) return fail(2, "--json-schema: cannot read '" + json_schema_path + "'");
    generation.json_schema.assign(std::istreambuf_iterator<char>(file), {});
    // Checked once here, not as a dead letter on every row.
    generation::grammar::Grammar grammar;
    if (auto status = generation::grammar::json_schema_grammar(generation.json_schema, grammar); !status.ok())
      return fail(2, "--json-schema: " + std::string(status.message()));
  }
  if (language_model) {
    generation_endpoint = std::make_unique<GenerationEndpoint>(model_name, model_config.version,
                                                               std::move(loaded.generator));
    job_model.generator = generation_endpoint.get();
    job_model.generation = generation;
    job_model.name = model_name;
  } else {
    if (truncate && loaded.model.text) loaded.model.text->truncate = true;
    cpu = std::make_unique<CpuExecutor>(threads);
    job_model.model = loaded.model.model;
    job_model.executor =
        loaded.model.device_executor ? loaded.model.device_executor.get() : cpu.get();
    job_model.text = loaded.model.text;
  }

  // The sink.
  std::unique_ptr<ResultSink> sink;
  if (is_postgres_connection(output)) {
    if (auto status = open_postgres_sink(output, table, sink); !status.ok()) return fail(2, status.message());
  } else if (is_s3_url(output)) {
    if (auto status = open_s3_sink(s3, output, output_format == "npy" ? FileFormat::npy : FileFormat::jsonl,
                                   s3_sink, sink);
        !status.ok())
      return fail(2, status.message());
  } else {
    (void)open_file_sink(output, output_format == "npy" ? FileFormat::npy : FileFormat::jsonl, sink);
  }

  // The job's identity: what a resumed run must match.
  std::string columns;
  for (const auto& c : options.decode.columns) columns += (columns.empty() ? "" : ",") + c;
  options.description = "input=" + input_id + " model=" + model_name + " version=" +
                        model_config.version + " field=" + options.decode.field +
                        " columns=" + columns + " id=" + options.decode.id_field +
                        (truncate ? " truncate=true" : "") +
                        (language_model ? " max_tokens=" + std::to_string(generation.max_tokens) +
                                              (generation.chat ? " chat=true" : "") +
                                              schema_identity(generation.json_schema)
                                        : "") +
                        " output=" + (sink && !is_postgres_connection(output) ? output_format : "postgresql");

  const bool tty = ::isatty(STDERR_FILENO);
  const bool bar = progress == "bar" || (progress == "auto" && tty);
  const bool lines = progress == "lines" || (progress == "auto" && !tty);
  std::function<void(const JobProgress&, double)> on_progress;
  if (bar) {
    on_progress = [](const JobProgress& p, double elapsed) {
      std::fprintf(stderr, "\r\033[K%s", progress_line(p, elapsed).c_str());
      std::fflush(stderr);
    };
  } else if (lines) {
    on_progress = [](const JobProgress& p, double elapsed) {
      std::fprintf(stderr, "coinfer-batch: %s\n", progress_line(p, elapsed).c_str());
    };
  }

  JobSummary summary;
  Status status = run_job(*source, job_model, *sink, options, summary, on_progress, bar ? 0.25 : 10.0);
  if (bar && summary.started) std::fprintf(stderr, "\n");
  if (!summary.started) return fail(2, status.message());  // options the input or output refused

  // The summary: totals, then where the time went (the busiest stage bounds the run).
  const double rate = summary.wall_s > 0 ? static_cast<double>(summary.rows) / summary.wall_s : 0;
  std::fprintf(stderr, "coinfer-batch: %s rows in %.2f s (%s rows/s): %s results, %s failed%s\n",
               count_text(summary.rows).c_str(), summary.wall_s,
               count_text(static_cast<std::int64_t>(rate)).c_str(), count_text(summary.results).c_str(),
               count_text(summary.errors).c_str(),
               summary.earlier.rows ? (", " + count_text(summary.earlier.rows) + " rows done by earlier runs").c_str() : "");
  for (const StageTime* s : {&summary.read, &summary.preprocess, &summary.compute, &summary.write})
    std::fprintf(stderr, "  %-10s %8.2f s busy  %5.1f%% of %d thread%s%s\n", s->name, s->busy_s,
                 100 * s->utilization(summary.wall_s), s->threads, s->threads == 1 ? "" : "s",
                 s == &summary.bound() ? "  <- bounds the run" : "");
  std::fprintf(stderr, "  compute waited %.2f s for input\n", summary.compute_starved_s);
  if (!summary.first_error.empty())
    std::fprintf(stderr, "  first failed row: %s\n", summary.first_error.c_str());
  if (s3) {
    const auto st = s3->stats();
    std::fprintf(stderr, "  s3: %llu requests (%llu retried), %.1f MiB in, %.1f MiB out\n",
                 static_cast<unsigned long long>(st.requests), static_cast<unsigned long long>(st.retries),
                 static_cast<double>(st.bytes_in) / (1 << 20), static_cast<double>(st.bytes_out) / (1 << 20));
  }
  if (json_summary) {
    std::printf(
        "{\"rows\":%lld,\"results\":%lld,\"errors\":%lld,\"seconds\":%.4f,\"rows_per_s\":%.1f,"
        "\"read_s\":%.4f,\"preprocess_s\":%.4f,\"compute_s\":%.4f,\"write_s\":%.4f,"
        "\"compute_starved_s\":%.4f,\"bound\":\"%s\",\"ok\":%s}\n",
        static_cast<long long>(summary.rows), static_cast<long long>(summary.results),
        static_cast<long long>(summary.errors), summary.wall_s, rate, summary.read.busy_s,
        summary.preprocess.busy_s, summary.compute.busy_s, summary.write.busy_s,
        summary.compute_starved_s, summary.bound().name, status.ok() ? "true" : "false");
  }
  if (!status.ok()) return fail(1, status.message());
  return 0;
}
